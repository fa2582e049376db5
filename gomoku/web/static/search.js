// The PUCT search of mcts/search.py for one game, on typed arrays: the same selection, expansion,
// backup, forced-move rules and tree reuse, so that with the same evaluator it gives the same
// visit counts as the Python search (tests/test_web.py checks this).
//
// Values are from the point of view of the player to move in the position they belong to. An
// edge's Q = W / N is for the player choosing it; a leaf's value v is backed up as -v on the last
// edge, +v on the one before, and so on. Selection: argmax Q + c_puct * P * sqrt(N(s)) / (1 + N(s,a))
// with Q = 0 on unvisited edges and ties to the lowest move; N(s) counts the visit that expanded the
// node. A fresh root is expanded by the first playout.
//
// Forced moves (on by default, as in the Python player): a position whose player to move can
// complete a line is worth +1 exactly and is not expanded (at the root only the winning moves are
// searched); otherwise, when the opponent could complete a line, only the points that stop it are
// searched. VCF (`vcf`, on by default as in the Python player; needs forced moves): a position
// whose player to move has a win by continuous fours (threats.js) is worth +1 exactly and not
// expanded; at the root only its first move is searched, and when the opponent would have one,
// only the moves after which they have none (all moves when none does). VCT (`vct`, on by default
// as in the Python player; needs `vcf`, else off): the root's rules of gomoku/tactics/rules.py with the VCT
// solver (vct.js: continuous fours and threes, `vctNodes` nodes a solve) in place of the VCF
// solver: when the player to move has a VCT only its first move is searched, and when the opponent
// would have one, only the moves after which they have none. With `vctLeafDepth` (2 by default, the
// Python az player's; 0 off) a leaf 2 to `vctLeafDepth` moves down whose player to move has a VCT
// within VCT_LEAF_NODES nodes is worth +1 and not expanded.
(function (root) {
  "use strict";
  const G = (root.Gomoku = root.Gomoku || {});

  const NO_CHILD = -1;
  const ILLEGAL_VALUE_SUM = -1e9;
  const CAPACITY_PER_PLAYOUT = 3;
  const VCF_CACHE_SIZE = 50000;  // solver answers remembered per search (cleared when full)
  const VCT_LEAF_NODES = 200;  // the VCT solver's budget at a leaf (gomoku/tactics/rules.py's)

  // The Python AlphaZero player's defaults (gomoku/players/search.py).
  const DEFAULTS = Object.freeze({ nPlayout: 400, cPuct: 5.0, forcedMoves: true, vcf: true,
    vcfNodes: 200, vct: true, vctNodes: G.VCT_DEFAULT_NODES, vctLeafDepth: 2, reuseTree: true });

  /** Every point, most visited first; ties go to the higher prior, then the lower index (the order
   *  SearchResult.ranked_moves gives in mcts/result.py: the move played, the final check's order). */
  function rankedMoves(visits, priors) {
    return Array.from(visits.keys()).sort((a, b) => visits[b] - visits[a] || priors[b] - priors[a] || a - b);
  }

  class Search {
    /**
     * evaluator: {evaluate(cells, toMove, lastMove, legal) -> {priors, value}} where cells is an
     * Int8Array of the points (0 empty, 1 first player, 2 second), legal a Uint8Array mask, priors
     * a Float64Array over all points (0 off the mask, summing to 1) and value in [-1, 1] for toMove.
     */
    constructor(evaluator, width = 9, height = 9, nInRow = 5, config = {}) {
      this.evaluator = evaluator;
      this.config = Object.assign({}, DEFAULTS, config);
      if (!(this.config.nPlayout >= 1)) throw new Error("nPlayout must be >= 1");
      this.lines = G.linesOf(width, height, nInRow);
      this.width = width;
      this.height = height;
      this.nInRow = nInRow;
      const S = (this.size = width * height);
      this.capacity = CAPACITY_PER_PLAYOUT * this.config.nPlayout + 2;
      const cells = this.capacity * S;
      this.prior = new Float64Array(cells);
      this.visits = new Float64Array(cells);
      this.valueSum = new Float64Array(cells);
      this.children = new Int32Array(cells).fill(NO_CHILD);
      this.nodeVisits = new Float64Array(this.capacity);
      this.nNodes = 0;
      this.rootMoves = [];
      this.rootCells = new Int8Array(S);
      if (this.config.vcf && !this.config.forcedMoves) throw new Error("vcf needs forcedMoves");
      this.threats = this.config.vcf && nInRow >= 3 ? new G.Threats(this.lines, this.config.vcfNodes) : null;
      // VCT needs VCF; a rule whose prerequisite is off is off (SearchConfig.of), the leaf checks too.
      const useVct = this.config.vct && this.threats !== null;
      this.vct = useVct ? new G.Vct(this.lines, this.config.vctNodes, this.config.vcfNodes) : null;
      this.vctLeafDepth = useVct ? this.config.vctLeafDepth : 0;
      this.vctLeaf = this.vctLeafDepth >= 2 ? new G.Vct(this.lines, VCT_LEAF_NODES, this.config.vcfNodes) : null;
      this.vcfCache = new Map();
      this.vctCache = new Map();
      this.vctLeafCache = new Map();
      this.defenceCache = new Map();  // root position -> the moves that stop the opponent's VCF (VCT)
    }

    reset() {
      this.nNodes = 0;
      this.rootMoves = [];
    }

    /**
     * Run `nPlayout` playouts (default: the config's) from the position after `moves`, reusing the
     * matching subtree of the last search. onProgress(result), when given, is called every
     * `round` playouts; the playouts are the same as in one call.
     */
    search(moves, nPlayout = this.config.nPlayout, onProgress = null, round = 50) {
      if (!(nPlayout >= 1 && nPlayout <= this.config.nPlayout)) {
        throw new Error(`nPlayout must be in 1..${this.config.nPlayout}`);
      }
      this._setRoot(moves.slice());
      if (this.threats && this.nNodes > 0) this._dropRootWithOtherMoves();
      let remaining = nPlayout;
      if (this.nNodes === 0) {
        this._expandRoot();
        remaining--;
      }
      let sinceReport = nPlayout - remaining;
      while (remaining > 0) {
        this._playout();
        remaining--;
        if (onProgress && ++sinceReport >= round && remaining > 0) {
          sinceReport = 0;
          onProgress(this.result(nPlayout - remaining));
        }
      }
      return this.result(nPlayout);
    }

    /** The root's statistics: visits and priors (Float64Array), value, best move (rankedMoves' first). */
    result(playouts) {
      const S = this.size;
      const visits = this.visits.slice(0, S), priors = this.prior.slice(0, S);
      let total = 0, sum = 0;
      for (let m = 0; m < S; m++) {
        if (visits[m] > 0) {
          total += visits[m];
          sum += this.valueSum[m];
        }
      }
      return { visits, priors, value: total ? sum / total : 0, playouts, bestMove: rankedMoves(visits, priors)[0] };
    }

    // ---------------------------------------------------------------- roots
    _setRoot(moves) {
      const S = this.size, old = this.rootMoves;
      let node = this.nNodes > 0 && this.config.reuseTree ? 0 : NO_CHILD;
      const prefix = old.length <= moves.length && old.every((m, i) => moves[i] === m);
      if (node === 0 && prefix) {
        for (let i = old.length; i < moves.length; i++) {
          node = this.children[node * S + moves[i]];
          if (node === NO_CHILD) break;
        }
      } else {
        node = NO_CHILD;
      }
      if (node === NO_CHILD) this.nNodes = 0;
      else if (moves.length === old.length) {  // the same position again: its tree grows while another search fits
        if (this.nNodes + this.config.nPlayout + 1 > this.capacity) this.nNodes = 0;
      } else this._compact(node);
      this.rootMoves = moves;
      this.rootCells.fill(0);
      moves.forEach((m, i) => { this.rootCells[m] = i % 2 === 0 ? 1 : 2; });
      const last = moves.length ? moves[moves.length - 1] : -1;
      if (moves.length === S ||
          (last >= 0 && G.winsAt(this.lines, this.rootCells, last, this.rootCells[last]))) {
        throw new Error("cannot search a position where the game has ended");
      }
    }

    /** Keep only the subtree under `newRoot`, renumbered from slot 0 (breadth first). */
    _compact(newRoot) {
      const S = this.size;
      const order = [newRoot];
      for (let i = 0; i < order.length; i++) {
        const base = order[i] * S;
        for (let m = 0; m < S; m++) if (this.children[base + m] !== NO_CHILD) order.push(this.children[base + m]);
      }
      if (order.length + this.config.nPlayout + 1 > this.capacity) {
        this.nNodes = 0;  // does not fit: a fresh tree, as the Python search does
        return;
      }
      const remap = new Int32Array(this.capacity).fill(NO_CHILD);
      order.forEach((old, i) => { remap[old] = i; });
      const n = order.length;
      const copy = (array) => {
        const moved = new array.constructor(n * S);
        order.forEach((old, i) => moved.set(array.subarray(old * S, old * S + S), i * S));
        array.set(moved, 0);
      };
      copy(this.prior);
      copy(this.visits);
      copy(this.valueSum);
      copy(this.children);
      this.nodeVisits.set(Float64Array.from(order, (old) => this.nodeVisits[old]), 0);
      for (let i = 0; i < n * S; i++) {
        const child = this.children[i];
        if (child !== NO_CHILD) this.children[i] = remap[child];
      }
      this.nNodes = n;
    }

    /** With VCF a root may search other moves than the inner node it was: then start afresh. */
    _dropRootWithOtherMoves() {
      const toMove = this.rootMoves.length % 2 === 0 ? 1 : 2;
      const { legal } = this.movesToSearch(this.rootCells, toMove, true);
      for (let m = 0; m < this.size; m++) {
        if (Boolean(legal[m]) !== this.valueSum[m] > ILLEGAL_VALUE_SUM / 2) {
          this.nNodes = 0;
          return;
        }
      }
    }

    _expandRoot() {
      const moves = this.rootMoves;
      const toMove = moves.length % 2 === 0 ? 1 : 2;
      const { legal } = this.movesToSearch(this.rootCells, toMove, true);
      const last = moves.length ? moves[moves.length - 1] : -1;
      const { priors } = this.evaluator.evaluate(this.rootCells, toMove, last, legal);
      this.nNodes = 0;
      this._newNode(priors, legal);
    }

    /**
     * {canWin, legal}: whether `toMove` wins by force here (a line to complete or, with `vcf`, a
     * VCF) and the moves a node there searches (the winning points; else the points that stop the
     * opponent's line; else every empty point), `root` adding the root's VCF rules (search only the
     * first move of our VCF; else only the moves after which the opponent has no VCF, when some
     * are), with `vct` the VCT rules (the same with VCTs); `depth` (moves from the root) adds the
     * VCT leaf checks. Without forced moves: {false, every empty point}. As
     * FreestyleRules.moves_to_search in gomoku/tactics/rules.py.
     */
    movesToSearch(cells, toMove, root = false, depth = 0) {
      const S = this.size, n = this.nInRow;
      const empty = new Uint8Array(S);
      let stones = 0;
      for (let m = 0; m < S; m++) {
        if (cells[m] === 0) empty[m] = 1;
        else stones++;
      }
      if (!this.config.forcedMoves) return { canWin: false, legal: empty };
      const most = Math.floor((stones + 1) / 2);  // the stones of the first player, who has the most
      let canWin = false, legal = empty, theirs = null;
      if (most >= n - 1) {  // a win in one needs n - 1 stones of one colour
        const points = G.winningPoints(this.lines, cells);
        const mine = points[toMove - 1];
        theirs = points[2 - toMove];
        if (mine.some((x) => x)) return { canWin: true, legal: mine };
        if (theirs.some((x) => x)) legal = theirs;
      }
      // A VCF starts with a four: n - 2 stones of one colour; a VCT may start one stone earlier
      // (its first move makes a three of a two).
      if (this.threats && most >= n - (this.vct ? 3 : 2)) {
        const only = (move) => {
          const one = new Uint8Array(S);
          one[move] = 1;
          return one;
        };
        if (this._hasThree(cells, toMove)) {
          const result = this._vcf(cells, toMove);
          if (result.status === G.VCF_WIN) return { canWin: true, legal: root ? only(result.move) : legal };
        }
        if (root && this.vct) {  // our VCT: search its first move only
          const result = this._solve(this.vct, this.vctCache, cells, toMove);
          if (result.status === G.VCF_WIN) return { canWin: true, legal: only(result.move) };
        }
        // Not when they have a four (blocking it is already the only move).
        if (root && !(theirs && theirs.some((x) => x))) legal = this._defend(cells, toMove, legal);
        if (this.vctLeaf && depth >= 2 && depth <= this.vctLeafDepth) {
          canWin = this._solve(this.vctLeaf, this.vctLeafCache, cells, toMove).status === G.VCF_WIN;
        }
      }
      return { canWin, legal };
    }

    /**
     * At a root: when the opponent would have a VCF (a VCT, with `vct`) were it their move, the
     * moves of `legal` that stop it (all of them when none does; FreestyleRules._defend).
     */
    _defend(cells, toMove, legal) {
      const S = this.size;
      const threat = this.vct ? this._solve(this.vct, this.vctCache, cells, 3 - toMove) : this._vcf(cells, 3 - toMove);
      if (threat.status !== G.VCF_WIN) return legal;
      const key = cells.join("");
      let stopping = this.defenceCache.get(key);
      if (!stopping) {
        const moves = [];
        for (let m = 0; m < S; m++) if (legal[m]) moves.push(m);
        const stops = (this.vct || this.threats).defences(cells, toMove, moves);
        stopping = moves.filter((m, i) => stops[i]);
        if (this.defenceCache.size >= VCF_CACHE_SIZE) this.defenceCache.clear();
        this.defenceCache.set(key, stopping);
      }
      if (!stopping.length) return legal;
      const restricted = new Uint8Array(S);
      for (const m of stopping) restricted[m] = 1;
      return restricted;
    }

    /** Whether `colour` has a three: a window with n - 2 of its stones and none of the other's. */
    _hasThree(cells, colour) {
      const target = this.nInRow - 2;
      for (const w of this.lines.windows) {
        let mine = 0, other = false;
        for (const p of w) {
          if (cells[p] === colour) mine++;
          else if (cells[p] !== 0) { other = true; break; }
        }
        if (!other && mine === target) return true;
      }
      return false;
    }

    /** The VCF solver's answer for `attacker` to move on `cells`, remembered per position. */
    _vcf(cells, attacker) {
      return this._solve(this.threats, this.vcfCache, cells, attacker);
    }

    /** `solver`'s answer for `attacker` to move on `cells`, remembered in `cache`. */
    _solve(solver, cache, cells, attacker) {
      const key = cells.join("") + attacker;
      let result = cache.get(key);
      if (!result) {
        if (cache.size >= VCF_CACHE_SIZE) cache.clear();
        result = solver.solve(cells, attacker);
        cache.set(key, result);
      }
      return result;
    }

    // ---------------------------------------------------------------- playouts
    _playout() {
      const S = this.size, c = this.config.cPuct;
      const { prior, visits, valueSum, children, nodeVisits } = this;
      const cells = this.rootCells.slice();
      const count = this.rootMoves.length;
      const path = [];
      let node = 0, depth = 0, move = -1, colour = 0;
      for (;;) {
        const base = node * S;
        const sqrtN = Math.sqrt(nodeVisits[node]);
        let best = -Infinity;
        move = -1;
        for (let m = 0; m < S; m++) {
          const n = visits[base + m];
          const score = valueSum[base + m] / (n > 1 ? n : 1) + (c * prior[base + m]) * (sqrtN / (1 + n));
          if (score > best) {
            best = score;
            move = m;
          }
        }
        visits[base + move] += 1;
        nodeVisits[node] += 1;
        colour = (count + depth) % 2 === 0 ? 1 : 2;
        cells[move] = colour;
        depth++;
        path.push(base + move);
        const child = children[base + move];
        if (child === NO_CHILD) break;
        node = child;
      }
      let value;
      if (G.winsAt(this.lines, cells, move, colour)) {
        value = -1;
      } else if (count + depth === S) {
        value = 0;
      } else {
        const toMove = 3 - colour;
        const { canWin, legal } = this.movesToSearch(cells, toMove, false, depth);
        if (canWin) {
          value = 1;  // a win in one (or a winning continuous four) for the player to move
        } else {
          const evaluation = this.evaluator.evaluate(cells, toMove, move, legal);
          value = evaluation.value;
          children[node * S + move] = this._newNode(evaluation.priors, legal);
        }
      }
      for (let level = 0; level < path.length; level++) {
        const sign = (depth - level) % 2 === 1 ? -1 : 1;
        valueSum[path[level]] += sign * value;
      }
    }

    _newNode(priors, legal) {
      const S = this.size, slot = this.nNodes++;
      if (slot >= this.capacity) throw new Error("search tree capacity exceeded");
      const base = slot * S;
      for (let m = 0; m < S; m++) {
        this.prior[base + m] = priors[m];
        this.visits[base + m] = 0;
        this.valueSum[base + m] = legal[m] ? 0 : ILLEGAL_VALUE_SUM;
        this.children[base + m] = NO_CHILD;
      }
      this.nodeVisits[slot] = 1;
      return slot;
    }
  }

  // The Python AlphaZero player's deep checks around its search (AlphaZeroPlayer in
  // gomoku/players/search.py; docs/threats.md): a VCT of its own found within CHECK_NODES nodes is
  // played at once, without a search; when the opponent, were it their move, has one (the final
  // check), the most visited moves (at most CHECK_CANDIDATES) are tried in turn and the first after
  // which it has none is played; when all of them are lost, the other visited moves are tried too,
  // until these extra checks have spent one candidate's budget in all. When that solve runs out of
  // budget the candidates are still tried, at CHECK_NODES / UNSETTLED_CHECK_DIVISOR nodes each. No
  // clock here: the checks run to their budget.
  const CHECK_NODES = 400000;
  const CHECK_CANDIDATES = 8;
  const UNSETTLED_CHECK_DIVISOR = 4;

  class AlphaZeroPlayer {
    /**
     * `search`: the player's Search (its tree kept between moves); `vct`: the player's VCT switch:
     * the checks run only where the search's VCT rules are on (off with its VCF or forced-move rules,
     * as in Python); `checkNodes`: the checks' budget (0 off).
     */
    constructor(search, vct = true, checkNodes = CHECK_NODES) {
      this.search = search;
      this.checkNodes = vct && search.vct !== null ? checkNodes : 0;
      this.checker = this.checkNodes ? new G.Vct(search.lines, this.checkNodes) : null;
    }

    /**
     * The search's result for the position after `moves` (Search.search's arguments), with the
     * checks: a proved VCT's first move with all the weight (no playouts), or the search's result
     * whose `bestMove` passes over the `refuted` moves (SearchPlayer.analyse).
     */
    analyse(moves, nPlayout, onProgress) {
      const search = this.search, size = search.size;
      const cells = new Int8Array(size);
      moves.forEach((m, i) => { cells[m] = i % 2 === 0 ? 1 : 2; });
      const me = moves.length % 2 === 0 ? 1 : 2;
      if (this.checker) {
        const win = this.checker.solve(cells, me);  // deep_win
        if (win.status === G.VCF_WIN) {  // proven_win
          const visits = new Float64Array(size);
          visits[win.move] = 1;
          return { visits, priors: visits.slice(), value: 1, playouts: 0, bestMove: win.move, refuted: [] };
        }
      }
      const nodes = this._finalCheckNodes(cells, me);
      const result = Object.assign(search.search(moves, nPlayout, onProgress), { refuted: [] });
      if (nodes) this._finalCheck(cells, me, result, nodes);
      return result;
    }

    /** The final check's budget a candidate: 0 when the opponent has no VCT (final_check_nodes). */
    _finalCheckNodes(cells, me) {
      if (!this.checker) return 0;
      const status = this.checker.solve(cells, 3 - me).status;
      if (status === G.VCF_WIN) return this.checkNodes;
      if (status === G.VCF_UNKNOWN) return Math.max(1, Math.floor(this.checkNodes / UNSETTLED_CHECK_DIVISOR));
      return 0;
    }

    /**
     * Pass over the most visited moves after which the opponent has a VCT found within `nodes`, to
     * the first after which it has none: the first CHECK_CANDIDATES, then, when all of them are lost,
     * the other visited moves until these extra checks have spent `nodes` in all (none found: the
     * most visited move stays; final_check).
     */
    _finalCheck(cells, me, result, nodes) {
      const ranked = rankedMoves(result.visits, result.priors).filter((m) => result.visits[m] > 0);
      if (ranked.length <= 1 || G.winningPoints(this.search.lines, cells)[me - 1][ranked[0]]) return;
      const board = Int8Array.from(cells);
      let extra = 0;  // the nodes of the checks past the first CHECK_CANDIDATES
      for (let i = 0; i < ranked.length && (i < CHECK_CANDIDATES || extra < nodes); i++) {
        const found = this.checker.after(board, me, ranked[i], nodes);
        if (i >= CHECK_CANDIDATES) extra += found.nodes;
        if (found.status !== G.VCF_WIN) {
          if (i > 0) {
            result.refuted = ranked.slice(0, i);
            result.bestMove = ranked[i];
          }
          return;
        }
      }
    }
  }

  /** Uniform priors over the legal moves and value 0 (tests, and a search with no net). */
  class UniformEvaluator {
    evaluate(cells, toMove, lastMove, legal) {
      let count = 0;
      for (let m = 0; m < legal.length; m++) count += legal[m];
      const priors = new Float64Array(legal.length);
      for (let m = 0; m < legal.length; m++) if (legal[m]) priors[m] = 1 / count;
      return { priors, value: 0 };
    }
  }

  Object.assign(G, { Search, SEARCH_DEFAULTS: DEFAULTS, VCT_LEAF_NODES, AlphaZeroPlayer, CHECK_NODES,
    UniformEvaluator, rankedMoves });
})(typeof globalThis !== "undefined" ? globalThis : self);

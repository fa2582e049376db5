// An exact, bounded VCT ("victory by continuous threats": fours and threes) solver, a port of
// gomoku/tactics/vct.py that gives its answers node for node (tests/test_web.py). The rules, freestyle, with a
// *five point* of a colour an empty point where its stone completes a line:
// - the attacker to move wins at once with a five point; otherwise, when the defender has a five
//   point, the attacker must take it (two cannot both be taken), and that block must be a threat;
// - a threat is an attacking move judged by the position after it: a four leaves the attacker one
//   five point (the defender's one reply: take it), a double two or more (the attack wins), a three
//   none but a *three point* (an empty point where the attacker's next stone makes a double);
// - the defender answers a three with every *defence* (a point after which the attacker has no
//   three point left) and every counter-four (a stone making a four of its own); the attack must
//   win against each. Any other attacking move ends the attack. NO_WIN: no VCT, not "no win".
// The search: the VCF search (threats.js) first, then proof-number search over the AND/OR DAG
// (OR: the attacker to move, its children its threats; AND: the defender to move, its children its
// replies): every node is kept under its position's Zobrist key, and a move to a position already
// there links to its node. A node is an attacking move judged or a defender's reply made into a
// node (a link costs none); the VCF checks' nodes count too. The state is
// threats.js's line bookkeeping (`wide`: it also tracks the attacker's twos and the defender's threes).
(function (root) {
  "use strict";
  const G = (root.Gomoku = root.Gomoku || {});
  const { ATTACKER_FOUR, ATTACKER_TWO, DEFENDER_THREE } = G.WINDOW_CLASS;

  const DEFAULT_VCT_NODES = 1000;  // node budget of one solve (gomoku.tactics.vct.DEFAULT_VCT_NODES)
  const INFINITE = 2 ** 40;  // the proof or disproof number of a solved node (sums stay exact)
  const LARGEST = INFINITE - 1;  // the cap of a sum of unsolved nodes' numbers
  const LEAF_VCF_NODES = 40;  // the VCF check's budget at each new position of the attacker's to move

  /**
   * A node of the proof-number DAG (gomoku/tactics/vct.py's _Node). OR nodes (attacker to move, even depths)
   * are reached by defender's moves; AND nodes by attacking moves, with the `replies` to search.
   * `children` is null until expanded; then `moves[i]` leads to `children[i]`.
   */
  function newNode(pn, dn, replies = null) {
    return { pn, dn, replies, children: null, moves: [] };
  }

  /**
   * The index of the child a most-proving descent chooses by `field` (the first of the smallest), and
   * the limit below which that number keeps it chosen: under every earlier one, at most every later
   * one (gomoku/tactics/vct.py's _choice).
   */
  function choice(nodes, field) {
    let index = 0;
    nodes.forEach((node, i) => { if (node[field] < nodes[index][field]) index = i; });
    let limit = INFINITE + 1;
    nodes.forEach((node, i) => {
      if (i < index) limit = Math.min(limit, node[field]);
      else if (i > index) limit = Math.min(limit, node[field] + 1);
    });
    return [index, limit];
  }

  /**
   * Proof and disproof numbers of an expanded node from its children's: exactly [0, INFINITE] or
   * [INFINITE, 0] once solved, a sum otherwise capped at LARGEST (gomoku/tactics/vct.py's _update).
   */
  function updateNumbers(node, orNode) {
    const children = node.children;
    if (children === null) return;
    if (!children.length) {
      [node.pn, node.dn] = orNode ? [INFINITE, 0] : [0, INFINITE];
      return;
    }
    let pnMin = Infinity, dnMin = Infinity, pnSum = 0, dnSum = 0;
    for (const child of children) {
      pnMin = Math.min(pnMin, child.pn);
      dnMin = Math.min(dnMin, child.dn);
      pnSum += child.pn;
      dnSum += child.dn;
    }
    if (orNode) {
      if (pnMin === 0) [node.pn, node.dn] = [0, INFINITE];
      else [node.pn, node.dn] = dnSum ? [pnMin, Math.min(dnSum, LARGEST)] : [INFINITE, 0];
    } else if (dnMin === 0) [node.pn, node.dn] = [INFINITE, 0];
    else [node.pn, node.dn] = pnSum ? [Math.min(pnSum, LARGEST), dnMin] : [0, INFINITE];
  }

  const sortedPoints = (points) => Array.from(points).sort((a, b) => a - b);

  class Vct extends G.Threats {
    /** VCT searches on one board shape (`lines`); one instance serves any number of positions. */
    constructor(lines, maxNodes = DEFAULT_VCT_NODES, vcfNodes = G.VCF_DEFAULT_MAX_NODES) {
      super(lines, maxNodes || DEFAULT_VCT_NODES, true);
      this.vcfNodes = vcfNodes;
      this.table = new Map();  // the nodes of the current solve, by position key
    }

    /** Whether `attacker` (1 or 2), to move in `cells`, has a VCT: {status, move, nodes} (VctSolver.solve). */
    solve(cells, attacker, maxNodes) {
      this.load(cells, attacker);
      this.budget = maxNodes || this.maxNodes;
      this.nodes = 0;
      this.refuted = new Set();
      const root = newNode(1, 1);
      try {
        const move = this._quick(Math.min(this.budget, this.vcfNodes));
        if (move >= 0) return { status: G.VCF_WIN, move, nodes: this.nodes };
        this.table = new Map([[this._keyString(), root]]);
        this._prove(root);
      } catch (error) {
        if (error instanceof G.BudgetExhausted) return { status: G.VCF_UNKNOWN, move: -1, nodes: this.nodes };
        throw error;
      } finally {
        this.table = new Map();
      }
      if (root.pn === 0) {
        const move = root.moves[root.children.findIndex((child) => child.pn === 0)];
        return { status: G.VCF_WIN, move, nodes: this.nodes };
      }
      return { status: G.VCF_NO_WIN, move: -1, nodes: this.nodes };
    }

    /**
     * For `defender` to move in `cells`: which of `moves` (empty points that do not complete a line)
     * leave the opponent without a VCT, one boolean a move; out of budget counts as a defence.
     */
    defences(cells, defender, moves, maxNodes) {
      const copy = Int8Array.from(cells).subarray(0, this.lines.size);
      return moves.map((move) => this.after(copy, defender, move, maxNodes).status !== G.VCF_WIN);
    }

    /** The opponent's VCT solve once `defender` has played `move` (empty) in `cells`, there only meanwhile. */
    after(cells, defender, move, maxNodes) {
      cells[move] = defender;
      try {
        return this.solve(cells, 3 - defender, maxNodes);
      } finally {
        cells[move] = 0;
      }
    }

    // ---------------------------------------------------------------- search
    /** The first move of a VCF found within `budget` more nodes, else -1 (VctSolver._quick). */
    _quick(budget) {
      const total = this.budget;
      this.budget = Math.min(this.budget, this.nodes + budget);
      try {
        return this._attack();
      } catch (error) {
        if (!(error instanceof G.BudgetExhausted) || this.budget === total) throw error;
        return -1;
      } finally {
        this.budget = total;
      }
    }

    /**
     * Proof-number search from `root` (the loaded position, attacker to move) until it is proved or
     * disproved, in the order of the best-first search but without going back to the root each
     * time: each node on the path carries the limits of its numbers within which the descent from
     * the root would choose it again (df-pn's thresholds), and the search stays below it while they
     * hold; a node is brought up to date from its children each time it is reached
     * (VctSolver._prove).
     */
    _prove(root) {
      const attacker = this.attacker, defender = 3 - attacker;
      const path = [root], moves = [-1];  // the nodes from the root down, and the moves to them
      const limits = [[INFINITE, INFINITE]];  // each path node's: stay below it while pn, dn are under
      try {
        for (;;) {
          const node = path[path.length - 1], depth = path.length - 1;
          const orNode = depth % 2 === 0;
          if (node.children === null) {
            if (orNode) this._expandOr(node);
            else this._expandAnd(node);
          }
          updateNumbers(node, orNode);
          const [pnLimit, dnLimit] = limits[limits.length - 1];
          if (node.pn && node.dn && node.pn < pnLimit && node.dn < dnLimit) {
            const children = node.children;
            let index;
            if (orNode) {  // the child easiest to prove; the others' disproof numbers add up
              let chosenLimit;
              [index, chosenLimit] = choice(children, "pn");
              let rest = 0;
              children.forEach((child, i) => { if (i !== index) rest += child.dn; });
              limits.push([Math.min(pnLimit, chosenLimit), dnLimit === INFINITE ? INFINITE : dnLimit - rest]);
            } else {
              let chosenLimit;
              [index, chosenLimit] = choice(children, "dn");
              let rest = 0;
              children.forEach((child, i) => { if (i !== index) rest += child.pn; });
              limits.push([pnLimit === INFINITE ? INFINITE : pnLimit - rest, Math.min(dnLimit, chosenLimit)]);
            }
            this._place(node.moves[index], orNode ? attacker : defender);
            path.push(children[index]);
            moves.push(node.moves[index]);
          } else if (depth === 0) {
            return;  // solved
          } else {  // back up: the parent is brought up to date and chooses again
            path.pop();
            limits.pop();
            this._remove(moves.pop(), orNode ? defender : attacker);
          }
        }
      } finally {
        for (let depth = path.length - 1; depth > 0; depth--) {
          this._remove(moves[depth], depth % 2 === 0 ? defender : attacker);
        }
      }
    }

    /** The key of the position with `colour`'s stone added at `point` (not placed). */
    _keyWith(point, colour) {
      return `${this.low ^ this.keyLow[colour][point]}:${this.high ^ this.keyHigh[colour][point]}`;
    }

    /** Children of an OR node: the attacker's threats, judged without placing them (VctSolver._expand_or). */
    _expandOr(node) {
      const fives = this._fourMoves();
      const threes = new Map();
      for (const [p, points] of fives) if (points.size > 1) threes.set(p, points);
      const blocks = this._blocks();
      let candidates;
      if (blocks.size) {
        candidates = blocks.size === 1 ? Array.from(blocks) : [];  // two cannot both be blocked
      } else {
        const points = new Set(fives.keys());
        const cells = this.cells, windows = this.lines.windows;
        for (const w of this.sets[ATTACKER_TWO]) for (const p of windows[w]) if (!cells[p]) points.add(p);
        candidates = sortedPoints(points);
      }
      const children = [];
      for (const move of candidates) {
        const key = this._keyWith(move, this.attacker);
        let child = this.table.get(key);
        if (child === undefined) {
          this._tick();
          const replies = this._judge(move, fives, threes);
          if (replies === null) continue;
          child = newNode(replies.length, 1, replies);
          this.table.set(key, child);
        }
        children.push(child);
        node.moves.push(move);
        if (child.pn === 0) break;  // proved
      }
      node.children = children;
    }

    /**
     * Children of an AND node (its attacking move placed): the defender's replies, each an OR node
     * judged at once where it can be (VctSolver._expand_and).
     */
    _expandAnd(node) {
      const defender = 3 - this.attacker;
      const children = [];
      for (const reply of node.replies) {
        const key = this._keyWith(reply, defender);
        let child = this.table.get(key);
        if (child === undefined) {
          this._tick();
          this._place(reply, defender);
          let won;
          try {
            won = this._status();
          } finally {
            this._remove(reply, defender);
          }
          const [pn, dn] = won === null ? [1, 1] : won ? [0, INFINITE] : [INFINITE, 0];
          child = newNode(pn, dn);
          this.table.set(key, child);
        }
        children.push(child);
        node.moves.push(reply);
        if (child.dn === 0) break;  // disproved
      }
      node.children = children;
    }

    /** For the attacker to move here: true (a win found at once), false (lost), null (VctSolver._status). */
    _status() {
      const sets = this.sets;
      if (sets[ATTACKER_FOUR].size) return true;
      const blocks = this._blocks();
      if (blocks.size > 1) return false;
      if (this._quick(LEAF_VCF_NODES) >= 0) return true;
      if (!blocks.size && !sets[ATTACKER_TWO].size && !this._fourMoves().size) return false;  // no threat to make
      return null;
    }

    /**
     * The attacker's stone at `move`, judged without placing it: the defender's replies to search
     * (one for a four, none for a double) or null when it is no threat (VctSolver._judge). `fives`
     * is _fourMoves() and `threes` the three points among them (two five points or more).
     */
    _judge(move, fives, threes) {
      const made = fives.get(move);
      if (made) return made.size > 1 ? [] : Array.from(made);  // a double, or a four: its one reply
      const threePoints = new Map(threes);
      const cells = this.cells, windows = this.lines.windows;
      const [mine, theirs] = this.counts, table = this.classOf;
      for (const w of this.lines.through[move]) {
        if (table[mine[w]][theirs[w]] === ATTACKER_TWO) {  // with the stone, a three: its two other empties
          const [first, second] = windows[w].filter((p) => !cells[p] && p !== move);
          for (const [point, other] of [[first, second], [second, first]]) {
            const points = threePoints.get(point) || fives.get(point);
            if (points === undefined) threePoints.set(point, new Set([other]));
            else if (!points.has(other)) threePoints.set(point, new Set(points).add(other));
          }
        }
      }
      for (const [p, points] of threePoints) if (points.size < 2) threePoints.delete(p);
      if (!threePoints.size) return null;
      return this._replies(threePoints, move);
    }

    /**
     * The defender's replies to a three (the attacker's stone at `move`), ascending: its defences
     * (points that stop every three point) and its counter-fours (the empty points of its threes that
     * `move` does not cut) (VctSolver._replies).
     */
    _replies(threePoints, move) {
      const candidates = new Set(threePoints.keys());
      for (const points of threePoints.values()) for (const p of points) candidates.add(p);
      const replies = new Set();
      for (const r of candidates) {
        let stops = true;
        for (const [p, points] of threePoints) {
          if (r !== p && points.size - (points.has(r) ? 1 : 0) >= 2) {
            stops = false;
            break;
          }
        }
        if (stops) replies.add(r);
      }
      const cells = this.cells, windows = this.lines.windows;
      for (const w of this.sets[DEFENDER_THREE]) {
        if (!windows[w].includes(move)) for (const p of windows[w]) if (!cells[p]) replies.add(p);
      }
      return sortedPoints(replies);
    }
  }

  Object.assign(G, { Vct, VCT_DEFAULT_NODES: DEFAULT_VCT_NODES, VCT_LEAF_VCF_NODES: LEAF_VCF_NODES });
})(typeof globalThis !== "undefined" ? globalThis : self);

// The ab:DEPTH player of gomoku/players/alphabeta.py, ported move for move (as the Python player
// with no random generator: equal best moves go to the first in move order). Exact rules first
// (take a five, block a four), then the VCF solver (threats.js): play a win by fours; when the
// opponent threatens one, keep only the moves after which it has none. Then iterative deepening
// alpha-beta over the candidates near the stones, best first by a window score; an opponent's four
// is blocked at no depth cost, a move making two winning points wins, and at the horizon a side to
// move with a three is checked for a win by fours (a small VCF budget), else the window evaluation.
// A node budget per move drops a depth that does not finish. Constants as in the Python module.
(function (root) {
  "use strict";
  const G = (root.Gomoku = root.Gomoku || {});

  const DEFAULT_MAX_NODES = 10000;
  const TOP_K = 10;
  const ROOT_TOP_K = 20;
  const VCF_NODES = 1000;
  const HORIZON_VCF_NODES = 100;
  const CANDIDATE_DISTANCE = 2;
  const WINDOW_WEIGHT = { 1: 600, 2: 60, 3: 6, 4: 1 };
  const ATTACK_ORDER = { 1: 1e7, 2: 1e4, 3: 300, 4: 12, 5: 1 };
  const DEFENCE_ORDER = { 1: 1e6, 2: 3000, 3: 100, 4: 6, 5: 1 };

  class OutOfNodes extends Error {}

  /** Per (own stones, opponent stones) in a window: stones short of a line (0: none or mixed). */
  function tables(n) {
    const short = (a, b) => (b === 0 && a < n ? n - a : 0);  // geometry.short_of for one colour
    const table = (f) => Array.from({ length: n + 1 }, (_, a) => Array.from({ length: n + 1 }, (__, b) => f(a, b)));
    return {
      missing: table((a, b) => (a ? short(a, b) : 0)),
      value: table((a, b) => (a ? WINDOW_WEIGHT[short(a, b)] || 0 : 0)),
      attack: table((a, b) => ATTACK_ORDER[short(a, b)] || 0),
      defence: table((a, b) => (b ? DEFENCE_ORDER[short(b, a)] || 0 : 0)),
    };
  }

  function nearPoints(width, height) {
    const near = [];
    for (let row = 0; row < height; row++) {
      for (let col = 0; col < width; col++) {
        const points = [];
        for (let r = Math.max(0, row - CANDIDATE_DISTANCE); r < Math.min(height, row + CANDIDATE_DISTANCE + 1); r++) {
          for (let c = Math.max(0, col - CANDIDATE_DISTANCE); c < Math.min(width, col + CANDIDATE_DISTANCE + 1); c++) {
            if (r !== row || c !== col) points.push(r * width + c);
          }
        }
        near.push(points);
      }
    }
    return near;
  }

  function moveShape(window, before, after, fours, threes) {
    if (before === after) return;
    if (before === 1) fours.delete(window);
    else if (before === 2) threes.delete(window);
    if (after === 1) fours.add(window);
    else if (after === 2) threes.add(window);
  }

  class AbSearch extends G.TrackedBoard {
    constructor(board, maxNodes) {
      super(board);
      const lines = G.linesOf(board.width, board.height, board.nInRow);
      this.windows = lines.windows;
      this.through = lines.through;
      this.nearOf = nearPoints(board.width, board.height);
      this.tables = tables(board.nInRow);
      this.horizon = new G.Threats(lines, HORIZON_VCF_NODES);
      this.maxNodes = maxNodes;
      this.nodes = 0;
      this.counts = [null, new Int32Array(this.windows.length), new Int32Array(this.windows.length)];
      for (const move of this.board.moves) for (const w of this.through[move]) this.counts[this.board.cells[move]][w]++;
      this.fours = [null, new Set(), new Set()];
      this.threes = [null, new Set(), new Set()];
      this.pattern = [0, 0, 0];
      for (let w = 0; w < this.windows.length; w++) {
        for (const player of [1, 2]) {
          const a = this.counts[player][w], b = this.counts[3 - player][w];
          this.pattern[player] += this.tables.value[a][b];
          moveShape(w, 0, this.tables.missing[a][b], this.fours[player], this.threes[player]);
        }
      }
      this.near = new Int32Array(board.size);
      for (const move of this.board.moves) for (const p of this.nearOf[move]) this.near[p]++;
      this.win = 10 * this.windows.length * 600 + 10 * board.size;
      this.infinity = 2 * this.win;
    }

    _update(move, player, step) {
      const them = 3 - player, mine = this.counts[player], theirs = this.counts[them];
      const { missing, value } = this.tables;
      let myGain = 0, theirGain = 0;
      for (const w of this.through[move]) {
        const a = mine[w], b = theirs[w], after = a + step;
        mine[w] = after;
        myGain += value[after][b] - value[a][b];
        moveShape(w, missing[a][b], missing[after][b], this.fours[player], this.threes[player]);
        if (b && !(a && after)) {
          theirGain += value[b][after] - value[b][a];
          moveShape(w, missing[b][a], missing[b][after], this.fours[them], this.threes[them]);
        }
      }
      this.pattern[player] += myGain;
      this.pattern[them] += theirGain;
      for (const p of this.nearOf[move]) this.near[p] += step;
    }

    _empty(w) {
      return this.windows[w].filter((p) => this.board.cells[p] === 0);
    }

    winningPoints(player) {
      const points = new Set();
      for (const w of this.fours[player]) points.add(this._empty(w)[0]);
      return Array.from(points).sort((a, b) => a - b);
    }

    hasDoubleThreat(player) {
      const made = new Map();
      for (const w of this.threes[player]) {
        const [first, second] = this._empty(w);
        for (const [move, five] of [[first, second], [second, first]]) {
          if (!made.has(move)) made.set(move, five);
          else if (made.get(move) !== five) return true;
        }
      }
      return false;
    }

    pointScore(point, me) {
      const mine = this.counts[me], theirs = this.counts[3 - me], { attack, defence } = this.tables;
      let score = 0;
      for (const w of this.through[point]) score += attack[mine[w]][theirs[w]] + defence[mine[w]][theirs[w]];
      return score;
    }

    orderedMoves(me, topK) {
      const board = this.board;
      if (!board.moves.length) return [Math.floor(board.height / 2) * board.width + Math.floor(board.width / 2)];
      let candidates = [];
      for (let p = 0; p < board.size; p++) if (this.near[p] && board.cells[p] === 0) candidates.push(p);
      if (!candidates.length) candidates = board.availables();
      const scores = new Map(candidates.map((p) => [p, this.pointScore(p, me)]));
      return candidates.sort((a, b) => scores.get(b) - scores.get(a)).slice(0, topK);  // stable
    }

    negamax(depth, alpha, beta, ply) {
      if (++this.nodes > this.maxNodes) throw new OutOfNodes();
      const board = this.board;
      if (board.winner !== G.DRAW) return -(this.win - ply);
      if (board.moves.length === board.size) return 0;
      const me = board.currentPlayer;
      if (this.fours[me].size) return this.win - (ply + 1);
      const blocks = this.winningPoints(3 - me);
      if (blocks.length > 1) return -(this.win - (ply + 2));
      if (!blocks.length && this.hasDoubleThreat(me)) return this.win - (ply + 3);
      let moves;
      if (blocks.length) {
        moves = blocks;
      } else if (depth <= 0) {
        if (this.threes[me].size && this.horizon.solve(board.cells, me, HORIZON_VCF_NODES).status === G.VCF_WIN) {
          return this.win - (ply + 3);
        }
        return this.pattern[me] - this.pattern[3 - me];
      } else {
        moves = this.orderedMoves(me, TOP_K);
      }
      const below = blocks.length ? depth : depth - 1;
      return this.bestOf(moves, alpha, beta, (a, b) => -this.negamax(below, -b, -a, ply + 1));
    }

    rootScores(moves, depth) {
      let best = -this.infinity;
      const scores = [];
      for (const move of moves) {
        this.play(move);
        let score;
        try {
          score = -this.negamax(depth - 1, -this.infinity, -(best - 1), 1);
        } finally {
          this.undo();
        }
        scores.push(score);
        best = Math.max(best, score);
      }
      return scores;
    }
  }

  class AlphaBetaPlayer {
    constructor(depth, maxNodes = DEFAULT_MAX_NODES) {
      if (!(Number.isInteger(depth) && depth >= 1)) throw new Error(`ab depth must be >= 1, got ${depth}`);
      this.depth = depth;
      this.maxNodes = maxNodes;
      this.name = `ab:${depth}`;
    }

    getAction(board) {
      const search = new AbSearch(board, this.maxNodes);
      const me = board.currentPlayer, them = 3 - me;
      const wins = search.winningPoints(me);
      if (wins.length) return wins[0];
      const blocks = search.winningPoints(them);
      if (blocks.length) return blocks[0];
      let moves = search.orderedMoves(me, ROOT_TOP_K);
      const solver = new G.Threats(G.linesOf(board.width, board.height, board.nInRow), VCF_NODES);
      const cells = Int8Array.from(board.cells);
      const own = solver.solve(cells, me);
      if (own.status === G.VCF_WIN) return own.move;
      if (solver.solve(cells, them).status === G.VCF_WIN) {
        const keep = moves.filter((move) => {
          cells[move] = me;
          const stops = solver.solve(cells, them).status !== G.VCF_WIN;
          cells[move] = 0;
          return stops;
        });
        if (keep.length) moves = keep;
      }
      if (moves.length === 1) return moves[0];
      let bestMoves = moves.slice(0, 1);
      for (let depth = 1; depth <= this.depth; depth++) {
        let scores;
        try {
          scores = search.rootScores(moves, depth);
        } catch (error) {
          if (error instanceof OutOfNodes) break;
          throw error;
        }
        const best = Math.max(...scores);
        bestMoves = moves.filter((_, i) => scores[i] === best);
        const order = moves.map((_, i) => i).sort((i, j) => scores[j] - scores[i]);
        moves = order.map((i) => moves[i]);
        if (Math.abs(best) >= search.win - board.size) break;
      }
      return bestMoves[0];
    }
  }

  Object.assign(G, { AlphaBetaPlayer });
})(typeof globalThis !== "undefined" ? globalThis : self);

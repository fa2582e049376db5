// The classical players of gomoku/players/classical.py: random, heuristic (one ply of window
// scores) and minimax (alpha-beta over nearby candidates with a window evaluation), ported move
// for move: with the same position they choose the same move (ties as the Python players with no
// random generator: the most central point for the heuristic, the first in move order for minimax).
//
// A window is a run of n_in_row consecutive points; one holding only one colour's stones is a
// chance for that colour, the more stones the closer to a line.
(function (root) {
  "use strict";
  const G = (root.Gomoku = root.Gomoku || {});

  const CANDIDATE_DISTANCE = 2;  // candidates: empty points at most this far (king's moves) from a stone
  const MINIMAX_TOP_K = 12;  // the search looks at this many candidates per node, best first
  const HEURISTIC_BASE = 50;
  const ATTACK_FACTOR = 2;
  const EVAL_BASE = 10;

  const nearCache = new Map();
  /** The lines of a board shape, with the points within CANDIDATE_DISTANCE of each point. */
  function classicalLines(board) {
    const lines = G.linesOf(board.width, board.height, board.nInRow);
    const key = `${board.width}x${board.height}/${board.nInRow}`;
    if (!nearCache.has(key)) {
      const near = [];
      for (let row = 0; row < board.height; row++) {
        for (let col = 0; col < board.width; col++) {
          const points = [];
          for (let r = Math.max(0, row - CANDIDATE_DISTANCE); r < Math.min(board.height, row + CANDIDATE_DISTANCE + 1); r++) {
            for (let c = Math.max(0, col - CANDIDATE_DISTANCE); c < Math.min(board.width, col + CANDIDATE_DISTANCE + 1); c++) {
              if (r !== row || c !== col) points.push(r * board.width + c);
            }
          }
          near.push(points);
        }
      }
      nearCache.set(key, near);
    }
    return Object.assign({ near: nearCache.get(key) }, lines);
  }

  /** counts[player][window]: that player's stones in the window (index 0 unused). */
  function windowCounts(board, lines) {
    const counts = [null, new Int32Array(lines.windows.length), new Int32Array(lines.windows.length)];
    for (const move of board.moves) {
      const player = board.cells[move];
      for (const w of lines.through[move]) counts[player][w]++;
    }
    return counts;
  }

  function pointScore(point, me, lines, counts) {
    const mine = counts[me], theirs = counts[3 - me];
    let score = 0;
    for (const w of lines.through[point]) {
      if (theirs[w] === 0) score += ATTACK_FACTOR * HEURISTIC_BASE ** mine[w];
      if (mine[w] === 0) score += HEURISTIC_BASE ** theirs[w];
    }
    return score;
  }

  /** Empty points where `player` would complete a line at once, ascending. */
  function winningPointsOf(board, player, lines, counts) {
    const need = lines.nInRow - 1, mine = counts[player], theirs = counts[3 - player];
    const points = new Set();
    lines.windows.forEach((window, index) => {
      if (mine[index] === need && theirs[index] === 0) {
        for (const p of window) if (board.cells[p] === 0) points.add(p);
      }
    });
    return Array.from(points).sort((a, b) => a - b);
  }

  function centrality(board, move) {
    const row = Math.floor(move / board.width), col = move % board.width;
    return (row - (board.height - 1) / 2) ** 2 + (col - (board.width - 1) / 2) ** 2;
  }

  function mostCentral(board, moves) {
    let best = moves[0];
    for (const m of moves) {
      const a = centrality(board, m), b = centrality(board, best);
      if (a < b || (a === b && m < best)) best = m;
    }
    return best;
  }

  class RandomPlayer {
    constructor() { this.name = "random"; }
    getAction(board) {
      const moves = board.availables();
      return moves[Math.floor(Math.random() * moves.length)];
    }
  }

  class HeuristicPlayer {
    constructor() { this.name = "heuristic"; }
    getAction(board) {
      const me = board.currentPlayer, lines = classicalLines(board), counts = windowCounts(board, lines);
      const wins = winningPointsOf(board, me, lines, counts);
      if (wins.length) return mostCentral(board, wins);
      const blocks = winningPointsOf(board, 3 - me, lines, counts);
      const candidates = blocks.length ? blocks : board.availables();
      let best = -Infinity, bestMoves = [];
      for (const p of candidates) {
        const s = pointScore(p, me, lines, counts);
        if (s > best) { best = s; bestMoves = [p]; } else if (s === best) bestMoves.push(p);
      }
      return mostCentral(board, bestMoves);
    }
  }

  /** A board copy (``board``) whose counts ``_update(move, player, step)`` keeps up to date as
   *  moves are played (step 1) and taken back (step -1): the searches' positions. */
  class TrackedBoard {
    constructor(board) {
      this.board = board.copy();
    }

    play(move) {
      const player = this.board.currentPlayer;
      this.board.doMove(move);
      this._update(move, player, 1);
    }

    undo() {
      const move = this.board.lastMove, player = this.board.cells[move];
      this.board.undoMove();
      this._update(move, player, -1);
    }

    /** The negamax loop of both searches: the best ``score(alpha, beta)`` over ``moves``, each
     *  played while it is scored (taken back even when the score throws), cut once alpha >= beta;
     *  -this.infinity when there is none. */
    bestOf(moves, alpha, beta, score) {
      let best = -this.infinity;
      for (const move of moves) {
        this.play(move);
        let value;
        try {
          value = score(alpha, beta);
        } finally {
          this.undo();
        }
        if (value > best) {
          best = value;
          alpha = Math.max(alpha, value);
          if (alpha >= beta) break;
        }
      }
      return best;
    }
  }

  /** A board copy with window counts kept up to date move by move, for alpha-beta search. */
  class SearchState extends TrackedBoard {
    constructor(board) {
      super(board);
      this.lines = classicalLines(board);
      this.need = board.nInRow - 1;
      this.counts = windowCounts(this.board, this.lines);
      this.fours = [0, 0, 0];
      this.threes = [0, 0, 0];
      this.pattern = [0, 0, 0];
      for (let w = 0; w < this.lines.windows.length; w++) this._countWindow(w, 1);
      this.near = new Int32Array(board.size);
      for (const move of this.board.moves) for (const p of this.lines.near[move]) this.near[p]++;
      this.win = 10 * this.lines.windows.length * EVAL_BASE ** board.nInRow + 10 * board.size;
      this.infinity = 2 * this.win;
    }

    _countWindow(w, sign) {
      const c1 = this.counts[1][w], c2 = this.counts[2][w];
      for (const [player, mine, theirs] of [[1, c1, c2], [2, c2, c1]]) {
        if (theirs) continue;
        if (mine) this.pattern[player] += sign * EVAL_BASE ** mine;
        if (mine === this.need) this.fours[player] += sign;
        else if (mine === this.need - 1) this.threes[player] += sign;
      }
    }

    _update(move, player, step) {
      const counts = this.counts[player];
      for (const w of this.lines.through[move]) {
        this._countWindow(w, -1);
        counts[w] += step;
        this._countWindow(w, 1);
      }
      for (const p of this.lines.near[move]) this.near[p] += step;
    }

    winningPoints(player) {
      if (!this.fours[player]) return [];
      return winningPointsOf(this.board, player, this.lines, this.counts);
    }

    hasDoubleThreat(player) {
      if (!this.threes[player]) return false;
      const target = this.need - 1, mine = this.counts[player], theirs = this.counts[3 - player];
      const threatOf = new Map();
      const windows = this.lines.windows;
      for (let index = 0; index < windows.length; index++) {
        if (mine[index] === target && theirs[index] === 0) {
          const [first, second] = windows[index].filter((p) => this.board.cells[p] === 0);
          for (const [move, threat] of [[first, second], [second, first]]) {
            if (!threatOf.has(move)) threatOf.set(move, threat);
            else if (threatOf.get(move) !== threat) return true;
          }
        }
      }
      return false;
    }

    orderedMoves(me) {
      const board = this.board;
      const forced = this.winningPoints(3 - me);
      let candidates;
      if (forced.length) {
        candidates = forced;
      } else if (board.moves.length) {
        candidates = [];
        for (let p = 0; p < board.size; p++) if (this.near[p] && board.cells[p] === 0) candidates.push(p);
        if (!candidates.length) candidates = board.availables();
      } else {
        return [Math.floor(board.height / 2) * board.width + Math.floor(board.width / 2)];
      }
      const scores = new Map(candidates.map((p) => [p, pointScore(p, me, this.lines, this.counts)]));
      const scored = candidates.slice().sort((a, b) => scores.get(b) - scores.get(a));  // stable
      return forced.length ? scored : scored.slice(0, MINIMAX_TOP_K);
    }

    evaluate(me) {
      return this.pattern[me] - this.pattern[3 - me];
    }

    negamax(depth, alpha, beta, ply) {
      const board = this.board;
      if (board.winner !== G.DRAW) return -(this.win - ply);
      if (board.moves.length === board.size) return 0;
      const me = board.currentPlayer;
      if (this.fours[me]) return this.win - (ply + 1);
      const opponentWins = this.winningPoints(3 - me);
      if (opponentWins.length > 1) return -(this.win - (ply + 2));
      if (!opponentWins.length && this.hasDoubleThreat(me)) return this.win - (ply + 3);
      if (depth === 0) return this.evaluate(me);
      return this.bestOf(this.orderedMoves(me), alpha, beta, (a, b) => -this.negamax(depth - 1, -b, -a, ply + 1));
    }
  }

  class MinimaxPlayer {
    constructor(depth) {
      if (!(Number.isInteger(depth) && depth >= 1)) throw new Error(`minimax depth must be >= 1, got ${depth}`);
      this.depth = depth;
      this.name = `minimax:${depth}`;
    }

    getAction(board) {
      const search = new SearchState(board);
      const me = board.currentPlayer;
      const wins = search.winningPoints(me);
      if (wins.length) return wins[0];
      const moves = search.orderedMoves(me);
      if (moves.length === 1) return moves[0];
      let bestScore = -search.infinity, bestMoves = [];
      for (const move of moves) {
        search.play(move);
        const score = -search.negamax(this.depth - 1, -search.infinity, -(bestScore - 1), 1);
        search.undo();
        if (score > bestScore) {
          bestScore = score;
          bestMoves = [move];
        } else if (score === bestScore) {
          bestMoves.push(move);
        }
      }
      return bestMoves[0];
    }
  }

  function makeClassicalPlayer(kind, depth) {
    if (kind === "random") return new RandomPlayer();
    if (kind === "heuristic") return new HeuristicPlayer();
    if (kind === "minimax") return new MinimaxPlayer(depth);
    if (kind === "ab") return new G.AlphaBetaPlayer(depth);  // alphabeta.js
    throw new Error(`unknown player ${kind}`);
  }

  Object.assign(G, { RandomPlayer, HeuristicPlayer, MinimaxPlayer, makeClassicalPlayer, TrackedBoard });
})(typeof globalThis !== "undefined" ? globalThis : self);

// An exact, bounded VCF ("victory by continuous fours") solver, the rules of gomoku/tactics/threats.py:
// freestyle; the attacker to move wins at once when one stone completes a line; when the defender
// has a four the attacker must block it, and the block must itself make a four (two such points of
// the defender's cannot both be blocked); every attacking move makes a four, and when it leaves two
// or more winning points (a double four, an open four) the attack wins; when it leaves one, the
// defender's reply is forced (block it) and the attack goes on. Depth first over the attacker's
// four-making moves in ascending order (a double four first); a node is one attacking move tried
// (with its forced reply), and the search gives up ("unknown") past the node budget. Positions
// proven not to be a VCF are remembered (Zobrist keys), since move orders transpose.
// The line bookkeeping (ThreatBoard of gomoku/tactics/threats.py: each window's stone counts and the sets of
// the windows of each tracked class, kept up to date as stones are placed and taken back) is shared
// with the VCT solver (vct.js), which also tracks the attacker's twos and the defender's threes
// (`wide`) and uses the VCF search as its fast check.
(function (root) {
  "use strict";
  const G = (root.Gomoku = root.Gomoku || {});

  const DEFAULT_MAX_NODES = 200;
  // Window classes tracked in sets, from the attacker's point of view (gomoku/tactics/threats.py's).
  const NONE = 0, ATTACKER_THREE = 1, ATTACKER_FOUR = 2, DEFENDER_FOUR = 3, ATTACKER_TWO = 4, DEFENDER_THREE = 5;
  const WIN = "win", NO_WIN = "no win", UNKNOWN = "unknown";

  class BudgetExhausted extends Error {}

  /** 32-bit xorshift random numbers from a fixed seed: the same Zobrist keys everywhere. */
  function zobristKeys(count) {
    let x = 2463534242;
    const keys = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      x ^= x << 13; x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5; x >>>= 0;
      keys[i] = x | 0;
    }
    return keys;
  }

  class Threats {
    /** `wide` also tracks the attacker's twos and the defender's threes (the VCT solver's). */
    constructor(lines, maxNodes = DEFAULT_MAX_NODES, wide = false) {
      this.lines = lines;
      this.maxNodes = maxNodes || DEFAULT_MAX_NODES;
      const n = (this.n = lines.nInRow);
      // classOf[attacker's stones][defender's stones]: the window's class (n = 3: a two is an empty window).
      this.classOf = [];
      for (let a = 0; a <= n; a++) this.classOf.push(new Array(n + 1).fill(NONE));
      this.classCount = wide ? DEFENDER_THREE : DEFENDER_FOUR;
      if (wide) {
        this.classOf[n - 3][0] = ATTACKER_TWO;
        this.classOf[0][n - 2] = DEFENDER_THREE;
      }
      this.classOf[n - 2][0] = ATTACKER_THREE;
      this.classOf[n - 1][0] = ATTACKER_FOUR;
      this.classOf[0][n - 1] = DEFENDER_FOUR;
      // Two independent 32-bit keys per (colour, point): 64-bit Zobrist keys in two halves.
      const keys = zobristKeys(4 * lines.size);
      this.keyLow = [null, keys.subarray(0, lines.size), keys.subarray(lines.size, 2 * lines.size)];
      this.keyHigh = [null, keys.subarray(2 * lines.size, 3 * lines.size), keys.subarray(3 * lines.size)];
    }

    /** Whether `attacker` (1 or 2), to move in `cells`, has a VCF: {status, move, nodes}. */
    solve(cells, attacker, maxNodes) {
      this.load(cells, attacker);
      return this.solveLoaded(maxNodes);
    }

    /** For `defender` to move: which of `moves` leave the opponent without a VCF (unknown counts). */
    defences(cells, defender, moves, maxNodes) {
      this.load(cells, 3 - defender);
      return moves.map((move) => {
        this._place(move, defender);
        const stops = this.solveLoaded(maxNodes).status !== WIN;
        this._remove(move, defender);
        return stops;
      });
    }

    /** The winning first move of a VCF for the player to move on `cells`, or null. */
    vcf(cells, attacker, maxNodes) {
      const r = this.solve(cells, attacker, maxNodes);
      return r.status === WIN ? r.move : null;
    }

    load(cells, attacker) {
      const { windows } = this.lines, n = this.n;
      this.attacker = attacker;
      this.cells = Int8Array.from(cells.subarray ? cells.subarray(0, this.lines.size) : cells.slice(0, this.lines.size));
      const mine = new Int32Array(windows.length), theirs = new Int32Array(windows.length);
      this.sets = [null];
      for (let c = 1; c <= this.classCount; c++) this.sets.push(new Set());
      this.low = 0;
      this.high = 0;
      windows.forEach((w, index) => {
        for (const p of w) {
          if (this.cells[p] === attacker) mine[index]++;
          else if (this.cells[p] !== 0) theirs[index]++;
        }
        const cls = this.classOf[mine[index]][theirs[index]];
        if (cls) this.sets[cls].add(index);
      });
      this.counts = [mine, theirs];
      for (let p = 0; p < this.cells.length; p++) {
        const colour = this.cells[p];
        if (colour) {
          this.low ^= this.keyLow[colour][p];
          this.high ^= this.keyHigh[colour][p];
        }
      }
    }

    solveLoaded(maxNodes) {
      this.budget = maxNodes || this.maxNodes;
      this.nodes = 0;
      this.refuted = new Set();
      let move;
      try {
        move = this._attack();
      } catch (error) {
        if (error instanceof BudgetExhausted) return { status: UNKNOWN, move: -1, nodes: this.nodes };
        throw error;
      }
      return { status: move < 0 ? NO_WIN : WIN, move, nodes: this.nodes };
    }

    _keyString() {
      return `${this.low}:${this.high}`;
    }

    _place(point, colour) {
      this._update(point, colour, 1);
      this.cells[point] = colour;
      this.low ^= this.keyLow[colour][point];
      this.high ^= this.keyHigh[colour][point];
    }

    _remove(point, colour) {
      this._update(point, colour, -1);
      this.cells[point] = 0;
      this.low ^= this.keyLow[colour][point];
      this.high ^= this.keyHigh[colour][point];
    }

    _update(point, colour, step) {
      const [mine, theirs] = this.counts;
      const changed = colour === this.attacker ? mine : theirs;
      const table = this.classOf, sets = this.sets;
      for (const w of this.lines.through[point]) {
        const before = table[mine[w]][theirs[w]];
        changed[w] += step;
        const after = table[mine[w]][theirs[w]];
        if (before !== after) {
          if (before) sets[before].delete(w);
          if (after) sets[after].add(w);
        }
      }
    }

    /** Count one node: BudgetExhausted past the budget (ThreatBoard._tick). */
    _tick() {
      this.nodes++;
      if (this.nodes > this.budget) {
        this.nodes--;
        throw new BudgetExhausted();
      }
    }

    _emptyOfFour(w) {
      for (const p of this.lines.windows[w]) if (!this.cells[p]) return p;
      return -1;
    }

    /** The defender's five points: the empty points of its fours (a Set). */
    _blocks() {
      const blocks = new Set();
      for (const w of this.sets[DEFENDER_FOUR]) blocks.add(this._emptyOfFour(w));
      return blocks;
    }

    /**
     * The attacker's four-making moves: a Map from each empty point of one of its threes to the
     * winning points a stone there makes (two or more: a double four or an open four).
     * ThreatBoard._four_moves.
     */
    _fourMoves() {
      const cells = this.cells, windows = this.lines.windows;
      const fives = new Map();
      for (const w of this.sets[ATTACKER_THREE]) {
        const [first, second] = windows[w].filter((p) => !cells[p]);
        if (!fives.has(first)) fives.set(first, new Set());
        if (!fives.has(second)) fives.set(second, new Set());
        fives.get(first).add(second);
        fives.get(second).add(first);
      }
      return fives;
    }

    /**
     * The first move of a VCF for the attacker to move, or -1 (ThreatBoard._vcf). Counts its nodes
     * against the budget and remembers refuted positions in `refuted`.
     */
    _attack() {
      const sets = this.sets;
      if (sets[ATTACKER_FOUR].size) {
        let best = Infinity;
        for (const w of sets[ATTACKER_FOUR]) best = Math.min(best, this._emptyOfFour(w));
        return best;
      }
      const threats = this._blocks();
      if (threats.size > 1) return -1;
      let fives = this._fourMoves();  // four-making move -> the winning points it leaves
      if (threats.size) {
        const [block] = threats;
        fives = fives.has(block) ? new Map([[block, fives.get(block)]]) : new Map();
      }
      if (!fives.size) return -1;
      const singles = [];
      for (const move of Array.from(fives.keys()).sort((a, b) => a - b)) {
        const points = fives.get(move);
        if (points.size > 1) return move;
        singles.push([move, points.values().next().value]);
      }
      const attacker = this.attacker, defender = 3 - attacker;
      for (const [move, reply] of singles) {
        this._tick();
        this._place(move, attacker);
        this._place(reply, defender);
        let won = false;
        try {
          const key = this._keyString();
          if (!this.refuted.has(key)) {
            won = this._attack() >= 0;
            if (!won) this.refuted.add(key);
          }
        } finally {
          this._remove(reply, defender);
          this._remove(move, attacker);
        }
        if (won) return move;
      }
      return -1;
    }
  }

  Object.assign(G, { Threats, VCF_DEFAULT_MAX_NODES: DEFAULT_MAX_NODES, VCF_WIN: WIN, VCF_NO_WIN: NO_WIN,
    VCF_UNKNOWN: UNKNOWN, BudgetExhausted,
    WINDOW_CLASS: Object.freeze({ ATTACKER_THREE, ATTACKER_FOUR, DEFENDER_FOUR, ATTACKER_TWO, DEFENDER_THREE }) });
})(typeof globalThis !== "undefined" ? globalThis : self);

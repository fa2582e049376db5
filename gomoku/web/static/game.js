// The rules of five in a row (freestyle: five or more wins, a full board is a draw), as in
// gomoku/game/board.py: move = row * width + col, players 1 (moves first, Black) and 2.
// Classic script: it adds to the global `Gomoku` namespace, in a page, a Web Worker or node.
(function (root) {
  "use strict";
  const G = (root.Gomoku = root.Gomoku || {});

  const DIRECTIONS = [[0, 1], [1, 0], [1, 1], [1, -1]];
  const DRAW = -1;
  const COLUMN_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

  class Board {
    constructor(width = 9, height = 9, nInRow = 5) {
      this.width = width;
      this.height = height;
      this.nInRow = nInRow;
      this.size = width * height;
      this.cells = new Int8Array(this.size);
      this.moves = [];
      this.winner = DRAW;
    }

    static fromMoves(moves, width = 9, height = 9, nInRow = 5) {
      const board = new Board(width, height, nInRow);
      for (const move of moves) board.doMove(move);
      return board;
    }

    get currentPlayer() {
      return this.moves.length % 2 === 0 ? 1 : 2;
    }

    get lastMove() {
      return this.moves.length ? this.moves[this.moves.length - 1] : -1;
    }

    /** [ended, winner]: winner 1 or 2, or -1 for a draw (and while the game goes on). */
    gameEnd() {
      if (this.winner !== DRAW) return [true, this.winner];
      if (this.moves.length === this.size) return [true, DRAW];
      return [false, DRAW];
    }

    availables() {
      const out = [];
      for (let m = 0; m < this.size; m++) if (this.cells[m] === 0) out.push(m);
      return out;
    }

    isLegal(move) {
      return Number.isInteger(move) && move >= 0 && move < this.size && this.cells[move] === 0 &&
        !this.gameEnd()[0];
    }

    doMove(move) {
      if (!this.isLegal(move)) throw new Error(`illegal move ${move}`);
      const player = this.currentPlayer;
      this.cells[move] = player;
      this.moves.push(move);
      if (this.lineThrough(move, player).length >= this.nInRow) this.winner = player;
    }

    undoMove() {
      if (!this.moves.length) throw new Error("no move to undo");
      const move = this.moves.pop();
      this.cells[move] = 0;
      this.winner = DRAW;
      return move;
    }

    /** The longest run of `player` stones through `move` (the points, sorted). */
    lineThrough(move, player) {
      const { width, height, cells } = this;
      const row = Math.floor(move / width), col = move % width;
      let best = [move];
      for (const [dr, dc] of DIRECTIONS) {
        const line = [move];
        for (const sign of [1, -1]) {
          let r = row + sign * dr, c = col + sign * dc;
          while (r >= 0 && r < height && c >= 0 && c < width && cells[r * width + c] === player) {
            line.push(r * width + c);
            r += sign * dr;
            c += sign * dc;
          }
        }
        if (line.length > best.length) best = line;
      }
      return best.sort((a, b) => a - b);
    }

    /** The stones of the winning line, or [] when nobody has won. */
    winningLine() {
      if (this.winner === DRAW) return [];
      return this.lineThrough(this.lastMove, this.winner);
    }

    copy() {
      const b = new Board(this.width, this.height, this.nInRow);
      b.cells.set(this.cells);
      b.moves = this.moves.slice();
      b.winner = this.winner;
      return b;
    }
  }

  /** E5-style name of a move in standard notation, as gomoku.players.format_point: column letter,
   *  row number counted from the bottom (row 1 is the last row of move = row * width + col). */
  function formatPoint(move, width = 9, height = width) {
    return COLUMN_LETTERS[move % width] + String(height - Math.floor(move / width));
  }

  /**
   * Every window of n_in_row consecutive points, in the order of gomoku/tactics/geometry.py and
   * gomoku/players/classical.py (rows, then columns, then the four directions), and the windows
   * through each point.
   */
  function makeLines(width, height, nInRow) {
    const windows = [];
    for (let row = 0; row < height; row++) {
      for (let col = 0; col < width; col++) {
        for (const [dr, dc] of DIRECTIONS) {
          const endR = row + dr * (nInRow - 1), endC = col + dc * (nInRow - 1);
          if (endR >= 0 && endR < height && endC >= 0 && endC < width) {
            const w = [];
            for (let i = 0; i < nInRow; i++) w.push((row + dr * i) * width + col + dc * i);
            windows.push(w);
          }
        }
      }
    }
    const through = [];
    for (let p = 0; p < width * height; p++) through.push([]);
    windows.forEach((w, index) => { for (const p of w) through[p].push(index); });
    return { width, height, nInRow, size: width * height, windows, through };
  }

  const linesCache = new Map();
  function linesOf(width, height, nInRow) {
    const key = `${width}x${height}/${nInRow}`;
    if (!linesCache.has(key)) linesCache.set(key, makeLines(width, height, nInRow));
    return linesCache.get(key);
  }

  /** Whether the stone of `colour` at `move` completes a line on `cells`. */
  function winsAt(lines, cells, move, colour) {
    for (const index of lines.through[move]) {
      const w = lines.windows[index];
      let all = true;
      for (const p of w) if (cells[p] !== colour) { all = false; break; }
      if (all) return true;
    }
    return false;
  }

  /**
   * The empty points where one more stone completes a line, for both colours:
   * [points of colour 1 (bool array), points of colour 2], as Geometry.winning_points.
   */
  function winningPoints(lines, cells) {
    const n = lines.nInRow;
    const out = [new Uint8Array(lines.size), new Uint8Array(lines.size)];
    for (const w of lines.windows) {
      let c1 = 0, c2 = 0, empty = -1, empties = 0;
      for (const p of w) {
        const s = cells[p];
        if (s === 1) c1++;
        else if (s === 2) c2++;
        else { empties++; empty = p; }
      }
      if (empties !== 1) continue;
      if (c1 === n - 1) out[0][empty] = 1;
      else if (c2 === n - 1) out[1][empty] = 1;
    }
    return out;
  }

  /**
   * The status line's words for a click on ``move`` that cannot be played (the window's, in
   * gomoku/ui/app.py), or null when the point can be played: a click on a stone said nothing.
   */
  function clickProblem(board, move) {
    if (board.gameEnd()[0]) return "The game is over: New game starts another, Undo takes moves back.";
    if (board.cells[move] !== 0) {
      return `${formatPoint(move, board.width, board.height)} is taken: pick an empty point.`;
    }
    return null;
  }

  Object.assign(G, { Board, DRAW, DIRECTIONS, COLUMN_LETTERS, formatPoint, makeLines, linesOf, winsAt,
    winningPoints, clickProblem });
})(typeof globalThis !== "undefined" ? globalThis : self);

// The page: the board (SVG), the controls, and the conversation with the worker (worker.js), which
// does all the thinking. The state shows in <body data-state="loading|human|ai|over|error">, with
// data-moves (the moves so far, comma-separated) and data-winner (1, 2, -1 for a draw) for tools
// that drive the page (tests/test_web.py clicks through a whole game).
(function () {
  "use strict";
  const G = window.Gomoku;
  const FIRST_SIZE = 9;  // the board shown while the net loads; then the model's own
  const CELL = 44;
  const FLASH_MS = 2500;  // a short message stays this long (the window's FLASH_SECONDS)
  const MARGIN = 44;
  const RADIUS = 19;
  const SVG_NS = "http://www.w3.org/2000/svg";

  const $ = (id) => document.getElementById(id);
  const ui = {
    board: $("board"), status: $("status"), barBlack: $("bar-black"), estBlack: $("est-black"),
    estWhite: $("est-white"), estSource: $("est-source"), newGame: $("new-game"), undo: $("undo"),
    opponent: $("opponent"), playouts: $("playouts"), side: $("side"), vcf: $("vcf"), vct: $("vct"),
    numbers: $("numbers"),
    size: $("size"),
    timing: $("timing"), moveList: $("move-list"), modelInfo: $("model-info"),
  };

  const state = {
    board: new G.Board(FIRST_SIZE, FIRST_SIZE, 5),
    human: 1,  // the colour the person plays: 1 Black (moves first) or 2 White
    worker: null,
    ready: false,
    requestId: 0,
    pending: null,  // id of the AI move being computed
    searchEstimate: false,  // the bar shows the AI's search value of the position
    timings: [],
    lastTiming: null,  // {ply, move, text}: the line about the AI's last move, shown while that move is on the board
  };
  window.gomokuTimings = state.timings;  // [{player, playouts, ms, move}] of the AI's moves

  // ------------------------------------------------------------------ worker
  function startWorker() {
    if (state.worker) state.worker.terminate();
    state.ready = false;
    state.pending = null;
    const worker = new Worker("worker.js");
    worker.onmessage = (event) => onWorkerMessage(event.data);
    worker.onerror = (event) => fail(`the worker failed: ${event.message || "unknown error"}`);
    worker.postMessage({ type: "init" });
    state.worker = worker;
  }

  function onWorkerMessage(msg) {
    if (msg.type === "ready") {
      state.ready = true;
      const m = msg.model;
      ui.modelInfo.textContent = `Net: ${m.source}` + (m.iteration != null ? `, iteration ${m.iteration}` : "") +
        (m.games != null ? ` after ${m.games.toLocaleString("en")} self-play games` : "") +
        `, ${m.parameters.toLocaleString("en")} parameters, trained on ${m.width}x${m.height}` +
        (m.head === "pooled" ? `, plays ${m.sizes.map((n) => `${n}x${n}`).join(", ")}.` : ".");
      if (!state.defaultsSet) {  // the Python player's defaults, recorded in model.json by the export
        state.defaultsSet = true;
        ui.playouts.value = String(m.search.playouts);
        ui.vcf.checked = Boolean(m.search.vcf);
        ui.vct.checked = Boolean(m.search.vct);
        ui.size.replaceChildren(...m.sizes.map((n) => new Option(`${n}x${n}`, String(n))));
        ui.size.value = String(m.sizes.includes(m.width) ? m.width : m.sizes[0]);
        ui.size.disabled = m.sizes.length < 2;
        if (Number(ui.size.value) !== state.board.width) {
          newGame();
          return;
        }
      }
      update();
    } else if (msg.type === "progress") {
      if (msg.id !== state.pending) return;
      setEstimate(state.board.currentPlayer, msg.value, `search, ${msg.playouts} playouts`);
      ui.status.textContent = `AI is thinking\u2026 ${msg.playouts} / ${currentPlayer().playouts} playouts`;
    } else if (msg.type === "result") {
      if (msg.id !== state.pending) return;
      state.pending = null;
      const spec = playerLabel(currentPlayer());
      const name = G.formatPoint(msg.move, state.board.width);
      state.timings.push({ player: spec, playouts: msg.playouts || null, ms: msg.ms, move: msg.move });
      let text = `AI (${spec}) played ${name} in ${(msg.ms / 1000).toFixed(2)} s`;
      if (msg.playouts) text += `: ${msg.playouts} playouts, ${Math.round(msg.playouts / (msg.ms / 1000))} playouts/s`;
      state.lastTiming = { ply: state.board.moves.length, move: msg.move, text };
      if (msg.value != null) {  // the search's value stands for the position after its move too
        setEstimate(state.board.currentPlayer, msg.value, `search, ${msg.playouts} playouts`);
        state.searchEstimate = true;
      }
      play(msg.move);
    } else if (msg.type === "evaluation") {
      if (msg.id !== state.evaluationId) return;
      setEstimate(state.board.currentPlayer, msg.value, "the net's value of this position");
    } else if (msg.type === "error") {
      fail(msg.message);
    }
  }

  function fail(message) {
    document.body.dataset.state = "error";
    ui.status.textContent = `Error: ${message}`;
  }

  // ------------------------------------------------------------------ players
  function currentPlayer() {
    const [kind, depth] = ui.opponent.value.split(":");
    return { kind, depth: depth ? Number(depth) : undefined, playouts: Number(ui.playouts.value), vcf: ui.vcf.checked,
      vct: ui.vct.checked };
  }

  function playerLabel(p) {
    if (p.kind === "az") return `AlphaZero, ${p.playouts} playouts${p.vcf ? ", VCF" : ""}${p.vct ? ", VCT" : ""}`;
    if (p.kind === "minimax") return `minimax depth ${p.depth}`;
    if (p.kind === "ab") return `alpha-beta depth ${p.depth}`;
    return p.kind;
  }

  // ------------------------------------------------------------------ game flow
  function play(move) {
    state.board.doMove(move);
    update();
  }

  function update() {
    const board = state.board;
    state.evaluationId = null;  // an evaluation asked for before is of another position (asked again below)
    const [ended, winner] = board.gameEnd();
    document.body.dataset.moves = board.moves.join(",");
    document.body.dataset.winner = ended ? String(winner) : "";
    const timing = state.lastTiming;  // gone with its move (undo, new game)
    ui.timing.textContent = timing && board.moves[timing.ply] === timing.move ? timing.text : "";
    render();
    if (ended) {
      document.body.dataset.state = "over";
      ui.status.textContent = winner === -1 ? "Draw: the board is full." : winner === state.human
        ? "You win!" : "The AI wins.";
      setEstimate(1, winner === -1 ? 0 : winner === 1 ? 1 : -1, "game over");
      ui.undo.disabled = !board.moves.some((m, i) => (i % 2) + 1 === state.human);
      return;
    }
    if (!state.ready) {
      document.body.dataset.state = "loading";
      ui.status.textContent = "Loading the net\u2026";
      return;
    }
    ui.undo.disabled = !board.moves.some((m, i) => (i % 2) + 1 === state.human) && state.pending == null;
    if (board.currentPlayer === state.human) {
      document.body.dataset.state = "human";
      ui.status.textContent = `Your move (${state.human === 1 ? "Black" : "White"}).`;
      if (!state.searchEstimate) requestEvaluation();
      state.searchEstimate = false;
    } else if (state.pending == null) {
      const player = currentPlayer();
      state.pending = ++state.requestId;
      document.body.dataset.state = "ai";
      ui.status.textContent = "AI is thinking\u2026";
      state.worker.postMessage({ type: "move", id: state.pending, size: board.width, moves: board.moves.slice(),
        player });
    }
  }

  function requestEvaluation() {
    state.evaluationId = ++state.requestId;
    state.worker.postMessage({ type: "evaluate", id: state.evaluationId, size: state.board.width,
      moves: state.board.moves.slice() });
  }

  function cancelThinking() {
    if (state.pending != null) startWorker();  // the worker is busy: a fresh one (the net is cached)
  }

  function newGame() {
    cancelThinking();
    const size = Number(ui.size.value) || FIRST_SIZE;
    if (size !== state.board.width) buildBoard(size);
    state.board = new G.Board(size, size, 5);
    state.human = Number(ui.side.value);
    state.searchEstimate = false;
    state.lastTiming = null;
    setEstimate(1, 0, "win estimate");
    update();
  }

  function undo() {
    const board = state.board;
    if (!board.moves.some((m, i) => (i % 2) + 1 === state.human)) return;
    cancelThinking();
    // Take back moves up to and including the person's last one: it is their move again.
    let colour;
    do {
      colour = board.moves.length % 2 === 1 ? 1 : 2;  // the colour of the last move
      board.undoMove();
    } while (colour !== state.human);
    state.searchEstimate = false;
    update();
  }

  function onPointClick(move) {
    const now = document.body.dataset.state;
    const problem = now === "human" || now === "over" ? G.clickProblem(state.board, move) : null;
    if (problem) flash(problem);
    if (now !== "human" || !state.board.isLegal(move)) return;
    play(move);
  }

  // A short message in the status line (a click on a stone), then the status it replaced, unless
  // something else has been said meanwhile.
  function flash(text) {
    if (state.flashTimer == null) state.statusBefore = ui.status.textContent;
    clearTimeout(state.flashTimer);
    ui.status.textContent = text;
    state.flashTimer = setTimeout(() => {
      state.flashTimer = null;
      if (ui.status.textContent === text) ui.status.textContent = state.statusBefore;
    }, FLASH_MS);
  }

  // ------------------------------------------------------------------ drawing
  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  const xy = (move) => {
    const n = state.board.width;
    return [MARGIN + (move % n) * CELL, MARGIN + Math.floor(move / n) * CELL];
  };

  /** The star points of an n x n board as [row, col]: the centre (odd n), and from 9x9 on four
   *  more, on the third line (the fourth from 13x13 on), as the window draws them. */
  function starPoints(n) {
    const points = n % 2 ? [[(n - 1) / 2, (n - 1) / 2]] : [];
    if (n >= 9) {
      const edge = n < 13 ? 2 : 3;
      for (const r of [edge, n - 1 - edge]) for (const c of [edge, n - 1 - edge]) points.push([r, c]);
    }
    return points;
  }

  let layers = null;
  /** The SVG of an empty size x size board; the picture scales with the page, not with the size. */
  function buildBoard(size) {
    const svg = ui.board;
    svg.replaceChildren();
    const end = MARGIN + (size - 1) * CELL, side = end + MARGIN;
    svg.setAttribute("viewBox", `0 0 ${side} ${side}`);
    svg.setAttribute("aria-label", `${size} by ${size} board`);
    svg.parentElement.classList.toggle("big", size > FIRST_SIZE);  // more room on the page (style.css)
    const grid = el("g", { class: "grid" }, svg);
    for (let i = 0; i < size; i++) {
      const t = MARGIN + i * CELL;
      el("line", { x1: MARGIN, y1: t, x2: end, y2: t }, grid);
      el("line", { x1: t, y1: MARGIN, x2: t, y2: end }, grid);
      el("text", { class: "coord", x: t, y: 13 }, svg).textContent = G.COLUMN_LETTERS[i];
      el("text", { class: "coord", x: 13, y: t }, svg).textContent = String(size - i);  // row 1 at the bottom
    }
    for (const [r, c] of starPoints(size)) {
      el("circle", { class: "star", cx: MARGIN + c * CELL, cy: MARGIN + r * CELL, r: 3.5 }, svg);
    }
    layers = { under: el("g", {}, svg), stones: el("g", {}, svg), marks: el("g", {}, svg), hits: el("g", {}, svg) };
    for (let move = 0; move < size * size; move++) {
      const x = MARGIN + (move % size) * CELL, y = MARGIN + Math.floor(move / size) * CELL;
      const hit = el("rect", { class: "hit", x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL,
        "data-move": move }, layers.hits);
      el("circle", { class: "ghost", cx: x, cy: y, r: RADIUS }, layers.hits);
      hit.addEventListener("click", () => onPointClick(move));
    }
  }

  function render() {
    const board = state.board;
    layers.stones.replaceChildren();
    layers.marks.replaceChildren();
    const showNumbers = ui.numbers.checked;
    board.moves.forEach((move, i) => {
      const colour = (i % 2) + 1;
      const [x, y] = xy(move);
      el("circle", { class: `stone-${colour}`, cx: x, cy: y, r: RADIUS }, layers.stones);
      if (showNumbers) {
        el("text", { class: `number number-${colour}`, x, y }, layers.stones).textContent = String(i + 1);
      }
    });
    if (board.moves.length) {
      const [x, y] = xy(board.lastMove);
      if (showNumbers) el("circle", { class: "last", cx: x, cy: y, r: RADIUS + 2.5 }, layers.marks);
      else el("circle", { class: "last-dot", cx: x, cy: y, r: 5.5 }, layers.marks);
    }
    layers.under.replaceChildren();
    const line = board.winningLine();
    if (line.length) {  // a line under the stones, a ring round each of them
      const [x1, y1] = xy(line[0]);
      const [x2, y2] = xy(line[line.length - 1]);
      el("line", { class: "win-line", x1, y1, x2, y2 }, layers.under);
      for (const move of line) {
        const [x, y] = xy(move);
        el("circle", { class: "win-stone", cx: x, cy: y, r: RADIUS + 1 }, layers.marks);
      }
    }
    // The ghost stone under the pointer has the colour of the person's stones (empty points only).
    layers.hits.querySelectorAll(".ghost").forEach((ghost, move) => {
      ghost.setAttribute("class", `ghost stone-${state.human}${board.cells[move] ? " taken" : ""}`);
    });
    ui.moveList.replaceChildren(...board.moves.map((m, i) => {
      const item = document.createElement("li");
      item.textContent = `${i % 2 === 0 ? "Black" : "White"} ${G.formatPoint(m, board.width)}`;
      return item;
    }));
  }

  /** value: for `toMove` in [-1, 1]; the bar shows Black's expected score (1 win, 1/2 draw). */
  function setEstimate(toMove, value, source) {
    const black = (1 + (toMove === 1 ? value : -value)) / 2;
    const percent = Math.round(black * 100);
    ui.barBlack.style.width = `${percent}%`;
    ui.estBlack.textContent = `Black ${percent}%`;
    ui.estWhite.textContent = `White ${100 - percent}%`;
    ui.estSource.textContent = `win estimate: ${source}`;
  }

  // ------------------------------------------------------------------ wiring
  ui.newGame.addEventListener("click", newGame);
  ui.undo.addEventListener("click", undo);
  ui.side.addEventListener("change", newGame);
  ui.size.addEventListener("change", newGame);
  ui.numbers.addEventListener("change", render);
  buildBoard(FIRST_SIZE);
  startWorker();
  update();
})();

// The Web Worker: the net, the search and the classical players run here, so the page never
// freezes. Messages in (from app.js) and out:
//   {type: "init"}                                  -> {type: "ready", model} | {type: "error"}
//   {type: "move", id, size, moves, player}         -> {type: "progress", id, value, playouts}...,
//                                                      then {type: "result", id, move, value, ms, ...}
//      player: {kind: "az", playouts, vcf, vct} | {kind: "minimax" or "ab", depth} | {kind: "heuristic"} | {kind: "random"}
//   {type: "evaluate", id, size, moves}             -> {type: "evaluation", id, value} (the net alone)
// Values are for the player to move in the position sent; size is the board's side (one of the
// model's sizes, which the ready message lists).
importScripts("game.js", "net.js", "threats.js", "vct.js", "search.js", "players.js", "alphabeta.js");

const G = self.Gomoku;
let net = null;
let meta = null;
let az = null;  // the AlphaZero player: its search (the tree kept between moves) and its deep checks
let azKey = "";

function azPlayer(player, size) {
  const key = `${size}/${player.playouts}/${Boolean(player.vcf)}/${Boolean(player.vct)}`;
  if (!az || key !== azKey) {
    const search = new G.Search(new G.NetEvaluator(net, size, size), size, size, meta.n_in_row,
      { nPlayout: player.playouts, cPuct: meta.search.c_puct, forcedMoves: meta.search.forced_moves,
        vcf: Boolean(player.vcf) && meta.search.forced_moves, vcfNodes: meta.search.vcf_nodes,
        vct: Boolean(player.vct), vctNodes: meta.search.vct_nodes });
    az = new G.AlphaZeroPlayer(search, Boolean(player.vct), meta.search.check_nodes);
    azKey = key;
  }
  return az;
}

function move(msg) {
  const started = performance.now();
  const player = msg.player;
  if (player.kind === "az") {
    const evaluationsBefore = net.evaluations;
    const result = azPlayer(player, msg.size).analyse(msg.moves, player.playouts, (partial) => {
      postMessage({ type: "progress", id: msg.id, value: partial.value, playouts: partial.playouts });
    });
    postMessage({ type: "result", id: msg.id, move: result.bestMove, value: result.value,
      playouts: result.playouts, evaluations: net.evaluations - evaluationsBefore,
      visits: Array.from(result.visits), ms: performance.now() - started });
    return;
  }
  const board = G.Board.fromMoves(msg.moves, msg.size, msg.size, meta.n_in_row);
  const chosen = G.makeClassicalPlayer(player.kind, player.depth).getAction(board);
  postMessage({ type: "result", id: msg.id, move: chosen, value: null, ms: performance.now() - started });
}

function evaluate(msg) {
  const board = G.Board.fromMoves(msg.moves, msg.size, msg.size, meta.n_in_row);
  const planes = G.planesOf(board.cells, board.size, board.currentPlayer, board.lastMove);
  postMessage({ type: "evaluation", id: msg.id, value: net.forward(planes, msg.size, msg.size).value });
}

self.onmessage = async (event) => {
  const msg = event.data;
  try {
    if (msg.type === "init") {
      const loaded = await G.loadNet("");
      net = loaded.net;
      meta = loaded.meta;
      postMessage({ type: "ready", model: { source: meta.source, iteration: meta.iteration, games: meta.games,
        parameters: meta.parameters, width: meta.width, height: meta.height, head: net.head, sizes: net.sizes,
        search: meta.search } });
    } else if (msg.type === "move") {
      move(msg);
    } else if (msg.type === "evaluate") {
      evaluate(msg);
    }
  } catch (error) {
    postMessage({ type: "error", id: msg.id, message: String((error && error.message) || error) });
  }
};

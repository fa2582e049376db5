// Runs the page's scripts under node, for the tests and the benchmark (not part of the site).
//
//   node harness.js SITE_DIR < requests.json > answers.json
//
// SITE_DIR is an exported site (its scripts, model.json and weights.bin). The request is one JSON
// object with any of these lists; the answer has the same keys:
//   net:     [[move, ...] or {moves, size, full}, ...] -> [{logPolicy: [...], value}, ...] (the net,
//            unmasked; full: every point computed, without copying the empty board's far from stones)
//   search:  [{moves: [[...], ...], playouts, config: {...}, evaluator: "net" | "uniform" | "formula", size}]
//            (one search object, searched from each position in turn, so trees are reused)
//            -> [[{visits: [...], value, bestMove}, ...], ...]
//   az:      [{moves, playouts, config, evaluator, size, vct, checkNodes}] (a search job, searched by the
//            AlphaZero player with its deep checks) -> [[{visits, value, bestMove, playouts, refuted}, ...], ...]
//   finalCheck: [{moves, visits, priors, checkNodes}] -> [{refuted, bestMove}, ...] (the AlphaZero player's
//            final check of a search result with these visits, on the 9x9 board after moves)
//   players: [{kind, depth, moves, size}]    -> [move, ...]
//   vcf:     [{moves, nodes, size}]         -> [{status, move, nodes}, ...] (the player to move attacks)
//   vct:     [{moves, attacker, nodes, defences, size}] -> [{status, move, nodes, stops}, ...] (attacker:
//            1 or 2, default the player to move; defences: also which empty points, ascending, leave
//            the attacker without a VCT were the defender to play there: stops, a list of booleans)
//   bench:   {moves, playouts, repeat, size} -> {msPerEvaluation, msPerMove: [...]}
//   clicks:  [{moves, move, size}]         -> [the status line's words for a click there, or null: legal]
//   defaults: true                         -> {search: the search's defaults, vctNodes, vctLeafNodes,
//            leafVcfNodes, vcfNodes} (budgets: vct.js's, search.js's VCT leaf checks', vct.js's VCF checks')
// A size is the side of a square board (9 when not given).
"use strict";
const fs = require("fs");
const path = require("path");

const site = process.argv[2];
for (const name of ["game.js", "net.js", "threats.js", "vct.js", "search.js", "players.js", "alphabeta.js"]) {
  require(path.resolve(site, name));
}
const G = globalThis.Gomoku;

function loadNet() {
  const meta = JSON.parse(fs.readFileSync(path.join(site, "model.json"), "utf8"));
  const bytes = fs.readFileSync(path.join(site, meta.weights));
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return new G.Net(meta, buffer);
}

/**
 * A deterministic evaluator whose numbers are exact in binary, mirrored in tests/test_web.py:
 * priors proportional to 1 + (7 * move + key) % 11 over the legal moves, value ((key % 17) - 8) / 8,
 * where key sums (point + 1) * (1 for an own stone, 2 for an opponent's, 3 for the last move).
 */
class FormulaEvaluator {
  evaluate(cells, toMove, lastMove, legal) {
    let key = 0;
    for (let p = 0; p < cells.length; p++) {
      if (cells[p] === toMove) key += (p + 1) * 1;
      else if (cells[p] !== 0) key += (p + 1) * 2;
    }
    if (lastMove >= 0) key += (lastMove + 1) * 3;
    const priors = new Float64Array(legal.length);
    let total = 0;
    for (let m = 0; m < legal.length; m++) if (legal[m]) total += 1 + ((7 * m + key) % 11);
    for (let m = 0; m < legal.length; m++) if (legal[m]) priors[m] = (1 + ((7 * m + key) % 11)) / total;
    return { priors, value: ((key % 17) - 8) / 8 };
  }
}

function main() {
  const request = JSON.parse(fs.readFileSync(0, "utf8"));
  const answer = {};
  let net = null;
  const getNet = () => (net = net || loadNet());
  if (request.clicks) {
    answer.clicks = request.clicks.map(({ moves, move, size = 9 }) =>
      G.clickProblem(G.Board.fromMoves(moves, size, size), move));
  }
  if (request.net) {
    answer.net = request.net.map((job) => {
      const { moves, size = 9, full = false } = Array.isArray(job) ? { moves: job } : job;
      const board = G.Board.fromMoves(moves, size, size);
      const planes = G.planesOf(board.cells, board.size, board.currentPlayer, board.lastMove);
      getNet().skipFar = !full;
      const { logPolicy, value } = getNet().forward(planes, size, size);
      return { logPolicy: Array.from(logPolicy), value };
    });
  }
  const searchOf = (job) => {
    const size = job.size || 9;
    const evaluator = job.evaluator === "net" ? new G.NetEvaluator(getNet(), size, size)
      : job.evaluator === "formula" ? new FormulaEvaluator() : new G.UniformEvaluator();
    const config = Object.assign({ nPlayout: job.playouts }, job.config || {});
    return new G.Search(evaluator, size, size, 5, config);
  };
  if (request.ranked) {
    answer.ranked = request.ranked.map((job) => G.rankedMoves(job.visits, job.priors));
  }
  if (request.search) {
    answer.search = request.search.map((job) => {
      const search = searchOf(job);
      return job.moves.map((moves) => {
        const r = search.search(moves);
        return { visits: Array.from(r.visits), value: r.value, bestMove: r.bestMove };
      });
    });
  }
  if (request.az) {
    answer.az = request.az.map((job) => {
      const player = new G.AlphaZeroPlayer(searchOf(job), job.vct !== false, job.checkNodes);
      return job.moves.map((moves) => {
        const r = player.analyse(moves);
        return { visits: Array.from(r.visits), value: r.value, bestMove: r.bestMove, playouts: r.playouts,
          refuted: r.refuted };
      });
    });
  }
  if (request.finalCheck) {
    answer.finalCheck = request.finalCheck.map((job) => {
      const player = new G.AlphaZeroPlayer(searchOf({ playouts: 1 }), true, job.checkNodes);
      const board = G.Board.fromMoves(job.moves, 9, 9);
      const result = { visits: Float64Array.from(job.visits), priors: Float64Array.from(job.priors),
        bestMove: job.visits.indexOf(Math.max(...job.visits)), refuted: [] };
      player._finalCheck(board.cells, board.currentPlayer, result, job.checkNodes);
      return { refuted: result.refuted, bestMove: result.bestMove };
    });
  }
  if (request.players) {
    answer.players = request.players.map((job) => G.makeClassicalPlayer(job.kind, job.depth)
      .getAction(G.Board.fromMoves(job.moves, job.size || 9, job.size || 9)));
  }
  if (request.vcf) {
    answer.vcf = request.vcf.map((job) => {
      const size = job.size || 9;
      const board = G.Board.fromMoves(job.moves, size, size);
      const threats = new G.Threats(G.linesOf(size, size, 5), job.nodes);
      return threats.solve(board.cells, board.currentPlayer);
    });
  }
  if (request.vct) {
    answer.vct = request.vct.map((job) => {
      const size = job.size || 9;
      const board = G.Board.fromMoves(job.moves, size, size);
      const vct = new G.Vct(G.linesOf(size, size, 5), job.nodes);
      const attacker = job.attacker || board.currentPlayer;
      const result = Object.assign({}, vct.solve(board.cells, attacker));
      if (job.defences) {
        const empty = [];
        for (let p = 0; p < board.size; p++) if (!board.cells[p]) empty.push(p);
        result.stops = vct.defences(board.cells, 3 - attacker, empty);
      }
      return result;
    });
  }
  if (request.defaults) {
    answer.defaults = { search: G.SEARCH_DEFAULTS, vctNodes: G.VCT_DEFAULT_NODES, vctLeafNodes: G.VCT_LEAF_NODES,
      leafVcfNodes: G.VCT_LEAF_VCF_NODES, vcfNodes: G.VCF_DEFAULT_MAX_NODES };
  }
  if (request.bench) {
    const job = request.bench;
    const size = job.size || 9;
    const n = getNet();
    const board = G.Board.fromMoves(job.moves, size, size);
    const planes = G.planesOf(board.cells, board.size, board.currentPlayer, board.lastMove);
    for (let i = 0; i < 50; i++) n.forward(planes, size, size);
    let t = performance.now();
    for (let i = 0; i < 200; i++) n.forward(planes, size, size);
    const msPerEvaluation = (performance.now() - t) / 200;
    const msPerMove = [];
    for (let i = 0; i < (job.repeat || 3); i++) {
      const search = new G.Search(new G.NetEvaluator(n, size, size), size, size, 5, { nPlayout: job.playouts });
      t = performance.now();
      search.search(job.moves);
      msPerMove.push(performance.now() - t);
    }
    answer.bench = { msPerEvaluation, msPerMove };
  }
  process.stdout.write(JSON.stringify(answer));
}

main();

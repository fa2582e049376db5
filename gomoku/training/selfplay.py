"""Self-play: many games advanced together, their leaves batched, optionally across processes.

``SelfPlayRunner`` keeps ``parallel_games`` games going in one process: each step runs one
batched search over all of them (one network call per playout for the whole batch) and plays a
move in each. Finished games come back as ``SelfPlayGame`` with a training sample per position;
games still running are kept for the next call.

``WorkerPool`` runs one runner per process (``spawn``, one torch thread each) and also plays the
evaluation games of the pipeline, so both use every core. Each worker evaluates its leaves with
its own copy of the net, or (``selfplay.inference: server``) sends them to one ``InferenceServer``
in the pool's process, which batches the leaves of all workers into one network call.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import signal
from dataclasses import dataclass
from typing import Callable

import numpy as np

from gomoku.game.board import DRAW, Board
from gomoku.game.processes import worker_context
from gomoku.training.config import BoardConfig, SearchSection
from mcts import BatchedMCTS, Evaluator, SearchConfig, visit_policy
from nets.onnx_export import onnx_available

log = logging.getLogger(__name__)

GREEDY = 0.0  # temperature meaning "play the most visited move"


@dataclass
class SelfPlayGame:
    moves: list[int]
    winner: int  # 1, 2 or -1 (draw)
    states: np.ndarray  # float32 [T, 4, H, W], the recorded positions (every move's, unless
    #                     playout cap randomization records only the full searches)
    probs: np.ndarray  # float32 [T, H*W], the search's visit distribution there
    outcomes: np.ndarray  # float32 [T], +1 / -1 / 0 for the player to move there


def search_config(search: SearchSection, noise: bool) -> SearchConfig:
    return SearchConfig.of(search, noise=noise)


class SelfPlayRunner:
    def __init__(self, evaluator: Evaluator, board: BoardConfig, search: SearchSection,
                 parallel_games: int, rng: np.random.Generator):
        self.board_config = board
        self.search_section = search
        self.rng = rng
        self.search = BatchedMCTS(evaluator, board.width, board.height, board.n_in_row,
                                  search_config(search, noise=True), n_trees=parallel_games, rng=rng)
        self.boards = [self._new_board() for _ in range(parallel_games)]
        self.samples: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(parallel_games)]
        self.moves_played = 0  # moves made in all games, finished or not (for speed figures)

    def _new_board(self) -> Board:
        b = self.board_config
        return Board(b.width, b.height, b.n_in_row)

    def set_rng(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.search.rng = rng

    def play(self, min_games: int, on_game: Callable[[SelfPlayGame], None] | None = None) -> list[SelfPlayGame]:
        """Advance all games until at least ``min_games`` have finished; return the finished ones."""
        finished: list[SelfPlayGame] = []
        s = self.search_section
        while len(finished) < min_games:
            # Playout cap randomization: one draw per step for all games (see SearchSection).
            full = s.fast_playouts == 0 or self.rng.random() < s.full_search_prob
            if full:
                results = self.search.search(self.boards)
            else:
                results = self.search.search(self.boards, noise=False, n_playout=s.fast_playouts)
            for i, (board, result) in enumerate(zip(self.boards, results)):
                if result.improved is not None:  # Gumbel root: its move, its improved policy
                    move, target = result.selected, result.improved
                else:
                    early = len(board.moves) < s.temperature_moves
                    move_probs = visit_policy(result.visits, s.temperature if early else GREEDY)
                    move = int(self.rng.choice(len(move_probs), p=move_probs))
                    target = result.policy(1.0)
                if full:
                    self.samples[i].append((board.current_state(), target.astype(np.float32), board.current_player))
                board.do_move(move)
                self.moves_played += 1
                ended, winner = board.game_end()
                if ended:
                    game = self._finish(i, winner)
                    finished.append(game)
                    if on_game is not None:
                        on_game(game)
        return finished

    def _finish(self, i: int, winner: int) -> SelfPlayGame:
        samples, board = self.samples[i], self.boards[i]
        players = np.array([player for _, _, player in samples])
        outcomes = np.zeros(len(samples), dtype=np.float32)
        if winner != DRAW:
            outcomes[:] = np.where(players == winner, 1.0, -1.0)
        size = board.width * board.height
        states = np.stack([s for s, _, _ in samples]) if samples else np.zeros((0, 4, board.height, board.width),
                                                                                np.float32)
        probs = np.stack([p for _, p, _ in samples]) if samples else np.zeros((0, size), np.float32)
        game = SelfPlayGame(moves=list(board.moves), winner=winner, states=states, probs=probs, outcomes=outcomes)
        self.boards[i] = self._new_board()
        self.samples[i] = []
        self.search.reset(i)
        return game


# ---------------------------------------------------------------------------- processes
def _worker_main(worker_id: int, config_dict: dict, tasks: mp.Queue, results: mp.Queue,
                 remote: tuple | None = None) -> None:
    """Serve self-play and evaluation tasks until told to stop (runs in a child process).

    ``remote``: (requests, answers) queues of an ``InferenceServer``; self-play then evaluates its
    leaves there (its tasks carry no weights), and only evaluation games use the local net.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    import torch

    from gomoku.training.config import config_from_dict
    from gomoku.training.inference import RemoteEvaluator

    torch.set_num_threads(1)
    config = config_from_dict(config_dict)
    device, _ = resolve_inference(config.selfplay)
    net = WorkerNet(config, "cpu" if remote else device)
    server = RemoteEvaluator(worker_id, *remote) if remote else None
    runner = SelfPlayRunner(net.evaluator, config.board, config.search, config.selfplay.parallel_games,
                            np.random.default_rng(worker_id))
    while True:
        task = tasks.get()
        kind = task[0]
        if kind == "stop":
            return
        try:
            if kind == "selfplay":
                _, weights, min_games, seed = task
                runner.search.evaluator = server if server is not None else net.load(weights)
                runner.set_rng(np.random.default_rng(seed))
                before = runner.moves_played
                games = runner.play(min_games, on_game=lambda g: results.put(("progress", worker_id, 1)))
                results.put(("selfplay", worker_id, (games, runner.moves_played - before)))
            elif kind == "eval":
                _, weights, games, opponent, seed = task
                outcomes = play_eval_games(net.load(weights), config, games, opponent, seed,
                                           on_game=lambda: results.put(("progress", worker_id, 1)))
                results.put(("eval", worker_id, outcomes))
        except Exception as error:  # report, keep serving
            log.exception("worker %d failed", worker_id)
            results.put(("error", worker_id, repr(error)))


def resolve_inference(selfplay) -> tuple[str, str]:
    """(device, inference) that a ``SelfPlaySection``'s "auto" values stand for on this machine."""
    import torch

    device = selfplay.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    inference = selfplay.inference
    if inference == "auto":
        inference = "server" if device == "cuda" else "worker"
    return device, inference


class WorkerNet:
    """A worker's copy of the net: new weights in, an evaluator out (torch, or on a CPU onnxruntime,
    which runs this small net about twice as fast on a core; the weights are exported on each load)."""

    def __init__(self, config, device: str = "cpu"):
        from nets import NetConfig, NetEvaluator, build_net

        b, n = config.board, config.net
        self.net = build_net(NetConfig(b.width, b.height, n.arch, n.channels, n.blocks))
        self.torch_evaluator = NetEvaluator(self.net, device)
        runtime = config.selfplay.runtime
        self.onnx = device == "cpu" and (runtime == "onnx" or (runtime == "auto" and onnx_available()))
        self.evaluator = self.torch_evaluator

    def load(self, weights: dict):
        self.torch_evaluator.load_state_dict(weights)
        if self.onnx:  # exported in memory: no file to leave behind when the worker is killed
            from nets.onnx_evaluator import OnnxEvaluator
            from nets.onnx_export import onnx_bytes

            self.evaluator = OnnxEvaluator(onnx_bytes(self.net), threads=1)
        return self.evaluator


def play_eval_games(evaluator: Evaluator, config, game_indices: list[int], opponent: str,
                    seed: int, on_game: Callable[[], None] | None = None) -> list[tuple[int, int]]:
    """Play the model (no noise, greedy) against ``opponent`` (a player spec such as ``pure:1000``
    or ``minimax:2``); game ``i`` even: the model moves first. Each game's seeds derive from
    ``seed`` and ``i``, so a game's result does not depend on which worker plays it.

    Returns (game index, result for the model: 1 win, 0 draw, -1 loss) per game.
    """
    from gomoku.game.arena import play_game
    from gomoku.players import make_player
    from gomoku.players.search import AlphaZeroPlayer

    b = config.board
    out = []
    for index in game_indices:
        model = AlphaZeroPlayer.searching_as(evaluator, config.search, n_playout=config.eval.n_playout,
                                             seed=seed + 2 * index)
        other = make_player(opponent, seed=seed + 2 * index + 1)
        model_first = index % 2 == 0
        first, second = (model, other) if model_first else (other, model)
        record = play_game(first, second, Board(b.width, b.height, b.n_in_row))
        model_id = 1 if model_first else 2
        out.append((index, 0 if record.winner == DRAW else (1 if record.winner == model_id else -1)))
        if on_game is not None:
            on_game()
    return out


class WorkerError(RuntimeError):
    """A self-play worker failed, or kept dying."""


class _ResultSender:
    """A worker's end of its own result pipe, with the ``put`` of a queue: a message is written
    by the worker itself (no feeder thread), so what the pool reads is whole and a worker that
    dies can corrupt no one else's results."""

    def __init__(self, connection):
        self.connection = connection

    def put(self, message: tuple) -> None:
        self.connection.send(message)


class WorkerPool:
    """``n`` self-play processes, each fed through its own task queue and answering on its own pipe.

    With ``server_evaluator`` (a ``nets.NetEvaluator``), the workers' self-play leaves are
    evaluated by an ``InferenceServer`` thread in this process with it; self-play tasks then carry
    no weights (``None``): the caller keeps that evaluator's net up to date instead.

    A worker that dies (killed, out of memory) is started again and given its task again: the
    games of an unanswered task count only once its answer comes, so they are played again, not
    lost or counted twice (its unfinished games are dropped). More than ``MAX_RESTARTS`` deaths
    on one task raise ``WorkerError``, as does a task that fails with an exception.
    """

    MAX_RESTARTS = 3  # deaths of the worker of one task before run() gives up
    POLL_S = 5.0  # how often run() looks at the inference server while no worker says anything

    def __init__(self, n: int, config_dict: dict, server_evaluator=None):
        self._ctx = worker_context()
        self._config = config_dict
        self.server = None
        if server_evaluator is not None:
            from gomoku.training.inference import InferenceServer

            self.server = InferenceServer(server_evaluator, self._ctx.Queue(), [self._ctx.Queue() for _ in range(n)])
        self.processes: list = [None] * n
        self.tasks: list = [None] * n
        self._results: list = [None] * n
        self._next_id = n  # a restarted worker gets a new id: the server's late answers to the dead one go nowhere
        self.restarts = 0
        for slot in range(n):
            self._start(slot, slot)

    def _start(self, slot: int, worker_id: int) -> None:
        remote = None
        if self.server is not None:
            while len(self.server.answers) <= worker_id:
                self.server.answers.append(self._ctx.Queue())
            remote = (self.server.requests, self.server.answers[worker_id])
        tasks = self._ctx.Queue()
        reader, writer = self._ctx.Pipe(duplex=False)
        process = self._ctx.Process(target=_worker_main, daemon=True,
                                    args=(worker_id, self._config, tasks, _ResultSender(writer), remote))
        process.start()
        writer.close()  # the worker holds the only writer: its death reads as end-of-file here
        self.processes[slot], self.tasks[slot], self._results[slot] = process, tasks, reader

    def _restart(self, slot: int) -> None:
        old = self.processes[slot]
        log.warning("self-play worker %d (pid %s) died (exit code %s); starting it again", slot, old.pid,
                    old.exitcode)
        old.join(timeout=1.0)
        self._results[slot].close()
        self.restarts += 1
        self._start(slot, self._next_id)
        self._next_id += 1

    def __len__(self) -> int:
        return len(self.processes)

    def run(self, tasks: list[tuple], on_progress: Callable[[int], None] | None = None) -> list:
        """Send task i to worker i; return the workers' answers in worker order."""
        from multiprocessing.connection import wait

        for slot, process in enumerate(self.processes):  # died while idle
            if not process.is_alive():
                self._restart(slot)
        for slot, task in enumerate(tasks):
            self.tasks[slot].put(task)
        answers: dict[int, object] = {}
        progress = [0] * len(tasks)  # games reported by the task's current attempt
        deaths = [0] * len(tasks)
        while len(answers) < len(tasks):
            waiting = [slot for slot in range(len(tasks)) if slot not in answers]
            readers = {self._results[slot]: slot for slot in waiting}
            sentinels = {self.processes[slot].sentinel: slot for slot in waiting}
            ready = wait([*readers, *sentinels], timeout=self.POLL_S)
            if self.server is not None and self.server.error is not None:
                raise WorkerError(f"the inference server failed: {self.server.error!r}")
            for handle in ready:  # messages first: a worker may answer, then die
                if handle in readers:
                    self._receive(readers[handle], answers, progress, on_progress)
            for handle in ready:
                slot = sentinels.get(handle)
                if slot is None or slot in answers:
                    continue
                self._receive(slot, answers, progress, on_progress)  # what it sent before dying
                if slot in answers:
                    continue
                deaths[slot] += 1
                if deaths[slot] > self.MAX_RESTARTS:
                    raise WorkerError(f"self-play worker {slot} died {deaths[slot]} times on one task "
                                      f"(last exit code {self.processes[slot].exitcode})")
                if progress[slot] and on_progress is not None:
                    on_progress(-progress[slot])  # its games are played again
                progress[slot] = 0
                self._restart(slot)
                self.tasks[slot].put(tasks[slot])
        return [answers[slot] for slot in range(len(tasks))]

    def _receive(self, slot: int, answers: dict, progress: list[int],
                 on_progress: Callable[[int], None] | None) -> None:
        """Read every whole message waiting on ``slot``'s pipe."""
        reader = self._results[slot]
        try:
            while slot not in answers and reader.poll():
                kind, _, payload = reader.recv()
                if kind == "progress":
                    progress[slot] += payload
                    if on_progress is not None:
                        on_progress(payload)
                elif kind == "error":
                    raise WorkerError(f"self-play worker {slot} failed: {payload}")
                else:
                    answers[slot] = payload
        except (EOFError, OSError):  # the worker is gone: its sentinel says so
            pass

    def close(self) -> None:
        for q in self.tasks:
            try:
                q.put(("stop",))
            except (ValueError, OSError):
                pass
        for process in self.processes:
            process.join(timeout=2.0)
            if process.is_alive():
                process.terminate()
        for reader in self._results:
            reader.close()
        if self.server is not None:
            self.server.close()

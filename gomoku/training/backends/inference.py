"""One inference server for many self-play processes (``selfplay.inference: server``).

Each worker process keeps its own search trees but, instead of running a copy of the net, sends
the leaves of one search step to the pipeline's process and waits for the answer. There a thread
(``InferenceServer``) takes every request waiting, stacks them into one batch, runs the net once
(on the GPU when there is one) and sends each worker its slice back. With 16 workers of 16 games
each, the net sees batches of up to 256 positions instead of 16 batches of 16.

The server answers with the raw policy; the worker applies its legal-move mask, so a worker's
``RemoteEvaluator`` gives what ``nets.NetEvaluator`` on the same net gives (up to float rounding
of a different batch size).
"""

from __future__ import annotations

import logging
import queue
import threading

import numpy as np

from nets.evaluator import legal_priors

log = logging.getLogger(__name__)

POLL_S = 0.1  # how often an idle server looks at its stop flag


class RemoteEvaluator:
    """A worker's evaluator: the leaves go to the server, the priors and values come back."""

    def __init__(self, worker_id: int, requests, answers):
        self.worker_id = worker_id
        self.requests = requests  # shared by all workers: (worker id, planes)
        self.answers = answers  # this worker's own: (policy, values)

    def evaluate_batch(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.requests.put((self.worker_id, np.ascontiguousarray(planes, dtype=np.float32)))
        policy, values = self.answers.get()
        return legal_priors(policy, legal), values


class InferenceServer:
    """Serves ``RemoteEvaluator`` requests from a thread with ``net_evaluator.policy_value``.

    ``net_evaluator`` is a ``nets.NetEvaluator``; each round takes every request already waiting
    (at most one per worker, since a worker waits for its answer), so the batch grows with the
    number of workers and no request waits for a batch to fill.
    """

    def __init__(self, net_evaluator, requests, answers: list):
        self.evaluator = net_evaluator
        self.requests = requests
        self.answers = answers
        self.batches = 0
        self.positions = 0
        self.error: BaseException | None = None  # what stopped the thread, for the pool to raise
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="inference-server", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            self._loop()
        except BaseException as error:  # the workers would wait forever: tell the pool
            log.exception("inference server failed")
            self.error = error

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                batch = [self.requests.get(timeout=POLL_S)]
            except queue.Empty:
                continue
            while len(batch) < len(self.answers):
                try:
                    batch.append(self.requests.get_nowait())
                except queue.Empty:
                    break
            sizes = [len(planes) for _, planes in batch]
            policy, values = self.evaluator.policy_value(np.concatenate([planes for _, planes in batch]))
            self.batches += 1
            self.positions += len(policy)
            start = 0
            for (worker, _), size in zip(batch, sizes):
                self.answers[worker].put((policy[start:start + size], values[start:start + size]))
                start += size

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2 * POLL_S + 5.0)
        if self.batches:
            log.info("inference server: %d network calls, %.1f positions per call", self.batches,
                     self.positions / self.batches)

"""The inference server: workers' leaves batched into one network call (selfplay.inference)."""

import queue
import threading

import numpy as np
import pytest
import torch

from gomoku.training.config import load_config
from gomoku.training.backends.inference import InferenceServer, RemoteEvaluator
from gomoku.training.backends.worker import resolve_inference
from nets import NetConfig, NetEvaluator, build_net


def random_leaves(rng, n):
    planes = rng.integers(0, 2, (n, 4, 6, 6)).astype(np.float32)
    legal = rng.random((n, 36)) < 0.7
    return planes, legal


def test_remote_evaluators_get_what_the_net_gives():
    torch.manual_seed(0)
    local = NetEvaluator(build_net(NetConfig(6, 6)))
    requests, answers = queue.Queue(), [queue.Queue() for _ in range(3)]
    server = InferenceServer(local, requests, answers)
    rng = np.random.default_rng(0)
    leaves = [random_leaves(rng, n) for n in (1, 5, 16)]
    got = [None] * 3

    def worker(i):
        got[i] = [RemoteEvaluator(i, requests, answers[i]).evaluate_batch(*leaves[i]) for _ in range(4)]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    server.close()
    assert server.error is None and server.positions == 4 * (1 + 5 + 16)
    assert server.batches <= 12  # never more calls than requests; concurrent requests share one
    for (planes, legal), answers_i in zip(leaves, got):
        priors, values = local.evaluate_batch(planes, legal)
        for remote_priors, remote_values in answers_i:
            assert remote_priors.shape == priors.shape and remote_values.shape == values.shape
            np.testing.assert_allclose(remote_priors, priors, atol=1e-6)
            np.testing.assert_allclose(remote_values, values, atol=1e-6)
            assert not remote_priors[~legal].any()


def test_requests_waiting_together_are_one_network_call():
    """Every worker's request already waiting is served by one call, each worker answered with
    its own rows (the test above only bounds the calls by the requests)."""
    torch.manual_seed(0)
    local = NetEvaluator(build_net(NetConfig(6, 6)))
    requests, answers = queue.Queue(), [queue.Queue() for _ in range(3)]
    rng = np.random.default_rng(1)
    leaves = [random_leaves(rng, n)[0] for n in (2, 1, 3)]
    for worker in (2, 0, 1):  # out of order: the answers go by worker, not by position in the batch
        requests.put((worker, leaves[worker]))
    server = InferenceServer(local, requests, answers)
    got = [answers[i].get(timeout=30) for i in range(3)]
    server.close()
    assert server.error is None and (server.batches, server.positions) == (1, 6)
    for planes, (policy, values) in zip(leaves, got, strict=True):
        expected_policy, expected_values = local.policy_value(planes)
        np.testing.assert_allclose(policy, expected_policy, atol=1e-6)
        np.testing.assert_allclose(values, expected_values, atol=1e-6)


def test_a_failing_server_reports_its_error():
    class Broken:
        def policy_value(self, planes):
            raise RuntimeError("out of memory")

    requests, answers = queue.Queue(), [queue.Queue()]
    server = InferenceServer(Broken(), requests, answers)
    requests.put((0, np.zeros((1, 4, 6, 6), np.float32)))
    server._thread.join(timeout=10)
    assert isinstance(server.error, RuntimeError) and "out of memory" in str(server.error)


@pytest.mark.parametrize("overrides, cuda, expected", [
    ([], False, ("cpu", "worker")),
    ([], True, ("cuda", "server")),
    (["selfplay.inference=worker"], True, ("cuda", "worker")),
    (["selfplay.device=cpu"], True, ("cpu", "worker")),
    (["selfplay.inference=server"], False, ("cpu", "server")),
])
def test_auto_picks_the_server_on_cuda(monkeypatch, overrides, cuda, expected):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    assert resolve_inference(load_config(None, overrides).selfplay) == expected

"""The policy-value net, its evaluator, the training step, the KL rule and checkpoints."""

import numpy as np
import pytest
import torch

from gomoku import Board
from nets import (CheckpointError, NetConfig, NetEvaluator, Trainer, adjust_lr_multiplier, build_net,
                  count_parameters, flush_subnormals, kl_adaptive_update, load_checkpoint, load_net, save_checkpoint,
                  save_model)
from nets.training import explained_variance, kl_divergence


def test_conv3_shapes_and_parameter_count():
    net = build_net(NetConfig())
    assert count_parameters(net) == 131_132
    log_policy, value = net(torch.zeros(5, 4, 9, 9))
    assert log_policy.shape == (5, 81) and value.shape == (5,)
    torch.testing.assert_close(log_policy.exp().sum(1), torch.ones(5))
    assert (value.abs() <= 1).all()


def test_other_shapes_and_resnet():
    for config in (NetConfig(width=7, height=5), NetConfig(arch="resnet", channels=16, blocks=2)):
        net = build_net(config)
        log_policy, value = net(torch.zeros(2, 4, config.height, config.width))
        assert log_policy.shape == (2, config.width * config.height) and value.shape == (2,)
    with pytest.raises(ValueError, match="arch"):
        NetConfig(arch="transformer")


def test_evaluator_masks_illegal_moves():
    torch.manual_seed(0)
    evaluator = NetEvaluator(build_net(NetConfig()))
    board = Board.from_moves([40, 41, 0])
    planes = np.stack([board.current_state(), Board().current_state()])
    legal = planes[:, :2].sum(1).reshape(2, -1) == 0
    priors, values = evaluator.evaluate_batch(planes, legal)
    assert priors.shape == (2, 81) and values.shape == (2,)
    assert (priors[0, [40, 41, 0]] == 0).all()
    np.testing.assert_allclose(priors.sum(1), 1.0, rtol=1e-5)
    assert priors.dtype == np.float32 or priors.dtype == np.float64


def test_evaluator_chunks_give_the_same_answer():
    torch.manual_seed(0)
    net = build_net(NetConfig())
    planes = np.random.default_rng(0).integers(0, 2, (40, 4, 9, 9)).astype(np.float32)
    legal = np.ones((40, 81), bool)
    whole = NetEvaluator(net, chunk=0).evaluate_batch(planes, legal)
    chunked = NetEvaluator(net, chunk=16).evaluate_batch(planes, legal)
    np.testing.assert_allclose(whole[0], chunked[0], atol=1e-6)
    np.testing.assert_allclose(whole[1], chunked[1], atol=1e-6)


def _batch(n=64, seed=0):
    rng = np.random.default_rng(seed)
    states = rng.integers(0, 2, (n, 4, 9, 9)).astype(np.float32)
    probs = rng.dirichlet(np.ones(81), n).astype(np.float32)
    outcomes = rng.choice([-1.0, 1.0], n).astype(np.float32)
    return states, probs, outcomes


def test_training_step_lowers_the_loss_on_a_fixed_batch():
    torch.manual_seed(0)
    trainer = Trainer(build_net(NetConfig()), lr=2e-3)
    batch = _batch()
    first = trainer.train_step(*batch, lr=2e-3)
    for _ in range(30):
        last = trainer.train_step(*batch, lr=2e-3)
    assert last.loss < first.loss - 0.3
    assert last.loss == pytest.approx(last.policy_loss + last.value_loss, rel=1e-5)
    assert 0 < last.entropy <= np.log(81) + 1e-4


def test_kl_multiplier_rule():
    targ = 0.02
    assert adjust_lr_multiplier(0.05, 1.0, targ) == pytest.approx(1 / 1.5)  # KL > 2 targ: slow down
    assert adjust_lr_multiplier(0.005, 1.0, targ) == pytest.approx(1.5)  # KL < targ/2: speed up
    assert adjust_lr_multiplier(0.02, 1.0, targ) == 1.0  # in between: keep
    assert adjust_lr_multiplier(0.05, 0.1, targ) == 0.1  # floor
    assert adjust_lr_multiplier(0.005, 10.0, targ) == 10.0  # cap
    assert adjust_lr_multiplier(0.02, 7.59, targ, max_multiplier=3.0) == pytest.approx(4.5)  # a lowered cap


def test_kl_update_stops_early_when_kl_explodes():
    torch.manual_seed(0)
    trainer = Trainer(build_net(NetConfig()), lr=1.0)
    update = kl_adaptive_update(trainer, *_batch(), lr=0.5, lr_multiplier=1.0, epochs=5, kl_targ=1e-6)
    assert update.epochs == 1 and update.kl > 4e-6
    assert update.lr_multiplier == pytest.approx(1 / 1.5)


def test_kl_and_explained_variance_helpers():
    p = np.array([[0.5, 0.5]])
    assert kl_divergence(p, p) == pytest.approx(0.0, abs=1e-9)
    assert kl_divergence(p, np.array([[0.9, 0.1]])) > 0
    z = np.array([1.0, -1.0, 1.0, -1.0])
    assert explained_variance(z, z) == pytest.approx(1.0)
    assert explained_variance(z, np.zeros(4)) == pytest.approx(0.0)


def test_checkpoint_round_trip_weights_only(tmp_path):
    torch.manual_seed(0)
    net = build_net(NetConfig())
    trainer = Trainer(net, lr=1e-3)
    trainer.train_step(*_batch(8), lr=1e-3)
    rng = np.random.default_rng(5)
    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, {"net_config": net.config.to_dict(), "model": net.state_dict(),
                           "optimizer": trainer.optimizer.state_dict(), "iteration": 3,
                           "rng": rng.bit_generator.state})
    raw = torch.load(path, weights_only=True)  # loads with the safe unpickler
    assert raw["iteration"] == 3
    restored = np.random.default_rng()
    restored.bit_generator.state = raw["rng"]
    assert restored.random() == rng.random()
    again = load_net(path)
    x = torch.rand(3, 4, 9, 9)
    net.eval()
    torch.testing.assert_close(again(x)[0], net(x)[0])
    assert not list(tmp_path.glob("*.tmp"))


def test_model_file_and_errors(tmp_path):
    net = build_net(NetConfig(width=7, height=7))
    save_model(tmp_path / "m.pt", net)
    assert load_checkpoint(tmp_path / "m.pt")["net_config"]["width"] == 7
    with pytest.raises(CheckpointError, match="7x7 board, not 9x9"):
        load_net(tmp_path / "m.pt", width=9, height=9)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_net(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="not a gomoku-zero checkpoint"):
        load_net(tmp_path / "junk.pt")
    torch.save({"format": "gomoku-zero/1", "net_config": NetConfig().to_dict(),
                "model": build_net(NetConfig(width=7, height=7)).state_dict()}, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="do not fit"):
        load_net(tmp_path / "bad.pt")


def test_lr_multiplier_growth_stops_at_the_configured_cap():
    assert adjust_lr_multiplier(0.001, 3.0, 0.02, max_multiplier=3.0) == 3.0
    assert adjust_lr_multiplier(0.001, 2.9, 0.02, max_multiplier=3.0) == pytest.approx(2.9 * 1.5)
    assert adjust_lr_multiplier(0.1, 3.0, 0.02, max_multiplier=3.0) == pytest.approx(2.0)


def test_model_files_record_the_rule_they_were_trained_for(tmp_path, caplog):
    import logging

    from nets.checkpoint import load_model, model_n_in_row

    net = build_net(NetConfig())
    save_model(tmp_path / "four.pt", net, n_in_row=4, games=7)
    payload = load_checkpoint(tmp_path / "four.pt")
    assert payload["n_in_row"] == 4 and payload["games"] == 7
    assert load_model(tmp_path / "four.pt")[1] == 4
    save_model(tmp_path / "five.pt", net)  # the default rule
    assert load_model(tmp_path / "five.pt")[1] == 5
    # A model file from before the key existed: five in a row, and a log line says so.
    del payload["n_in_row"]
    torch.save(payload, tmp_path / "old.pt")
    with caplog.at_level(logging.INFO, logger="nets.checkpoint"):
        assert load_model(tmp_path / "old.pt")[1] == 5
    assert "records no n_in_row" in caplog.text and "old.pt" in caplog.text
    # A training checkpoint without the key: the rule of its training config.
    assert model_n_in_row({"config": {"board": {"n_in_row": 4}}}) == 4
    with pytest.raises(CheckpointError, match="invalid n_in_row"):
        model_n_in_row({"n_in_row": "five"})
    with pytest.raises(ValueError, match="n_in_row"):
        save_model(tmp_path / "bad.pt", net, n_in_row=0)
    assert not (tmp_path / "bad.pt").exists()


SUBNORMAL = 1e-40  # below float32's smallest normal number, 1.18e-38


def _subnormals(tensors) -> int:
    """How many subnormal entries (flush_subnormals on copies; checked against bits below)."""
    return flush_subnormals([t.clone() for t in tensors])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_flush_subnormals_zeroes_exactly_the_subnormal_entries(dtype):
    torch.set_flush_denormal(False)  # trainers and evaluators turn it on: see the numbers as they are
    info = torch.finfo(dtype)
    values = [0.0, -0.0, info.tiny / 2, -info.tiny / 4, info.smallest_normal, -info.tiny, 1e-3, -1.0, float("inf")]
    t = torch.tensor(values, dtype=dtype)
    assert t[2] != 0 and t[3] != 0  # representable as subnormals
    ints = torch.tensor([0, 1, 2])
    assert flush_subnormals([t, ints]) == 2
    expected = torch.tensor([0.0, -0.0, 0.0, 0.0, info.smallest_normal, -info.tiny, 1e-3, -1.0, float("inf")],
                            dtype=dtype)
    bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[dtype.itemsize]
    assert torch.equal(t.view(bits), expected.view(bits))  # flushed to +0; -0.0 is not subnormal
    assert flush_subnormals([t]) == 0 and ints.tolist() == [0, 1, 2]


def _net_with_subnormals(seed: int = 0):
    torch.set_flush_denormal(False)
    torch.manual_seed(seed)
    net = build_net(NetConfig())
    with torch.no_grad():
        for p in net.parameters():
            p.view(-1)[::50] = SUBNORMAL
    assert _subnormals(net.parameters()) > 1000
    return net


def test_training_and_loading_leave_no_subnormal_weights(tmp_path):
    # A trainer zeroes them in the weights and in Adam's state after every step ...
    trainer = Trainer(_net_with_subnormals(), lr=2e-3)
    rng = np.random.default_rng(0)
    states = rng.integers(0, 2, (8, 4, 9, 9)).astype(np.float32)
    probs = rng.dirichlet(np.ones(81), 8).astype(np.float32)
    trainer.train_step(states, probs, rng.choice([-1.0, 1.0], 8).astype(np.float32), lr=0.0)
    torch.set_flush_denormal(False)
    assert _subnormals(trainer.tensors()) == 0 and len(list(trainer.tensors())) > len(trainer.net.state_dict())
    # ... and loading a file written before that (here: one that holds them) zeroes them too.
    path = tmp_path / "old.pt"
    save_model(path, _net_with_subnormals())
    assert _subnormals(load_checkpoint(path)["model"].values()) > 1000
    assert _subnormals(load_net(path).state_dict().values()) == 0


def test_an_atomic_write_goes_through_a_link_and_never_replaces_a_device_or_a_pipe(tmp_path, capsys):
    """As root, `export_onnx.py model /dev/null` put a regular file in /dev/null's place (the
    rename replaces whatever is there); a symbolic link was replaced by a file, its target kept."""
    import os

    from nets.checkpoint import atomic_write
    from tests.fakes import load_script

    target, link, pipe = tmp_path / "target.bin", tmp_path / "link.bin", tmp_path / "pipe.bin"
    target.write_bytes(b"old")
    link.symlink_to(target.name)
    os.mkfifo(pipe)
    atomic_write(link, lambda handle: handle.write(b"new"))
    assert link.is_symlink() and target.read_bytes() == b"new"
    with pytest.raises(OSError, match="not a regular file"):
        atomic_write(pipe, lambda handle: handle.write(b"new"))
    assert pipe.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["link.bin", "pipe.bin", "target.bin"]
    script = load_script("export_onnx")
    assert script.output_problem(tmp_path / "model.pt", pipe) == (
        f"the output {pipe} is not a regular file (a device, a pipe): give the file to write")


def test_a_net_with_non_finite_outputs_is_refused_not_played(tmp_path):
    """Finite weights can still give NaN (a huge bias): the search then renormalised NaN priors
    and played an occupied point. The load refuses such a file, naming it; legal_priors refuses
    NaN on a legal move, and a NaN on an illegal one no longer spreads to the legal ones."""
    from nets.checkpoint import load_net, save_model
    from nets.evaluator import legal_priors

    net = build_net(NetConfig())
    with torch.no_grad():
        net.conv1.bias.fill_(3e38)
    path = tmp_path / "nan.pt"
    save_model(path, net)
    with pytest.raises(CheckpointError, match=f"^{path}: the net's outputs are not finite"):
        load_net(path)
    fine = tmp_path / "fine.pt"
    save_model(fine, build_net(NetConfig()))
    assert not load_net(fine).training  # loaded as it plays
    legal = np.array([[True, True, False, False]])
    np.testing.assert_allclose(legal_priors(np.array([[0.2, 0.3, np.nan, 0.5]]), legal), [[0.4, 0.6, 0, 0]])
    with pytest.raises(ValueError, match="not finite"):
        legal_priors(np.array([[np.nan, 0.3, 0.2, 0.5]]), legal)

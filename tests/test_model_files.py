"""Hostile and damaged model files: every loader refuses them with a one-line CheckpointError
naming the file, before building a net or running anything from them (fault injection: flipped
bytes, truncation, foreign zips, unsafe pickles, NaN weights, shapes that do not fit)."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest
import torch

from nets import CheckpointError, NetConfig, build_net, load_checkpoint, load_net, save_checkpoint, save_model
from nets import checkpoint as checkpoint_module
from nets.checkpoint import FORMAT, load_model
from nets.model import MAX_BLOCKS, MAX_BOARD_SIDE, MAX_CHANNELS, count_parameters

LOCAL_HEADER = struct.Struct("<4s5H3I2H")  # a zip member's local file header (30 bytes)


def _model(path: Path, width: int = 5, height: int = 5) -> Path:
    torch.manual_seed(0)
    save_model(path, build_net(NetConfig(width=width, height=height)))
    return path


def _member_data_offset(path: Path, member: str) -> tuple[int, int]:
    """(offset of the member's bytes in the file, their length)."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        fields = LOCAL_HEADER.unpack(handle.read(LOCAL_HEADER.size))
    name_length, extra_length = fields[-2], fields[-1]
    return info.header_offset + LOCAL_HEADER.size + name_length + extra_length, info.file_size


def _flip_byte(path: Path, member_suffix: str = "/data/0") -> None:
    """Flip the bits of one byte in the middle of the first member whose name ends with the suffix."""
    with zipfile.ZipFile(path) as archive:
        member = next(name for name in archive.namelist() if name.endswith(member_suffix))
    offset, length = _member_data_offset(path, member)
    data = bytearray(path.read_bytes())
    data[offset + length // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _refused(path: Path, match: str, **kwargs) -> str:
    with pytest.raises(CheckpointError, match=match) as caught:
        load_checkpoint(path, **kwargs)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def test_a_sound_file_loads(tmp_path):
    path = _model(tmp_path / "m.pt")
    net, n_in_row = load_model(path)
    assert net.config == NetConfig(width=5, height=5) and n_in_row == 5


def test_a_flipped_byte_is_refused_by_its_checksum(tmp_path):
    path = _model(tmp_path / "m.pt")
    before = load_checkpoint(path)["model"]
    _flip_byte(path)
    torch_sees = torch.load(path, weights_only=True)["model"]  # torch alone loads it without a word
    assert sum(not torch.equal(torch_sees[name], tensor) for name, tensor in before.items()) == 1
    _refused(path, "corrupt: the checksum")
    with pytest.raises(CheckpointError, match="corrupt"):
        load_net(path)


def test_a_flipped_byte_in_the_pickle_is_refused_too(tmp_path):
    path = _model(tmp_path / "m.pt")
    _flip_byte(path, "/data.pkl")
    _refused(path, "corrupt: the checksum")


@pytest.mark.parametrize("damage", ["truncated", "junk", "empty", "compressed", "folder"])
def test_truncated_foreign_and_compressed_files_are_refused(tmp_path, damage):
    path = _model(tmp_path / "m.pt")
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "junk":
        path.write_bytes(b"PK\x03\x04 but nothing of a zip after it")
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "compressed":  # the same members, deflated: not what torch writes (nor a zip bomb)
        with zipfile.ZipFile(path) as archive:
            members = [(info.filename, archive.read(info)) for info in archive.infolist()]
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in members:
                archive.writestr(name, data)
        path.write_bytes(buffer.getvalue())
    else:
        path.unlink()
        path.mkdir()
        with pytest.raises(CheckpointError, match="no checkpoint"):
            load_checkpoint(path)
        return
    _refused(path, "not a gomoku-zero checkpoint")


class _Hostile:
    """An object whose unpickling would run a command (it must never run)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        import os

        return os.system, (f"touch {self.marker}",)


def test_an_unsafe_pickle_never_runs_and_is_refused_in_one_line(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    torch.save({"format": FORMAT, "net_config": NetConfig().to_dict(), "model": {}, "gift": _Hostile(marker)}, path)
    message = _refused(path, "not a gomoku-zero checkpoint or holds unsafe content")
    assert "weights_only" not in message
    assert not marker.exists()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_weights_are_refused(tmp_path, bad):
    net = build_net(NetConfig(width=5, height=5))
    with torch.no_grad():
        net.heads.value_fc2.bias[0] = bad
    save_model(tmp_path / "m.pt", net)
    _refused(tmp_path / "m.pt", "non-finite weights .* in heads.value_fc2.bias")


def _save_raw(path: Path, net_config: dict, model: dict) -> Path:
    save_checkpoint(path, {"net_config": net_config, "model": model})
    return path


def test_declared_shapes_are_checked_before_any_net_is_built(tmp_path, monkeypatch):
    """A small file declaring a big net: refused from the shapes alone, the net built only on
    the meta device (no memory)."""
    small = build_net(NetConfig(width=5, height=5)).state_dict()
    built = []
    real_build = checkpoint_module.build_net

    def spy(config):
        net = real_build(config)
        built.append(next(net.parameters()).device.type)
        return net

    monkeypatch.setattr(checkpoint_module, "build_net", spy)
    path = _save_raw(tmp_path / "big.pt", NetConfig(width=MAX_BOARD_SIDE, height=MAX_BOARD_SIDE, arch="resnet",
                                                    channels=MAX_CHANNELS, blocks=MAX_BLOCKS).to_dict(), small)
    with pytest.raises(CheckpointError, match="do not fit its net_config") as caught:
        load_net(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    assert built == ["meta"]
    built.clear()
    assert load_net(_save_raw(tmp_path / "fits.pt", NetConfig(width=5, height=5).to_dict(), small))
    assert built == ["meta", "cpu"]


def test_the_largest_net_a_config_may_declare_is_under_a_gigabyte():
    with torch.device("meta"):
        net = build_net(NetConfig(width=MAX_BOARD_SIDE, height=MAX_BOARD_SIDE, arch="resnet", channels=MAX_CHANNELS,
                                  blocks=MAX_BLOCKS))
    assert 4 * count_parameters(net) < 2 ** 30


@pytest.mark.parametrize("change", [{"width": 200, "height": 200}, {"channels": 10 ** 8}, {"blocks": 10 ** 9},
                                    {"width": 9.5}, {"width": "9"}, {"width": True}, {"arch": "huge"},
                                    {"depth": 3}])
def test_declared_sizes_out_of_bounds_are_refused(tmp_path, change):
    small = build_net(NetConfig(width=5, height=5)).state_dict()
    path = _save_raw(tmp_path / "m.pt", {**NetConfig(width=5, height=5).to_dict(), **change}, small)
    with pytest.raises(CheckpointError, match="no valid net_config") as caught:
        load_net(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_missing_extra_and_foreign_weights_are_refused(tmp_path):
    state = build_net(NetConfig(width=5, height=5)).state_dict()
    config = NetConfig(width=5, height=5).to_dict()
    missing = {k: v for k, v in state.items() if k != "conv2.bias"}
    with pytest.raises(CheckpointError, match=r"missing \['conv2.bias'\]"):
        load_net(_save_raw(tmp_path / "a.pt", config, missing))
    with pytest.raises(CheckpointError, match=r"unexpected \['extra'\]"):
        load_net(_save_raw(tmp_path / "b.pt", config, {**state, "extra": torch.zeros(1)}))
    weight = state["conv1.weight"]
    for foreign in ("not a tensor", weight.to_sparse(), weight.to(torch.complex64),
                    torch.empty(weight.shape, device="meta")):
        _save_raw(tmp_path / "c.pt", config, {**state, "conv1.weight": foreign})
        _refused(tmp_path / "c.pt", "'conv1.weight' is not a tensor of real numbers")


def test_a_model_file_is_not_a_run_checkpoint(tmp_path):
    path = _model(tmp_path / "checkpoint.pt")
    assert load_checkpoint(path)["n_in_row"] == 5
    _refused(path, "is a model file, not a run checkpoint", training=True)


def test_every_front_end_refuses_a_damaged_file_in_one_line(tmp_path):
    """The players (play, evaluate), the engine and resume all load through load_checkpoint."""
    from gomoku.pbrain.loader import EngineOptions, Players
    from gomoku.pbrain.protocol import ProtocolError
    from gomoku.players import make_player
    from gomoku.training.pipeline import TrainPipeline

    path = _model(tmp_path / "m.pt")
    _flip_byte(path)
    with pytest.raises(ValueError, match="corrupt"):
        make_player(f"az:{path}:10")
    with pytest.raises(ProtocolError, match="corrupt") as caught:
        Players(EngineOptions(model=path), message=lambda text: None).main()
    assert "\n" not in str(caught.value)
    run = tmp_path / "run"
    run.mkdir()
    _model(run / "checkpoint.pt")
    with pytest.raises(CheckpointError, match="model file, not a run checkpoint"):
        TrainPipeline(None, run, device="cpu", resume=True, progress=False)
    _flip_byte(run / "checkpoint.pt")
    with pytest.raises(CheckpointError, match="corrupt"):
        TrainPipeline(None, run, device="cpu", resume=True, progress=False)


def test_a_model_of_another_rule_is_refused_when_loaded(tmp_path):
    """play (the window's opponent), evaluate and the engine refuse a net trained for 4 in a row
    before the first move, not at the AI's first move."""
    from gomoku.matches.arena import evaluate
    from gomoku.pbrain.loader import EngineOptions, Players
    from gomoku.pbrain.protocol import ProtocolError
    from gomoku.ui.ai import build_opponent
    from gomoku.ui.session import SetupError

    path = tmp_path / "four.pt"
    save_model(path, build_net(NetConfig()), n_in_row=4)
    with pytest.raises(SetupError, match="trained for 4 in a row"):
        build_opponent(f"az:{path}:8", size=9, seed=0)
    with pytest.raises(ValueError, match="trained for 4 in a row"):
        evaluate(f"az:{path}:8", ["random"], games=1)
    with pytest.raises(ProtocolError, match="trained for 4 in a row"):
        Players(EngineOptions(model=path, playouts=8), message=lambda text: None).for_board(9, 9)


class _FullDisk(io.RawIOBase):
    """A file that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, handle, room: int):
        self.handle, self.room = handle, room

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if len(data) > self.room:
            import errno

            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(data)
        return self.handle.write(data)

    def fileno(self) -> int:
        return self.handle.fileno()

    def close(self) -> None:
        self.handle.close()
        super().close()


def test_a_full_disk_during_a_save_is_an_oserror_and_loses_nothing(tmp_path, monkeypatch):
    import errno
    import os

    path = _model(tmp_path / "m.pt")
    before = path.read_bytes()
    real_fdopen = os.fdopen
    monkeypatch.setattr(checkpoint_module.os, "fdopen", lambda fd, mode: _FullDisk(real_fdopen(fd, mode), 1000))
    with pytest.raises(OSError) as caught:
        save_model(path, build_net(NetConfig(width=5, height=5)))
    assert caught.value.errno == errno.ENOSPC and type(caught.value) is OSError
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["m.pt"]


def test_on_cpu_keeps_the_structure_and_detaches_every_tensor():
    from nets import on_cpu

    weight = torch.ones(2, requires_grad=True)
    state = {"state": {0: {"step": torch.tensor(3.0), "exp_avg": weight * 2}},
             "param_groups": [{"lr": 0.002, "params": [0]}], "pair": (weight, "name")}
    moved = on_cpu(state)
    assert moved["param_groups"] == [{"lr": 0.002, "params": [0]}] and moved["pair"][1] == "name"
    assert isinstance(moved["pair"], tuple) and sorted(moved["state"][0]) == ["exp_avg", "step"]
    tensors = [moved["state"][0]["step"], moved["state"][0]["exp_avg"], moved["pair"][0]]
    assert all(t.device.type == "cpu" and not t.requires_grad for t in tensors)
    assert torch.equal(moved["state"][0]["exp_avg"], torch.full((2,), 2.0))

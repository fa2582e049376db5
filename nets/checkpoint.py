"""Self-describing checkpoints, written atomically, loadable with ``torch.load(weights_only=True)``.

A checkpoint is a dict with at least ``format``, ``net_config`` (a plain dict) and ``model`` (the
state dict); a training checkpoint adds the optimiser, counters and RNG states. Everything in it
is a tensor (on the CPU, whatever device trained it), a Python scalar, a string or a container of those.

A model also records the rule it was trained for, ``n_in_row`` (stones in a row that win), so
that a player refuses a board with another rule instead of playing it with the wrong net.
Model files from before that key hold none: ``model_n_in_row`` then reads the training config
of a training checkpoint, or assumes 5 and logs it.

Loading trusts nothing in the file: the zip's CRCs are checked (torch does not), the pickle may
hold only tensors and plain values (``weights_only``), the weights must be finite, and the shapes
the ``net_config`` declares must be those of the stored tensors before any net is built (so a
small file cannot make a loader allocate a huge net). Each failure is a one-line CheckpointError
naming the file.
"""

from __future__ import annotations

import contextlib
import errno
import io
import logging
import os
import pickle
import re
import signal
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import torch
from torch import nn

from nets.model import NetConfig, build_net, flush_subnormals
from nets.probe import net_problem

FORMAT = "gomoku-zero/1"
FILE_MODE = 0o644  # mkstemp makes 0600 files; checkpoints are meant to be shared
DEFAULT_N_IN_ROW = 5  # the rule of checkpoints that do not record one (all before the key existed)

log = logging.getLogger(__name__)


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or does not fit what it is loaded for."""


TMP_SUFFIX = ".tmp"  # temp files are ".<name>.<random>.tmp" next to their target
_TEMP_NAME = re.compile(r"\.(?P<target>.+)\.[a-z0-9_]+" + re.escape(TMP_SUFFIX))  # mkstemp's random part


def temp_target(name: str) -> str | None:
    """The name of the file whose ``atomic_write`` left the temp file ``name``; None when ``name``
    is not such a temp file's."""
    match = _TEMP_NAME.fullmatch(name)
    return match["target"] if match else None


DEFERRED_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block is done, then deliver the first one that came to
    the handler that was in place (so Ctrl-C or a second `kill` cannot cut a save in half).

    Only the main thread can handle signals; elsewhere the block runs as it is. Nests."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = {number: signal.signal(number, lambda signum, frame: pending.append(signum))
                for number in DEFERRED_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        if pending:
            handler = previous[pending[0]]
            if callable(handler):
                handler(pending[0], None)
            elif handler in (signal.SIG_DFL, None):
                signal.raise_signal(pending[0])


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None],
                 before_replace: Callable[[], None] | None = None) -> None:
    """Write a file atomically: ``write(handle)`` into a temp file in the same folder, flushed to
    disk, then ``os.replace`` (the folder flushed after it). SIGINT/SIGTERM wait until it is done; on any error the temp file
    is removed. ``before_replace`` runs between the two (a fault-injection point for tests).

    A symbolic link is written through (its target is replaced, the link stays); a path that is
    neither a file nor missing (a device such as /dev/null, a pipe, a folder) is an OSError: the
    rename would put a regular file in its place."""
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    if path.exists() and not path.is_file():
        raise OSError(errno.EEXIST, "not a regular file, which a write would replace", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    with deferred_signals():
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                write(handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, FILE_MODE)
            if before_replace is not None:
                before_replace()
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Flush a folder's entries to disk (the rename above survives a power cut too); where folders
    cannot be opened (Windows), the rename is all there is."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def on_cpu(value):
    """``value`` with every tensor in it (in nested dicts, lists and tuples) detached and on the CPU:
    what a checkpoint stores, so that it loads on any machine, with or without a GPU."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {key: on_cpu(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(on_cpu(item) for item in value)
    return value


def save_checkpoint(path: str | os.PathLike, payload: dict,
                    before_replace: Callable[[], None] | None = None) -> None:
    """Write ``payload`` to ``path`` atomically (``atomic_write``). It is serialised in memory
    first, so that a failed write (a full disk) raises the OSError itself, not a torch error."""
    buffer = io.BytesIO()
    torch.save({"format": FORMAT, **payload}, buffer)
    data = buffer.getbuffer()
    atomic_write(path, lambda handle: handle.write(data), before_replace)


def first_line(error: BaseException) -> str:
    """An exception's message cut to its first line (some libraries write pages), or its type's name."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _verified_bytes(path: Path) -> bytes:
    """The file's bytes, once the zip archive torch writes is intact: every member stored (torch
    compresses nothing, so a compressed member is foreign, and cannot be a zip bomb) and its CRC right."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CheckpointError(f"cannot read {path}: {error.strerror or error}") from error
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            compressed = any(info.compress_type != zipfile.ZIP_STORED for info in archive.infolist())
            damaged = None if compressed else archive.testzip()
    except Exception as error:  # zipfile raises several types for a truncated or foreign file
        raise CheckpointError(f"{path} is not a gomoku-zero checkpoint (not a readable torch file: "
                              f"{first_line(error)})") from error
    if compressed:
        raise CheckpointError(f"{path} is not a gomoku-zero checkpoint (a zip file with compressed members)")
    if damaged is not None:
        raise CheckpointError(f"{path} is corrupt: the checksum of its part {damaged!r} does not match "
                              "(a damaged or changed byte); use another copy")
    return data


def _is_real_dense(tensor) -> bool:
    """A tensor of real numbers with its data there (not sparse, meta, complex or quantised)."""
    return (isinstance(tensor, torch.Tensor) and tensor.layout == torch.strided and not tensor.is_meta
            and not tensor.is_complex() and not tensor.is_quantized)


def load_checkpoint(path: str | os.PathLike, map_location: str | torch.device = "cpu",
                    training: bool = False) -> dict:
    """The checkpoint at ``path``, checked (see the module docstring); ``training``: it must be a
    run's training checkpoint (with the optimiser state), not a model file."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    data = _verified_bytes(path)
    try:
        payload = torch.load(io.BytesIO(data), map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:  # torch's text suggests weights_only=False: never
        raise CheckpointError(f"{path} is not a gomoku-zero checkpoint or holds unsafe content "
                              "(objects other than tensors and plain values); it was not loaded") from error
    except Exception as error:  # torch raises several types for a damaged or foreign file
        raise CheckpointError(f"{path} is not a readable checkpoint: {first_line(error)}") from error
    if not isinstance(payload, dict) or payload.get("format") != FORMAT or not isinstance(payload.get("model"), dict):
        raise CheckpointError(f"{path} is not a gomoku-zero checkpoint (format {FORMAT!r})")
    for name, tensor in payload["model"].items():
        if not _is_real_dense(tensor):
            raise CheckpointError(f"{path} is not a gomoku-zero checkpoint: its weight {name!r} is not "
                                  "a tensor of real numbers")
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"{path} holds non-finite weights (NaN or infinity) in {name}: "
                                  "the model is broken and cannot be used")
    if training and "optimizer" not in payload:
        raise CheckpointError(f"{path} is a model file, not a run checkpoint (it holds no optimiser "
                              "state or counters): a run resumes only from the checkpoint.pt it wrote")
    return payload


def _check_shapes(config: NetConfig, weights: dict, source: str) -> None:
    """Raise CheckpointError unless ``weights`` has exactly the tensors, of exactly the shapes,
    of the net ``config`` describes; the net is built on the meta device (no memory) to see them."""
    with torch.device("meta"):
        expected = {name: tuple(t.shape) for name, t in build_net(config).state_dict().items()}
    missing = [name for name in expected if name not in weights]
    extra = [name for name in weights if name not in expected]
    if missing or extra:
        raise CheckpointError(f"{source}: the weights do not fit its net_config {config.to_dict()}: "
                              f"missing {missing[:3]}, unexpected {extra[:3]}")
    for name, shape in expected.items():
        if tuple(weights[name].shape) != shape:
            raise CheckpointError(f"{source}: the weights do not fit its net_config {config.to_dict()}: "
                                  f"{name} is {list(weights[name].shape)} in the file, "
                                  f"the config makes it {list(shape)}")


def net_from_checkpoint(payload: dict, width: int | None = None, height: int | None = None,
                        path: str | os.PathLike | None = None) -> nn.Module:
    """Build the net a checkpoint describes, once its weights fit it, in eval mode; check that it
    plays the board size when one is given (an fc net only its own, a pooled net any;
    ``NetConfig.plays``) and gives finite outputs. ``path`` names the file in the errors."""
    source = str(path) if path is not None else "checkpoint"
    try:
        config = NetConfig(**payload["net_config"])
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{source} has no valid net_config: {first_line(error)}") from error
    if (width, height) != (None, None) and not config.plays(width or config.width, height or config.height):
        raise CheckpointError(f"{source} is for {config.sizes_played()}, "
                              f"not {width or config.width}x{height or config.height}")
    _check_shapes(config, payload["model"], source)
    net = build_net(config)
    try:
        net.load_state_dict(payload["model"])
    except RuntimeError as error:
        raise CheckpointError(f"{source}: the weights do not fit its net_config: {first_line(error)}") from error
    flush_subnormals(net.state_dict().values())  # older files may hold some (nets.model)
    net.eval()  # as it plays (a residual tower's batch norms use their running statistics)
    problem = net_problem(net)
    if problem is not None:
        raise CheckpointError(f"{source}: the net's outputs are {problem} on the probe positions: "
                              "its weights are broken")
    return net


def load_net(path: str | os.PathLike, width: int | None = None, height: int | None = None,
             map_location: str | torch.device = "cpu") -> nn.Module:
    return net_from_checkpoint(load_checkpoint(path, map_location), width, height, path)


def n_in_row_problem(n_in_row, config: NetConfig) -> str | None:
    """Why ``n_in_row`` cannot be the rule of a net for ``config``'s board (None when it can): it
    must be a whole number from 1 to the board's longer side, as ``Board`` asks."""
    longest = max(config.width, config.height)
    if isinstance(n_in_row, bool) or not isinstance(n_in_row, int) or not 1 <= n_in_row <= longest:
        return (f"n_in_row must be a whole number from 1 to {longest} (the longer side of its "
                f"{config.width}x{config.height} board), got {n_in_row!r}")
    return None


def model_n_in_row(payload: dict, path: str | os.PathLike | None = None) -> int:
    """The stones in a row the checkpoint's net was trained to win with: its ``n_in_row`` key,
    else its training config's ``board.n_in_row``, else DEFAULT_N_IN_ROW (logged); one that does
    not fit the board of the checkpoint's ``net_config`` (``n_in_row_problem``) is a CheckpointError."""
    value = payload.get("n_in_row")
    if value is None:
        board = payload.get("config", {}).get("board", {}) if isinstance(payload.get("config"), dict) else {}
        value = board.get("n_in_row") if isinstance(board, dict) else None
    if value is None:
        log.info("%s records no n_in_row (an older checkpoint): assuming %d in a row",
                 path or "checkpoint", DEFAULT_N_IN_ROW)
        return DEFAULT_N_IN_ROW
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CheckpointError(f"{path or 'checkpoint'} has an invalid n_in_row: {value!r}")
    try:
        config = NetConfig(**payload["net_config"])
    except (KeyError, TypeError, ValueError):  # net_from_checkpoint names a bad net_config
        return value
    problem = n_in_row_problem(value, config)
    if problem is not None:
        raise CheckpointError(f"{path or 'checkpoint'} has an invalid n_in_row: {problem}")
    return value


def load_model(path: str | os.PathLike, width: int | None = None, height: int | None = None,
               map_location: str | torch.device = "cpu") -> tuple[nn.Module, int]:
    """The net of a model or training checkpoint and the n_in_row it was trained for."""
    payload = load_checkpoint(path, map_location)
    return net_from_checkpoint(payload, width, height, path), model_n_in_row(payload, path)


def save_model(path: str | os.PathLike, net: nn.Module, *, n_in_row: int = DEFAULT_N_IN_ROW, **extra) -> None:
    """A small model file: net config, weights and the ``n_in_row`` rule the net was trained
    for (pass the training board's), no optimiser (what ships in models/). An ``n_in_row`` that
    does not fit the net's board (``n_in_row_problem``) is a ValueError naming ``path``."""
    problem = n_in_row_problem(n_in_row, net.config)
    if problem is not None:
        raise ValueError(f"cannot write {path}: {problem}")
    save_checkpoint(path, {"net_config": net.config.to_dict(),
                           "model": on_cpu(net.state_dict()),
                           "n_in_row": n_in_row, **extra})

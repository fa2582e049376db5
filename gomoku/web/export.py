"""Write the static browser site: the page, its scripts, and the net's weights.

The site is plain files (no build step, no server code): ``index.html``, ``style.css``, the
scripts of ``static/`` (rules, net, search, players, the Web Worker and the page), ``model.json``
(the net's config, its trunk: "conv3", or "resnet" with its channels and blocks, its heads: "fc"
for one board or "pooled" for any, the board sizes the page offers, where each tensor lies in
``weights.bin``, its shape in torch's own layout, and the search defaults) and ``weights.bin``
(little-endian float32). A residual tower's BatchNorm layers are folded into the convolutions
before them (``page_tensors``), so the page runs only convolutions with biases, ReLU and adds. Any
static file host serves it: ``python -m http.server --bind 127.0.0.1``, GitHub Pages, a bucket.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from gomoku.game.board import DEFAULT_N_IN_ROW, DEFAULT_SIZE

STATIC_DIR = Path(__file__).resolve().parent / "static"
STATIC_FILES = ("index.html", "style.css", "game.js", "net.js", "search.js", "threats.js", "vct.js",
                "players.js", "alphabeta.js", "worker.js", "app.js")
WEB_FORMAT = "gomoku-zero-web/1"
SUPPORTED_ARCHS = ("conv3", "resnet")  # nets/model.py's trunks; net.js runs both
SUPPORTED_SIZE = (DEFAULT_SIZE, DEFAULT_SIZE)  # the board of a net with fully connected heads; n_in_row is 5
N_IN_ROW = DEFAULT_N_IN_ROW  # the page plays five in a row
FC_HEAD = "fc"  # NetConfig.head of the fully connected heads (one board); the other, "pooled", plays any board
PAGE_SIZES = (9, 15)  # the boards the page offers a pooled net, with the one it was trained on
# The page's names of the tensors (``page_tensors``; net.js reads these): the trunk's 3x3
# convolutions, each a weight and a bias ("conv1".."conv3" for conv3, torch's own names; "stem",
# "blocks.I.conv1", "blocks.I.conv2" for a residual tower, BatchNorm folded in), then the heads:
# torch's names for "fc" heads, these for "pooled" ones.
CONV3_TRUNK = ("conv1", "conv2", "conv3")
PAGE_POLICY = ("policy1.weight", "policy1.bias", "policy2.weight", "policy2.bias")
PAGE_VALUE = ("value_conv.weight", "value_conv.bias", "value_fc1.weight", "value_fc1.bias",
              "value_fc2.weight", "value_fc2.bias")


# The page's playouts for a model trained on a board bigger than 9x9, which it opens on: 400
# playouts took 2.9-4.7 s a move at 15x15 in headless Chromium on the 2-core machine (docs/web.md).
BIG_BOARD_PLAYOUTS = 200


def search_defaults(width: int = DEFAULT_SIZE, height: int = DEFAULT_SIZE) -> dict:
    """The Python AlphaZero player's defaults (gomoku/players/search.py), which the page uses, for
    a model trained on ``width`` x ``height`` (the board the page opens on): fewer playouts on a
    board bigger than 9x9, where each costs more."""
    import inspect

    from gomoku.players import SHIPPED_PLAYOUTS
    from gomoku.players.search import PLAYER_C_PUCT, AlphaZeroPlayer

    parameters = inspect.signature(AlphaZeroPlayer.__init__).parameters
    default = lambda name, fallback: (parameters[name].default if name in parameters  # noqa: E731
                                      and parameters[name].default is not inspect.Parameter.empty else fallback)
    playouts = SHIPPED_PLAYOUTS if width * height <= SUPPORTED_SIZE[0] * SUPPORTED_SIZE[1] else BIG_BOARD_PLAYOUTS
    return {"playouts": playouts, "c_puct": float(default("c_puct", PLAYER_C_PUCT)),
            "forced_moves": bool(default("forced_moves", True)), "vcf": bool(default("vcf", False)),
            "vcf_nodes": int(default("vcf_nodes", 200)), "vct": bool(default("vct", False)),
            "vct_nodes": int(default("vct_nodes", 1000)), "check_nodes": int(default("check_nodes", 0))}


class ExportError(ValueError):
    """A model the page cannot run, or an output folder that cannot be written."""


def weights_payload(model_path: str | os.PathLike) -> tuple[dict, bytes]:
    """(model.json as a dict, weights.bin as bytes) for a model or training checkpoint.

    Raises ExportError for a file that is not a checkpoint, a net the page cannot run (another
    architecture, another rule) or, for a net with fully connected heads, a board other than 9x9.
    """
    from nets import checkpoint  # torch, lazily

    try:
        payload = checkpoint.load_checkpoint(model_path)
        net = checkpoint.net_from_checkpoint(payload)
        if hasattr(checkpoint, "model_n_in_row"):
            n_in_row = checkpoint.model_n_in_row(payload, model_path)
        else:
            n_in_row = payload.get("n_in_row", N_IN_ROW)
    except checkpoint.CheckpointError as error:
        raise ExportError(f"cannot export {model_path}: {error}") from error
    try:
        return net_payload(net, n_in_row, source=Path(model_path).name, iteration=payload.get("iteration"),
                           games=payload.get("games"))
    except ExportError as error:
        raise ExportError(f"cannot export {model_path}: {error}") from error


def net_payload(net, n_in_row: int = N_IN_ROW, source: str = "", iteration: int | None = None,
                games: int | None = None) -> tuple[dict, bytes]:
    """(model.json as a dict, weights.bin as bytes) for a torch net (``nets.build_net``);
    ExportError (without the file's name) for a net the page cannot run."""
    config = net.config
    if config.arch not in SUPPORTED_ARCHS:
        raise ExportError(f"the page runs the {' and '.join(map(repr, SUPPORTED_ARCHS))} nets, "
                          f"this model is {config.arch!r}")
    if n_in_row != N_IN_ROW:
        raise ExportError(f"it was trained for {n_in_row} in a row, the page plays {N_IN_ROW} in a row only")
    if config.head == FC_HEAD:
        if (config.width, config.height) != SUPPORTED_SIZE:
            raise ExportError(f"it is for a {config.width}x{config.height} board, "
                              f"the page plays {SUPPORTED_SIZE[0]}x{SUPPORTED_SIZE[1]} only")
        sizes = [config.width]
    else:  # pooled (NetConfig accepts no other head)
        sizes = sorted(size for size in {*PAGE_SIZES, config.width} if config.plays(size, size)
                       and config.width == config.height)
    layout, chunks, offset = {}, [], 0
    for name, tensor in page_tensors(net).items():
        array = tensor.detach().cpu().numpy().astype("<f4", copy=False)
        layout[name] = {"shape": list(array.shape), "offset": offset}
        chunks.append(array.ravel().tobytes())
        offset += array.size
    # conv3's trunk is fixed (32, 64, 128 channels); a residual tower's is recorded (net.js reads it)
    trunk = {"channels": config.channels, "blocks": config.blocks} if config.arch == "resnet" else {}
    meta = {
        "format": WEB_FORMAT,
        "arch": config.arch,
        **trunk,
        "head": config.head,
        "width": config.width,
        "height": config.height,
        "sizes": sizes,
        "n_in_row": N_IN_ROW,
        "weights": "weights.bin",
        "dtype": "float32-le",
        "parameters": offset,
        "tensors": layout,
        "source": source,
        "iteration": iteration,
        "games": games,
        "search": search_defaults(config.width, config.height),
    }
    return meta, b"".join(chunks)


def page_tensors(net) -> dict:
    """A torch net's tensors under the names the page reads (net.js), BatchNorm folded in.

    The one place that reads a torch net's layout. The trunk is the net's modules before its heads,
    in order: its 3x3 convolutions, each followed by a BatchNorm in a residual tower (nets/model.py),
    which is folded into the convolution's weight and a bias (``fold_batchnorm``), under the names
    of ``trunk_names``. The heads are the state dict's tensors under "heads.", in its order (the
    order of the layers): "fc" heads keep torch's names; for "pooled" heads the tensors whose name
    has "policy" (conv1x1 C->32, conv1x1 32->1, each weight then bias) and those with "value"
    (conv1x1 C->32, FC 64->64, FC 64->1) take the page's names. The conv3 net's tensors are passed
    on as they are (its trunk's names are torch's own), so its export is unchanged to the byte.
    """
    from torch import nn

    trunk = []  # (weight, bias) of each 3x3 convolution, BatchNorm folded in
    for name, module in net.named_modules():
        if name.startswith("heads"):
            continue
        if isinstance(module, nn.Conv2d):
            trunk.append((module.weight, module.bias))
        elif isinstance(module, nn.BatchNorm2d):
            if not trunk:
                raise ExportError(f"its trunk starts with a BatchNorm ({name}), not a convolution")
            trunk[-1] = fold_batchnorm(*trunk[-1], module)
    names = trunk_names(net.config)
    if len(trunk) != len(names) or any(bias is None for _, bias in trunk):
        raise ExportError(f"its trunk is not the page's {net.config.arch!r} trunk: {len(trunk)} convolutions")
    tensors = {}
    for name, (weight, bias) in zip(names, trunk):
        tensors[f"{name}.weight"], tensors[f"{name}.bias"] = weight, bias
    heads = [(name, tensor) for name, tensor in net.state_dict().items() if name.startswith("heads.")]
    if net.config.head == FC_HEAD:
        return {**tensors, **dict(heads)}
    policy = [tensor for name, tensor in heads if "policy" in name]
    value = [tensor for name, tensor in heads if "value" in name]
    if len(policy) != len(PAGE_POLICY) or len(value) != len(PAGE_VALUE) or len(heads) != (
            len(PAGE_POLICY) + len(PAGE_VALUE)):
        raise ExportError(f"its pooled heads are not the page's: tensors {[name for name, _ in heads]}")
    return {**tensors, **dict(zip(PAGE_POLICY + PAGE_VALUE, policy + value))}


def trunk_names(config) -> list[str]:
    """The page's names of the trunk's 3x3 convolutions, in the order they run."""
    if config.arch == "conv3":
        return list(CONV3_TRUNK)
    return ["stem"] + [f"blocks.{block}.conv{n}" for block in range(config.blocks) for n in (1, 2)]


def fold_batchnorm(weight, bias, norm) -> tuple:
    """(weight, bias) of one convolution that computes a convolution (``bias`` None: none) then
    the BatchNorm ``norm`` in eval mode, (y - running_mean) / sqrt(running_var + eps) * weight + bias,
    per output channel; computed in float64, returned in the convolution's dtype."""
    import torch

    with torch.no_grad():
        scale = norm.weight.double() / torch.sqrt(norm.running_var.double() + norm.eps)
        shift = (bias.double() if bias is not None else 0.0) - norm.running_mean.double()
        folded_weight = weight.double() * scale.reshape(-1, *[1] * (weight.dim() - 1))
        folded_bias = norm.bias.double() + shift * scale
    return folded_weight.to(weight.dtype), folded_bias.to(weight.dtype)


SITE_FILES = (*STATIC_FILES, "weights.bin", "model.json", ".nojekyll")  # what write_site puts in the folder


def export_site(model_path: str | os.PathLike, out_dir: str | os.PathLike, force: bool = False) -> Path:
    """Write the site for ``model_path`` into ``out_dir`` (see ``write_site``)."""
    return write_site(*weights_payload(model_path), out_dir, force)


def holds_a_site(folder: Path) -> bool:
    """Whether ``folder`` holds a site this module wrote (its model.json says WEB_FORMAT)."""
    try:
        return json.loads((folder / "model.json").read_text(encoding="utf-8")).get("format") == WEB_FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def write_site(meta: dict, weights: bytes, out_dir: str | os.PathLike, force: bool = False) -> Path:
    """Write the page, ``model.json`` (``meta``) and ``weights.bin`` into ``out_dir``: a new or
    empty folder, one that holds an earlier export, or any folder with ``force`` (its other files
    are left alone). The files are written into a temp folder beside it first and moved in once
    all are written, so a failed write (a full disk) leaves the folder as it was."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} exists and is not a folder")
    if out.is_dir() and not force and not holds_a_site(out):
        taken = sorted(name for name in SITE_FILES if (out / name).exists())
        if taken:
            raise ExportError(f"{out} already holds {', '.join(taken[:3])}{' ...' if len(taken) > 3 else ''} and "
                              "no site of ours: give a new or empty folder, or --force to replace those files")
    temp = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
        for name in STATIC_FILES:
            shutil.copyfile(STATIC_DIR / name, temp / name)
        (temp / "weights.bin").write_bytes(weights)
        (temp / "model.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
        (temp / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: serve the files as they are
        out.mkdir(exist_ok=True)
        for name in SITE_FILES:  # renames in one file system: no space needed, nothing half written
            os.replace(temp / name, out / name)
    except OSError as error:  # read-only, full, or a file where a folder should be
        raise ExportError(f"cannot write the site into {out}: {error.strerror or error}") from error
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    return out


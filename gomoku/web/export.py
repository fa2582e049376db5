"""Write the static browser site: the page, its scripts, and the net's weights.

The site is plain files (no build step, no server code): ``index.html``, ``style.css``, the
scripts of ``static/`` (rules, net, search, players, the Web Worker and the page), ``model.json``
(the net's config, its heads: "fc" for one board or "pooled" for any, the board sizes the page
offers, where each tensor lies in ``weights.bin``, its shape in torch's own layout, and the
search defaults) and ``weights.bin`` (little-endian float32). Any
static file host serves it: ``python -m http.server --bind 127.0.0.1``, GitHub Pages, a bucket.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
STATIC_FILES = ("index.html", "style.css", "game.js", "net.js", "search.js", "threats.js", "players.js",
                "alphabeta.js", "worker.js", "app.js")
WEB_FORMAT = "gomoku-zero-web/1"
SUPPORTED_ARCH = "conv3"
SUPPORTED_SIZE = (9, 9)  # the board of a net with fully connected heads; n_in_row is 5
N_IN_ROW = 5
FC_HEAD, POOLED_HEAD = "fc", "pooled"  # NetConfig.head: fully connected (one board), pooled (any board)
PAGE_SIZES = (9, 15)  # the boards the page offers a pooled net, with the one it was trained on
# The page's names of a pooled conv3 net's tensors (``pooled_tensors``; net.js reads these).
PAGE_TRUNK = ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "conv3.weight", "conv3.bias")
PAGE_POLICY = ("policy1.weight", "policy1.bias", "policy2.weight", "policy2.bias")
PAGE_VALUE = ("value_conv.weight", "value_conv.bias", "value_fc1.weight", "value_fc1.bias",
              "value_fc2.weight", "value_fc2.bias")


def search_defaults() -> dict:
    """The Python AlphaZero player's defaults (gomoku/players/search.py), which the page uses."""
    import inspect

    from gomoku.players import SHIPPED_PLAYOUTS
    from gomoku.players.search import AlphaZeroPlayer

    parameters = inspect.signature(AlphaZeroPlayer.__init__).parameters
    default = lambda name, fallback: (parameters[name].default if name in parameters  # noqa: E731
                                      and parameters[name].default is not inspect.Parameter.empty else fallback)
    return {"playouts": SHIPPED_PLAYOUTS, "c_puct": float(default("c_puct", 5.0)),
            "forced_moves": bool(default("forced_moves", True)), "vcf": bool(default("vcf", False)),
            "vcf_nodes": int(default("vcf_nodes", 200))}


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
    head = getattr(config, "head", FC_HEAD)  # NetConfig.head (issue 29); nets before it are "fc"
    if config.arch != SUPPORTED_ARCH:
        raise ExportError(f"the page runs only the {SUPPORTED_ARCH!r} net, this model is {config.arch!r}")
    if n_in_row != N_IN_ROW:
        raise ExportError(f"it was trained for {n_in_row} in a row, the page plays {N_IN_ROW} in a row only")
    if head == FC_HEAD:
        if (config.width, config.height) != SUPPORTED_SIZE:
            raise ExportError(f"it is for a {config.width}x{config.height} board, "
                              f"the page plays {SUPPORTED_SIZE[0]}x{SUPPORTED_SIZE[1]} only")
        tensors = net.state_dict()  # the page reads torch's own names
        sizes = [config.width]
    elif head == POOLED_HEAD:
        tensors = pooled_tensors(net.state_dict())
        sizes = sorted(size for size in {*PAGE_SIZES, config.width} if config.plays(size, size)
                       and config.width == config.height)
    else:
        raise ExportError(f"the page runs the {FC_HEAD!r} and {POOLED_HEAD!r} heads, this model has {head!r}")
    layout, chunks, offset = {}, [], 0
    for name, tensor in tensors.items():
        array = tensor.detach().cpu().numpy().astype("<f4", copy=False)
        layout[name] = {"shape": list(array.shape), "offset": offset}
        chunks.append(array.ravel().tobytes())
        offset += array.size
    meta = {
        "format": WEB_FORMAT,
        "arch": config.arch,
        "head": head,
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
        "search": search_defaults(),
    }
    return meta, b"".join(chunks)


def pooled_tensors(state_dict) -> dict:
    """The tensors of a conv3 net with pooled heads, under the names the page reads (net.js).

    The one place that reads the torch names of a pooled net: the trunk is the first six tensors
    (conv1..conv3, weight then bias), the policy head the tensors whose name has "policy" (conv1x1
    C->32, conv1x1 32->1, each weight then bias), the value head those with "value" (conv1x1 C->32,
    FC 64->64, FC 64->1), each in the order of the state dict, which is the order of the layers.
    """
    items = list(state_dict.items())
    policy = [tensor for name, tensor in items if "policy" in name]
    value = [tensor for name, tensor in items if "value" in name]
    trunk = [tensor for _, tensor in items[:len(PAGE_TRUNK)]]
    if len(policy) != len(PAGE_POLICY) or len(value) != len(PAGE_VALUE) or len(items) != (
            len(PAGE_TRUNK) + len(PAGE_POLICY) + len(PAGE_VALUE)):
        raise ExportError(f"its pooled heads are not the page's: tensors {[name for name, _ in items]}")
    return dict(zip(PAGE_TRUNK + PAGE_POLICY + PAGE_VALUE, trunk + policy + value))


def export_site(model_path: str | os.PathLike, out_dir: str | os.PathLike) -> Path:
    """Write the site for ``model_path`` into ``out_dir`` (created; files there are replaced)."""
    return write_site(*weights_payload(model_path), out_dir)


def write_site(meta: dict, weights: bytes, out_dir: str | os.PathLike) -> Path:
    """Write the page, ``model.json`` (``meta``) and ``weights.bin`` into ``out_dir``."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name in STATIC_FILES:
            shutil.copyfile(STATIC_DIR / name, out / name)
        (out / "weights.bin").write_bytes(weights)
        (out / "model.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
        (out / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: serve the files as they are
    except OSError as error:  # read-only, full, or a file where a folder should be
        raise ExportError(f"cannot write the site into {out}: {error.strerror or error}") from error
    return out


"""Write the static browser site: the page, its scripts, and the net's weights.

The site is plain files (no build step, no server code): ``index.html``, ``style.css``, the
scripts of ``static/`` (rules, net, search, players, the Web Worker and the page), ``model.json``
(the net's config, where each tensor of its state dict lies in ``weights.bin``, its shape in
torch's own layout, and the search defaults) and ``weights.bin`` (little-endian float32). Any
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
SUPPORTED_SIZE = (9, 9)  # the page's board; n_in_row is 5
N_IN_ROW = 5


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
    architecture) or a board size other than 9x9.
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
    config = net.config
    if config.arch != SUPPORTED_ARCH:
        raise ExportError(f"cannot export {model_path}: the page runs only the {SUPPORTED_ARCH!r} net, "
                          f"this model is {config.arch!r}")
    if (config.width, config.height) != SUPPORTED_SIZE:
        raise ExportError(f"cannot export {model_path}: it is for a {config.width}x{config.height} board, "
                          f"the page plays {SUPPORTED_SIZE[0]}x{SUPPORTED_SIZE[1]} only")
    if n_in_row != N_IN_ROW:
        raise ExportError(f"cannot export {model_path}: it was trained for {n_in_row} in a row, "
                          f"the page plays {N_IN_ROW} in a row only")
    tensors, chunks, offset = {}, [], 0
    for name, tensor in net.state_dict().items():
        array = tensor.detach().cpu().numpy().astype("<f4", copy=False)
        tensors[name] = {"shape": list(array.shape), "offset": offset}
        chunks.append(array.ravel().tobytes())
        offset += array.size
    meta = {
        "format": WEB_FORMAT,
        "arch": config.arch,
        "width": config.width,
        "height": config.height,
        "n_in_row": N_IN_ROW,
        "weights": "weights.bin",
        "dtype": "float32-le",
        "parameters": offset,
        "tensors": tensors,
        "source": Path(model_path).name,
        "iteration": payload.get("iteration"),
        "games": payload.get("games"),
        "search": search_defaults(),
    }
    return meta, b"".join(chunks)


def export_site(model_path: str | os.PathLike, out_dir: str | os.PathLike) -> Path:
    """Write the site for ``model_path`` into ``out_dir`` (created; files there are replaced)."""
    meta, weights = weights_payload(model_path)
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


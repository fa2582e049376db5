"""The figures the docs state about the code, read from the code: a config value, a weight count or
a size limit that drifts (docs/training.md once said game_batch_num 1,200 where the config said 3,200;
docs/web.md 131,132 weights where the page gets 63,042) fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "models" / "9x9.pt"
TOWER = ROOT / "docs" / "results" / "runs" / "resnet-9x9" / "continued" / "9x9.pt"  # shipped before it
NUMBER = r"(\d[\d,]*)"


def page_text(name: str) -> str:
    """A page of the docs with its line breaks and runs of spaces as single spaces."""
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def stated(name: str, pattern: str) -> list[tuple[str, ...]]:
    """Every match of ``pattern`` on the page (its groups); at least one, or the sentence moved."""
    found = [m.groups() for m in re.finditer(pattern, page_text(name))]
    assert found, f"{name}: no sentence matches {pattern!r} any more: update this test with the page"
    return found


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_end_the_docs_state_is_the_configs():
    """configs/9x9.yaml's run ends at train.max_minutes of run time (its games cap is far): the
    sample banner of docs/training.md and the README's sentences say both as the config does."""
    from gomoku.training.config import load_config

    train = load_config(ROOT / "configs" / "9x9.yaml").train
    for games, minutes in stated("docs/training.md", rf"stops at {NUMBER} games \(train\.game_batch_num\) or {NUMBER} min "
                                                     rf"of run time"):
        assert (number(games), number(minutes)) == (train.game_batch_num, train.max_minutes)
    for page in ("README.md", "docs/training.md"):
        for (minutes,) in stated(page, rf"`configs/9x9\.yaml` ends by itself at {NUMBER} minutes of run time"):
            assert number(minutes) == train.max_minutes


def model_counts(path: Path) -> tuple[int, int, int]:
    """(a model's parameters in torch, the page's weights after BatchNorm folding, bytes of weights.bin)."""
    from gomoku.web.export import weights_payload
    from nets.checkpoint import load_net

    torch_count = sum(p.numel() for p in load_net(path).parameters())
    meta, weights = weights_payload(path)
    return torch_count, meta["parameters"], len(weights)


@pytest.fixture(scope="module")
def shipped_counts() -> tuple[int, int, int]:
    return model_counts(SHIPPED)


def test_the_weight_counts_the_docs_state_are_the_shipped_nets(shipped_counts):
    torch_count, page_count, size = shipped_counts
    ((page, mb, parameters, fewer),) = stated(
        "docs/web.md", rf"the shipped model's {NUMBER} weights as float32, ([\d.]+) MB: its {NUMBER} parameters, "
                       rf"a 3-conv net with no BatchNorm to fold in, {NUMBER} fewer")
    assert (number(page), number(parameters), number(fewer)) == (page_count, torch_count, torch_count - page_count)
    assert float(mb) == round(size / 1e6, 2)
    ((parameters,),) = stated("docs/web.md", rf"the shipped 9x9 model, conv3 with pooled heads, {NUMBER} parameters")
    assert number(parameters) == torch_count
    ((parameters, page),) = stated("models/README.md", rf"pooled heads, {NUMBER} weights \(the browser page gets "
                                                       rf"{NUMBER}:")
    assert (number(parameters), number(page)) == (torch_count, page_count)


def test_the_towers_counts_the_docs_state_are_the_towers():
    """The tower shipped before the 3-conv net (docs/web.md's BatchNorm folding example)."""
    torch_count, page_count, size = model_counts(TOWER)
    ((parameters, folded, mb),) = stated("docs/web.md", rf"a resnet 32x3 pooled net: {NUMBER} parameters in torch, "
                                                        rf"{NUMBER} folded, ([\d.]+) MB")
    assert (number(parameters), number(folded), float(mb)) == (torch_count, page_count, round(size / 1e6, 2))
    assert page_count < torch_count  # its BatchNorm layers folded into the convolutions
    ((parameters,),) = stated("docs/web.md", rf"the tower shipped before it {NUMBER}")
    assert number(parameters) == torch_count


def test_the_board_sizes_the_docs_state_are_the_codes():
    from gomoku.game.board import MAX_SIZE as ENGINE_MAX
    from gomoku.pbrain.protocol import MIN_SIZE as ENGINE_MIN
    from gomoku.ui.session import MAX_SIZE as WINDOW_MAX
    from gomoku.ui.session import MIN_SIZE as WINDOW_MIN
    from nets.model import MAX_BOARD_SIDE, MIN_POOLED_SIDE

    ((low, high),) = stated("README.md", r"play every size from (\d+)x\1 to (\d+)x\2 with one set of weights")
    assert (int(low), int(high)) == (MIN_POOLED_SIDE, MAX_BOARD_SIDE) == (ENGINE_MIN, ENGINE_MAX)
    ((low, high),) = stated("README.md", r"the window's, `play\.py --size`, is (\d+)x\1 to (\d+)x\2")
    assert (int(low), int(high)) == (WINDOW_MIN, WINDOW_MAX)
    for low, high in stated("docs/pbrain.md", r"every size from (\d+) to (\d+)"):
        assert (int(low), int(high)) == (ENGINE_MIN, ENGINE_MAX)


def test_play_help_states_the_windows_size_limits(capsys):
    from gomoku.ui.session import MAX_SIZE, MIN_SIZE
    from tests.fakes import load_script

    with pytest.raises(SystemExit):
        load_script("play").main(["--help"])
    assert f"board width and height, {MIN_SIZE} to {MAX_SIZE};" in " ".join(capsys.readouterr().out.split())


def test_the_readmes_run_table_is_plot_py_table_of_both_runs():
    """The README's minutes -> score table is ``plot.py RUN --table`` of the shipped model's run and
    of the tower's equal-time run, row for row, each row led by its net."""
    from gomoku.lab.plot import load_metrics, rung_table

    expected = []
    for net, run in (("3-conv", "models/9x9-run"), ("tower", "docs/results/runs/resnet-90min")):
        expected += [f"| {net} {row}" for row in rung_table(load_metrics(ROOT / run)).splitlines()[2:]]
    readme = [line.strip() for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()]
    found = [line for line in readme if line.startswith(("| 3-conv |", "| tower |"))]
    assert found == expected

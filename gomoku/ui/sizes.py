"""The play window's size limits and the ``WIDTHxHEIGHT`` text of ``--window``. No pygame.

The window is designed at 1000x660 and scaled to its size (``layout``); the design's smallest text
is 13 pixels, so ``MIN_WINDOW`` (12/13 of the design) keeps every text at 12 pixels or more.
Larger windows than ``MAX_WINDOW`` (a 5K screen) only cost memory: the wood and the surfaces grow
with the area.
"""

from __future__ import annotations

MIN_WINDOW = (924, 610)
MAX_WINDOW = (5120, 2880)


def window_problem(size: tuple[int, int]) -> str | None:
    """Why a window of ``size`` pixels is refused (None: it is fine)."""
    width, height = size
    if MIN_WINDOW[0] <= width <= MAX_WINDOW[0] and MIN_WINDOW[1] <= height <= MAX_WINDOW[1]:
        return None
    return (f"the window must be {MIN_WINDOW[0]}x{MIN_WINDOW[1]} to {MAX_WINDOW[0]}x{MAX_WINDOW[1]} pixels, "
            f"got {width}x{height}")


def parse_window_size(text: str) -> tuple[int, int]:
    """ "1400x920" -> (1400, 920); a ValueError with a one-line reason otherwise."""
    width, sep, height = text.strip().lower().partition("x")
    if not (sep and width.isdigit() and height.isdigit()):
        raise ValueError(f"expected WIDTHxHEIGHT in pixels, like 1400x920, got {text!r}")
    size = int(width), int(height)
    problem = window_problem(size)
    if problem:
        raise ValueError(problem)
    return size

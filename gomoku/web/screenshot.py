"""A picture of the browser page in play (the README's and docs/web.md's): a few moves on it in
headless Chromium, the person's chosen by minimax depth 2, then a screenshot
(``scripts/export_web.py --screenshot PNG``).
"""

from __future__ import annotations

import time
from pathlib import Path

from gomoku.game.board import Board
from gomoku.players import MinimaxPlayer
from gomoku.web.browser import Chromium, Page, StaticServer

SCREENSHOT_TURNS = 5  # the person's moves before the picture
PERSON_DEPTH = 2  # minimax depth of the person's moves
WINDOW = (1100, 780)  # the browser's width and height (CSS pixels)
ANSWER_TIMEOUT_S = 600  # the AI's answer to one move, at most
SETTLE_S = 0.5  # the status bar's transition, before the picture


def screenshot(site: Path, path: Path) -> list[int]:
    """Play ``SCREENSHOT_TURNS`` moves on the page of ``site`` and save a picture of it at ``path``
    (a PNG); returns the moves shown. A BrowserError without Chromium, an OSError when the picture
    cannot be written."""
    with StaticServer(site) as server, Chromium(width=WINDOW[0], height=WINDOW[1]) as browser:
        page = Page(browser, server.url)
        page.select("numbers", "true")
        size = page.size()  # the model's board (a pooled net's page may open on 15x15)
        for _ in range(SCREENSHOT_TURNS):
            if page.wait_state("human", "over", timeout=ANSWER_TIMEOUT_S) == "over":
                break
            page.play(MinimaxPlayer(PERSON_DEPTH).get_action(Board.from_moves(page.moves(), size, size)),
                      ANSWER_TIMEOUT_S)
        page.wait_state("human", "over", timeout=ANSWER_TIMEOUT_S)
        browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=1, y=1)  # no hover stone
        time.sleep(SETTLE_S)
        path.parent.mkdir(parents=True, exist_ok=True)
        browser.screenshot(path)
        return page.moves()

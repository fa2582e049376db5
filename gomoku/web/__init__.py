"""Play in a browser: a static site (HTML, CSS, JavaScript and the net's weights) that plays the
model with no server beyond static files.

- ``export``: ``export_site(model, out_dir)`` writes the site (``static/`` plus model.json and
  weights.bin); ``ExportError`` for a model the page cannot run.
- ``browser``: a static server (``StaticServer``) and a headless Chromium driven over the DevTools
  protocol (``Chromium``, ``Page``), for ``scripts/play.py --web``, ``scripts/export_web.py`` and
  the tests.
- ``screenshot``: a picture of the page in play (``scripts/export_web.py --screenshot``).
- ``harness.js``: runs the page's scripts under node (tests, benchmark).

Importing this package imports neither torch nor pygame (``export_site`` loads torch when called).
"""

from gomoku.web.export import ExportError, export_site

__all__ = ["ExportError", "export_site"]

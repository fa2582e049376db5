"""Serve the exported site, and drive a headless Chromium over the DevTools protocol.

Standard library only: the static server is ``http.server``; Chromium is started with
``--remote-debugging-port=0`` and spoken to over a small WebSocket client written here (text
frames, masked as a client must; ping answered). Used by ``scripts/export_web.py`` (its screenshot,
``gomoku.web.screenshot``; its timing, ``gomoku.lab.bench_export``), ``scripts/play.py --web``
(serve and open a browser) and the tests (a whole game by clicks).
"""

from __future__ import annotations

import base64
import functools
import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from gomoku.matches.processes import put_back_handler
from gomoku.matches.stops import stop_on_signals

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars")


class BrowserError(RuntimeError):
    """Chromium could not be started or answered with an error."""


# ---------------------------------------------------------------------------- static server
class _SiteHandler(SimpleHTTPRequestHandler):
    """Serves the files of the site: no folder listings, and a path the OS cannot open (a NUL
    byte in it) is a 400 answer, not a traceback."""

    def list_directory(self, path):
        self.send_error(HTTPStatus.NOT_FOUND, "No such file")
        return None

    def send_head(self):
        try:
            return super().send_head()
        except ValueError:  # open() of a path with an embedded NUL byte; nothing was sent yet
            self.send_error(HTTPStatus.BAD_REQUEST, "Bad path")
            return None


class _QuietHandler(_SiteHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


class StaticServer:
    """Serves ``directory`` on 127.0.0.1 (``port`` 0: any free port) from a background thread.
    Only files are served: no folder listings."""

    def __init__(self, directory: str | os.PathLike, port: int = 0, host: str = "127.0.0.1", quiet: bool = True):
        handler = _QuietHandler if quiet else _SiteHandler
        self.httpd = ThreadingHTTPServer((host, port), functools.partial(handler, directory=str(directory)))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "StaticServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------- websocket
class _WebSocket:
    """The client side of RFC 6455, enough for the DevTools protocol."""

    def __init__(self, url: str, timeout: float):
        assert url.startswith("ws://"), url
        hostport, _, path = url[len("ws://"):].partition("/")
        host, _, port = hostport.partition(":")
        self.sock = socket.create_connection((host, int(port or 80)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise BrowserError("the DevTools WebSocket closed during the handshake")
            head += chunk
        head, _, self.buffer = head.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise BrowserError(f"DevTools WebSocket handshake failed: {head[:200]!r}")

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise BrowserError("the DevTools WebSocket closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send(self, text: str) -> None:
        self._send_frame(0x1, text.encode())

    def recv(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            opcode, n = first & 0x0F, second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if second & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x9:  # ping
                self._send_frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise BrowserError("the DevTools WebSocket was closed by Chromium")
            if opcode in (0x1, 0x2, 0x0):
                message += payload
                if first & 0x80:
                    return message.decode()

    def close(self) -> None:
        try:
            self._send_frame(0x8, b"")
        except OSError:
            pass
        self.sock.close()


# ---------------------------------------------------------------------------- chromium
def find_chromium() -> str | None:
    """The path of a Chromium (or Chrome) executable, or None."""
    explicit = os.environ.get("CHROMIUM")
    if explicit:
        return explicit
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    """A headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self, executable: str | None = None, width: int = 1100, height: int = 820,
                 timeout: float = 60.0):
        self.executable = executable or find_chromium()
        if not self.executable:
            raise BrowserError("no Chromium found (install Debian's `chromium`, or set CHROMIUM)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="gomoku-chromium-")
        self.log = open(Path(self.profile) / "chromium.log", "w+b")
        self.process = subprocess.Popen(
            [self.executable, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        self.next_id = 0
        self.events: list[dict] = []
        self.ws: _WebSocket | None = None
        try:
            self._connect()
            self.call("Page.enable")
            self.call("Runtime.enable")
            self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                      mobile=False)
        except BaseException:
            self.close()
            raise

    def _connect(self) -> None:
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if self.process.poll() is not None:
                raise BrowserError(f"Chromium exited with status {self.process.returncode}: {self._log_tail()}")
            if time.monotonic() > deadline:
                raise BrowserError(f"Chromium did not start within {self.timeout} s: {self._log_tail()}")
            time.sleep(0.05)
        port = int(port_file.read_text().split("\n")[0])
        while True:  # the page target appears shortly after the browser
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=self.timeout)
            connection.request("GET", "/json/list")
            targets = json.loads(connection.getresponse().read())
            connection.close()
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                break
            if time.monotonic() > deadline:
                raise BrowserError("Chromium has no page target")
            time.sleep(0.05)
        self.ws = _WebSocket(pages[0]["webSocketDebuggerUrl"], self.timeout)

    def _log_tail(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def call(self, method: str, **params) -> dict:
        """Send one DevTools command and wait for its answer (events meanwhile are kept)."""
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)
                del self.events[:-1000]

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} raised: {result['exceptionDetails']}")
        return result["result"].get("value")

    def navigate(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def wait_for(self, expression: str, timeout: float | None = None, interval: float = 0.02):
        """Poll ``expression`` until it is truthy; return its value."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {expression!r}")
            time.sleep(interval)

    def click(self, x: float, y: float) -> None:
        """A left click at page coordinates (CSS pixels), as a mouse would."""
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        self.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", clickCount=1)
        self.call("Input.dispatchMouseEvent", type="mouseReleased", x=x, y=y, button="left", clickCount=1)

    def click_selector(self, selector: str) -> None:
        """Click the centre of the first element matching ``selector``."""
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
                            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        if box is None:
            raise BrowserError(f"no element matches {selector!r}")
        self.click(*box)

    def screenshot(self, path: str | os.PathLike) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.ws.close()
            except OSError:
                pass
            self.ws = None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------- the page
class Page:
    """The exported page in a Chromium: its state, settings and board clicks."""

    def __init__(self, browser: Chromium, url: str, timeout: float = 60.0):
        self.browser = browser
        self.timeout = timeout
        browser.navigate(url)
        self.wait_state("human", "ai", "over")

    def state(self) -> str:
        return self.browser.evaluate("document.body.dataset.state")

    def moves(self) -> list[int]:
        text = self.browser.evaluate("document.body.dataset.moves || ''")
        return [int(m) for m in text.split(",")] if text else []

    def size(self) -> int:
        """The side of the board the page plays now (its size menu)."""
        return int(self.browser.evaluate("document.getElementById('size').value"))

    def winner(self) -> int | None:
        text = self.browser.evaluate("document.body.dataset.winner || ''")
        return int(text) if text else None

    def wait_state(self, *states: str, timeout: float | None = None) -> str:
        condition = " || ".join(f"document.body.dataset.state === {json.dumps(s)}" for s in states)
        self.browser.wait_for(f"({condition}) || document.body.dataset.state === 'error'",
                              timeout=self.timeout if timeout is None else timeout)
        state = self.state()
        if state == "error":
            raise BrowserError(f"the page shows an error: {self.status()}")
        return state

    def status(self) -> str:
        return self.browser.evaluate("document.getElementById('status').textContent")

    def select(self, element_id: str, value: str) -> None:
        """Set a <select> or checkbox as a person would (the page sees a change event)."""
        self.browser.evaluate(
            f"(() => {{ const e = document.getElementById({json.dumps(element_id)});"
            f" if (e.type === 'checkbox') e.checked = {json.dumps(value)} === 'true'; else e.value = {json.dumps(value)};"
            " e.dispatchEvent(new Event('change', {bubbles: true})); return e.value; })()")

    def click_point(self, move: int) -> None:
        self.browser.click_selector(f'#board rect[data-move="{move}"]')

    def play(self, move: int, timeout: float | None = None) -> None:
        """Click ``move`` as the person, then wait for the AI's answer or the end of the game."""
        played = len(self.moves())
        self.click_point(move)
        self.browser.wait_for(f"document.body.dataset.moves.split(',').length >= {played + 2} "
                              "|| document.body.dataset.state === 'over'", timeout=timeout)

    def click_button(self, element_id: str) -> None:
        self.browser.click_selector(f"#{element_id}")

    def timings(self) -> list[dict]:
        return self.browser.evaluate("window.gomokuTimings")


# ---------------------------------------------------------------------------- serving for people
def serve_forever(site: str | os.PathLike, port: int = 8000, open_browser: bool = True) -> None:
    """Serve ``site`` on http://127.0.0.1:PORT/ (any free port when PORT is taken), open the
    default browser there, and serve until Ctrl-C (or a plain ``kill``: SIGTERM is taken as Ctrl-C
    on the main thread, so that play.py --web removes its folder then too)."""
    try:
        server = StaticServer(site, port)
    except OSError:
        server = StaticServer(site, 0)
    main_thread = threading.current_thread() is threading.main_thread()  # only it can set handlers
    previous = stop_on_signals((signal.SIGTERM,))[signal.SIGTERM] if main_thread else None
    try:  # Ctrl-C may come at once, even while the browser is still being opened
        print(f"serving {site} at {server.url} (Ctrl-C to stop)", flush=True)
        if open_browser:  # on its own thread: a browser command may not return until its window closes
            threading.Thread(target=open_browser_at, args=(server.url,), name="open-browser", daemon=True).start()
        while True:
            time.sleep(1)  # short naps: a Ctrl-C is taken within a second, whichever thread the OS gave it to
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        server.close()
        if main_thread:
            put_back_handler(signal.SIGTERM, previous)


def open_browser_at(url: str) -> bool:
    """Open the default browser at ``url``; when there is none (a server, no display), say so and
    what to open instead. Returns whether a browser was opened."""
    import webbrowser

    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    if not opened:
        print(f"could not open a browser here: open {url} in one (on this machine, or over an SSH tunnel)",
              flush=True)
    return opened


def play_in_browser(model: str | os.PathLike, port: int = 8000, open_browser: bool = True,
                    size: int | None = None) -> None:
    """Export ``model`` into a temporary folder, serve it and open the browser (play.py --web);
    an ExportError when ``size`` is given and the page of that model does not offer it."""
    from gomoku.web.export import ExportError, export_site

    with tempfile.TemporaryDirectory(prefix="gomoku-web-") as folder:
        site = export_site(model, folder)
        sizes = json.loads((Path(site) / "model.json").read_text())["sizes"]
        if size is not None and size not in sizes:
            raise ExportError(f"the page of {model} plays {', '.join(f'{n}x{n}' for n in sizes)}, "
                              f"not {size}x{size}")
        serve_forever(folder, port, open_browser)

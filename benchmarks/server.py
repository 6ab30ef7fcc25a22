"""The LangServe app in a subprocess for the load benchmark (:mod:`benchmarks.speed.load`) and the probes.

:class:`Server` starts ``uvicorn app.server:create_app`` on a loopback port with an operator
config that offers one KB under the name :data:`KB_NAME`, waits for ``/health`` and stops the
whole process group on exit.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import ROOT


def free_port() -> int:
    """An unused TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(proc: subprocess.Popen, url: str, timeout: float, log: Path | None = None) -> None:
    """Return when ``url/health`` answers 200; raise when ``proc`` exits (its log's tail) or ``timeout`` passes."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log else ""
            raise RuntimeError(f"server exited with {proc.returncode}:\n{tail}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"server not ready after {timeout:.0f} s")


def stop_group(proc: subprocess.Popen) -> None:
    """Stop a server started with ``start_new_session=True`` and its children: TERM, then KILL."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def wait_for_kb(kb: Path, wait: float) -> None:
    """Return when ``kb/manifest.json`` exists; exit after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while not (kb / "manifest.json").exists():
        if time.monotonic() > deadline:
            raise SystemExit(
                f"no KB at {kb} (manifest.json missing); build it with "
                "`hybridrag eval --dataset metaqa-1hop` or pass --kb"
            )
        time.sleep(10)


KB_NAME = "bench"  # the name under which the server's operator config offers the KB


class Server:
    """``uvicorn app.server:create_app`` in a subprocess on 127.0.0.1 serving ``kb``, stopped on exit."""

    def __init__(self, port: int, log: Path, kb: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self.config = log.with_name(log.stem + "-config.json")
        self.config.write_text(json.dumps({"kbs": {KB_NAME: str(kb)}}), encoding="utf-8")
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "HYBRIDRAG_SERVER_CONFIG": str(self.config),
        }
        self.cmd = [
            sys.executable,
            "-m",
            "uvicorn",
            "hybridrag.app.server:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
        ]
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                self.cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait_ready(self, timeout: float = 180) -> None:
        """Return when the server answers ``/health``."""
        wait_healthy(self.proc, self.url, timeout, log=self.log)

    def stop(self) -> None:
        """Stop the server and remove its config."""
        stop_group(self.proc)
        self.config.unlink(missing_ok=True)

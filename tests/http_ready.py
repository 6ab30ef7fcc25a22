"""Wait for a test server started as a subprocess to answer HTTP, failing with its log tail."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest


def wait_until_ready(proc: subprocess.Popen, url: str, log: Path, timeout: float, name: str) -> None:
    """Poll ``url`` until it answers 200; fail the test if the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{name} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-4000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{name} not ready after {timeout}s:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(0.5)

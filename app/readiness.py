"""Server readiness: ``/health`` says ok only once the operator's KBs and models are loaded.

At start the server warms up in a background thread: it opens every KB the operator named,
runs one dense search in each (which loads the KB's embedding model and vector index) and
loads every named chat model. Until then ``/health`` answers 503 ``{"status": "warming up"}``;
a warm-up failure keeps it at 503 with ``{"status": "failed", "error": ...}`` (one line, the
detail in the server log), so a load balancer never sends questions to a server that would
spend its first minute loading, or that cannot answer at all.
"""

from __future__ import annotations

import logging
import threading
import time

from hybridrag.app.server_config import ServerConfig, warm_up

log = logging.getLogger("hybridrag.server")


class Readiness:
    """The warm-up of one server: started once, observed by ``/health``."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.status = "warming up"
        self.error = ""
        self.seconds = 0.0
        self._started = False
        self._lock = threading.Lock()
        self._done = threading.Event()

    def start(self) -> None:
        """Begin the warm-up in a daemon thread (a no-op after the first call)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._run, name="hybridrag-warm-up", daemon=True).start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the warm-up ended (ready or failed); whether it ended in time."""
        return self._done.wait(timeout)

    def _run(self) -> None:
        t0 = time.perf_counter()
        try:
            warm_up(self.config)
            self.status = "ok"
        except Exception as exc:  # noqa: BLE001 - reported by /health, logged with its trace
            from hybridrag.app.errors import scrub

            self.status, self.error = "failed", scrub(f"{type(exc).__name__}: {exc}")
            log.error("warm-up failed: %s", exc, exc_info=exc)
        finally:
            self.seconds = time.perf_counter() - t0
            self._done.set()
        if self.status == "ok":
            log.info("ready after a %.1fs warm-up", self.seconds)

    def body(self) -> tuple[int, dict]:
        """The status code and JSON body of ``/health`` (the caller adds the methods)."""
        self.start()
        if self.status == "ok":
            return 200, {"status": "ok"}
        if self.status == "failed":
            return 503, {"status": "failed", "error": self.error}
        return 503, {"status": "warming up"}

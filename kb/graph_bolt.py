"""Bolt-server facts the ``neo4j`` driver cannot tell us: is it a genuine Neo4j, and FalkorDB's quirks.

FalkorDB answers Bolt with the agent ``Neo4j/5.13.0``, so the agent proves nothing; a genuine Neo4j is
recognised by ``dbms.components()`` naming ``Neo4j Kernel`` (FalkorDB fails that call).

FalkorDB 4.16 quirks handled here:

- after a client sends the Bolt GOODBYE message (the driver does when it closes a healthy
  connection), the server leaves the *next* new connection without a handshake answer, and the driver
  stalls until its acquisition timeout. :func:`skip_goodbye` makes the driver close connections to a
  registered address without GOODBYE (closing the socket is enough for any Bolt server);
  :func:`absorb_stuck_handshake` clears a slot another process left stuck.
- a request message of about 4 KB or more crashes the server: :data:`FALKORDB_MAX_MESSAGE` bounds
  what the store sends;
- a response record over 64 KB never arrives (the connection hangs): :data:`FALKORDB_MAX_RECORD`
  bounds each string column, longer values are read in slices (:mod:`kb.graph_read`).
"""

from __future__ import annotations

import logging
import socket
import threading
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

FALKORDB_MAX_MESSAGE = 3000  # bytes; FalkorDB 4.16 crashes on requests of about 4,070 bytes
FALKORDB_MAX_RECORD = 4096  # characters per string column; an entity record stays under 64 KB
HANDSHAKE = bytes.fromhex("6060B017000001FF000808050002040400000003")
GENUINE_PROBE = "CALL dbms.components() YIELD name RETURN name"
PLAIN_SCHEMES = ("bolt", "neo4j")

_NO_GOODBYE: set[tuple[str, int]] = set()
_LOCK = threading.Lock()
_patched: bool | None = None


def bolt_address(uri: str) -> tuple[str, int]:
    """(host, port) of a bolt:// or neo4j:// URI (port 7687 when missing)."""
    parts = urlsplit(uri)
    return parts.hostname or "localhost", parts.port or 7687


def _install_goodbye_filter() -> bool:
    """Wrap the driver's GOODBYE senders once; False if this driver version has none to wrap."""
    global _patched
    if _patched is not None:
        return _patched
    try:
        from neo4j._sync.io._bolt import Bolt  # the driver has no public switch for this
    except ImportError:
        _patched = False
        return False

    def family(cls: type) -> list[type]:
        out = [cls]
        subclasses: list[type] = cls.__subclasses__()
        for sub in subclasses:
            out.extend(family(sub))
        return out

    def wrap(original):
        def goodbye(self, *args, **kwargs):
            addr = getattr(self, "unresolved_address", None)
            if addr is not None and (str(addr[0]), int(addr[1])) in _NO_GOODBYE:
                return None
            return original(self, *args, **kwargs)

        return goodbye

    wrapped = 0
    for cls in family(Bolt):
        if "goodbye" in vars(cls):
            cls.goodbye = wrap(vars(cls)["goodbye"])  # type: ignore[attr-defined]
            wrapped += 1
    _patched = wrapped > 0
    if not _patched:
        log.warning("neo4j driver internals changed: cannot stop GOODBYE; FalkorDB may stall after a close")
    return _patched


def skip_goodbye(address: tuple[str, int], skip: bool = True) -> bool:
    """Close connections to ``address`` without GOODBYE (or again with it); False if impossible."""
    with _LOCK:
        if skip:
            _NO_GOODBYE.add(address)
        else:
            _NO_GOODBYE.discard(address)
        return _install_goodbye_filter()


def absorb_stuck_handshake(uri: str, timeout: float = 0.3, tries: int = 3) -> bool:
    """Open raw Bolt handshakes until one is answered; True when the server answers.

    Clears a connection slot a GOODBYE left stuck on FalkorDB (cheap on a healthy server: one
    handshake). Only for plain-text schemes; TLS URIs are left alone.
    """
    if urlsplit(uri).scheme not in PLAIN_SCHEMES:
        return True
    host, port = bolt_address(uri)
    for _ in range(tries):
        try:
            with socket.create_connection((host, port), timeout=timeout) as s:
                s.settimeout(timeout)
                s.sendall(HANDSHAKE)
                if len(s.recv(4)) == 4:
                    return True
        except OSError:
            continue
    return False

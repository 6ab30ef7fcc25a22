"""Quick ACKs on the ``neo4j`` driver's connections to FalkorDB: a large answer no longer waits ~40 ms.

FalkorDB 4.16 writes a Bolt answer in pieces of about 4 KB on a socket without ``TCP_NODELAY``: a
later piece waits (Nagle) until the client has acknowledged the earlier one, and Linux delays that
acknowledgement (delayed ACK, up to 40 ms) because the client has nothing to send back. Every read
whose answer passed about 4 KB (some 50 short rows) paid one such wait, whatever the query's own
cost. The driver has no socket option for it, so :func:`quick_ack` wraps the driver's socket
receive once: after each receive on a connection to a registered address the socket is set to
``TCP_QUICKACK`` (Linux; the kernel clears it again by itself, hence after every receive), and the
client acknowledges at once. A genuine Neo4j is unregistered (its answers are not held back).
"""

from __future__ import annotations

import logging
import socket
import threading

log = logging.getLogger(__name__)

_ADDRESSES: set[tuple[str, int]] = set()
_LOCK = threading.Lock()
_installed: bool | None = None
QUICKACK = getattr(socket, "TCP_QUICKACK", None)  # Linux only


def _peer(sock: object) -> tuple[str, int] | None:
    """The (ip, port) a driver socket is connected to, cached on the socket."""
    cached = getattr(sock, "_hybridrag_peer", False)
    if cached is not False:
        return cached  # type: ignore[return-value]
    try:
        host, port = sock.getpeername()[:2]  # type: ignore[attr-defined]
        peer: tuple[str, int] | None = (str(host), int(port))
    except (OSError, AttributeError, NotImplementedError, TypeError, ValueError):
        peer = None
    try:
        sock._hybridrag_peer = peer  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return peer


def _resolved(address: tuple[str, int]) -> set[tuple[str, int]]:
    """``address`` as the (ip, port) pairs a socket's peer name can show."""
    host, port = address
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except OSError:
        return {(host, int(port))}
    return {(host, int(port))} | {(str(i[4][0]), int(port)) for i in infos}


def acked(recv_into):  # noqa: ANN001, ANN201 - the driver's own method, wrapped
    """``recv_into`` of a driver socket that then asks the kernel to acknowledge at once (registered peers)."""

    def receive(self, buffer, nbytes):  # noqa: ANN001, ANN202
        n = recv_into(self, buffer, nbytes)
        if _ADDRESSES and _peer(self) in _ADDRESSES:
            try:
                self._socket.setsockopt(socket.IPPROTO_TCP, QUICKACK, 1)
            except (OSError, AttributeError):
                pass
        return n

    receive.__wrapped__ = recv_into
    return receive


def _install() -> bool:
    """Wrap the sync driver's socket receive once; False when this platform or driver cannot."""
    global _installed
    if _installed is not None:
        return _installed
    if QUICKACK is None:
        _installed = False
        return False
    try:
        from neo4j._sync.io._bolt._bolt_socket import BoltSocket  # the driver has no public switch for this
    except ImportError:
        log.warning("neo4j driver internals changed: no quick ACKs; FalkorDB answers over 4 KB may wait 40 ms")
        _installed = False
        return False
    BoltSocket.recv_into = acked(BoltSocket.recv_into)  # type: ignore[method-assign]
    _installed = True
    return True


def quick_ack(address: tuple[str, int], on: bool = True) -> bool:
    """Acknowledge answers from ``address`` at once (``on``), or stop; False when it cannot be done here."""
    with _LOCK:
        if on:
            _ADDRESSES.update(_resolved(address))
        else:
            _ADDRESSES.difference_update(_resolved(address))
        return _install()

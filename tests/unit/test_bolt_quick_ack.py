"""Quick ACKs on the driver's sockets: set after every receive from a registered server, never otherwise."""

from __future__ import annotations

import socket

import pytest

from hybridrag.kb import bolt_quick_ack as qa

pytestmark = pytest.mark.skipif(qa.QUICKACK is None, reason="TCP_QUICKACK is Linux-only")


class _Raw:
    def __init__(self) -> None:
        self.options: list[tuple[int, int, int]] = []

    def setsockopt(self, level: int, option: int, value: int) -> None:
        self.options.append((level, option, value))


class _DriverSocket:
    """What the driver's BoltSocket offers the wrapper: the raw socket, its peer, a receive."""

    def __init__(self, peer: tuple[str, int]) -> None:
        self._socket, self.peer, self.received = _Raw(), peer, 0

    def getpeername(self) -> tuple[str, int]:
        return self.peer

    def recv_into(self, buffer: bytearray, nbytes: int) -> int:
        self.received += 1
        return 7


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(qa, "_ADDRESSES", set())
    monkeypatch.setattr(qa, "_installed", True)  # the driver itself is left alone here
    return qa._ADDRESSES


def test_a_registered_server_is_acknowledged_after_every_receive(registry):
    qa.quick_ack(("127.0.0.1", 23805))
    sock = _DriverSocket(("127.0.0.1", 23805))
    receive = qa.acked(_DriverSocket.recv_into)
    assert [receive(sock, bytearray(8), 8) for _ in range(3)] == [7, 7, 7]
    assert sock.received == 3
    assert sock._socket.options == [(socket.IPPROTO_TCP, qa.QUICKACK, 1)] * 3


def test_other_servers_and_an_unregistered_one_are_left_alone(registry):
    qa.quick_ack(("127.0.0.1", 23805))
    qa.quick_ack(("127.0.0.1", 23805), on=False)  # a genuine Neo4j after all
    qa.quick_ack(("127.0.0.1", 1111))
    receive = qa.acked(_DriverSocket.recv_into)
    for peer in (("127.0.0.1", 23805), ("10.0.0.9", 1111)):
        sock = _DriverSocket(peer)
        assert receive(sock, bytearray(8), 8) == 7
        assert sock._socket.options == []


def test_a_host_name_matches_the_address_the_socket_reports(registry):
    qa.quick_ack(("localhost", 4242))
    sock = _DriverSocket(("127.0.0.1", 4242))
    qa.acked(_DriverSocket.recv_into)(sock, bytearray(8), 8)
    assert sock._socket.options == [(socket.IPPROTO_TCP, qa.QUICKACK, 1)]


def test_a_store_installs_the_wrapper_on_the_driver():
    neo4j_socket = pytest.importorskip("neo4j._sync.io._bolt._bolt_socket")
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    Neo4jGraphStore("bolt://127.0.0.1:7999")  # no connection is made before the first query
    assert ("127.0.0.1", 7999) in qa._ADDRESSES
    assert hasattr(neo4j_socket.BoltSocket.recv_into, "__wrapped__")

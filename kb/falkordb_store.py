r"""Graph store on FalkorDB through its own client (PyPI ``falkordb``, Redis protocol).

falkordb-py sends parameters by splicing them into a ``CYPHER k=v`` header of the query text
(``Graph._build_params_header``, escaping only ``\`` and ``"``), so every string value is hex-encoded
(:data:`kb.graph_codec.HEX`) and nodes are matched by digest keys: the query text only ever holds hex.
Reads go through ``GRAPH.RO_QUERY`` (they cannot write). Every call has a socket timeout of
``HYBRIDRAG_GRAPH_TIMEOUT`` seconds (reads also a server-side one); a server that is down, frozen or
too slow raises :class:`~kb.model.GraphUnavailableError`, and the connection pool reconnects on the
next call once the server is back.

URI: ``redis://[user:password@]host:port`` (also ``rediss://``, ``falkor://``, ``falkors://``); a
``?graph=NAME`` parameter names the graph when none is given (an ingest uses it as the prefix of its
build graphs, :mod:`kb.graph_versions`, and reads ``&shared=1`` too).
"""

from __future__ import annotations

import re
import threading
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hybridrag.kb.graph_codec import HEX
from hybridrag.kb.graph_cypher_store import CypherGraphStore
from hybridrag.kb.graph_timeouts import graph_timeout, one_line, redact
from hybridrag.kb.model import GraphUnavailableError, KBError

GRAPH_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
SCHEMES = {"redis": "redis", "rediss": "rediss", "falkor": "redis", "falkors": "rediss"}
SHARED_FLAGS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


def uri_options(uri: str) -> tuple[str, str | None, bool]:
    """(redis URI without hybridrag's parameters, the ``graph`` name or None, the ``shared`` flag)."""
    parts = urlsplit(uri)
    if parts.scheme not in SCHEMES:
        raise KBError(f"FalkorDB URI must start with redis://, rediss://, falkor:// or falkors://, got {redact(uri)!r}")
    query = parse_qsl(parts.query, keep_blank_values=True)
    graph = next((v for k, v in query if k == "graph"), None)
    shared = next((v for k, v in query if k == "shared"), "0").lower()
    if shared not in SHARED_FLAGS:
        raise KBError(f"FalkorDB URI parameter shared={shared!r}: use shared=1 or shared=0")
    rest = urlencode([(k, v) for k, v in query if k not in ("graph", "shared")])
    return urlunsplit(parts._replace(scheme=SCHEMES[parts.scheme], query=rest)), graph, SHARED_FLAGS[shared]


def split_uri(uri: str) -> tuple[str, str | None]:
    """(redis URI without hybridrag's parameters, the ``graph`` name or None)."""
    url, graph, _ = uri_options(uri)
    return url, graph


def check_graph_name(name: str) -> str:
    """Return ``name`` if it is a plain graph name, else raise KBError."""
    if not isinstance(name, str) or not GRAPH_NAME.match(name):
        raise KBError(f"invalid FalkorDB graph name {name!r}: must match {GRAPH_NAME.pattern}")
    return name


class FalkorDBGraphStore(CypherGraphStore):
    """GraphStore on one FalkorDB graph, talking Redis protocol."""

    codec = HEX
    max_message_bytes = 0

    def __init__(self, uri: str, graph: str | None = None, timeout: float | None = None) -> None:
        """Prepare a connection pool (nothing is sent yet); :meth:`connect` also checks the server."""
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        url, from_uri = split_uri(uri)
        self.graph_name = check_graph_name(graph or from_uri or "hybridrag")
        self.uri = redact(url)
        self.timeout = graph_timeout() if timeout is None else timeout
        try:
            self._pool = redis.ConnectionPool.from_url(
                url,
                socket_timeout=self.timeout,
                socket_connect_timeout=self.timeout,
                decode_responses=True,
                retry=Retry(NoBackoff(), 1, supported_errors=(redis.exceptions.ConnectionError,)),
            )
        except ValueError as e:
            raise KBError(f"bad FalkorDB URI {self.uri}: {one_line(e)}") from None
        self._lock = threading.Lock()
        self._graph: Any = None

    @classmethod
    def connect(
        cls, uri: str, graph: str | None = None, timeout: float | None = None, must_exist: bool = False
    ) -> FalkorDBGraphStore:
        """Open the store and check the graph's format; ``must_exist`` refuses a missing graph."""
        store = cls(uri, graph, timeout)
        try:
            if not store.check_format() and must_exist:
                raise KBError(
                    f"graph {store.graph_name!r} not found at FalkorDB {store.uri}; re-run `hybridrag ingest`"
                )
        except BaseException:
            store.close()
            raise
        return store

    def _handle(self) -> Any:
        """The falkordb ``Graph``; built on first use (the client's constructor talks to the server)."""
        with self._lock:
            if self._graph is None:
                from falkordb import FalkorDB

                self._graph = self._call(lambda: FalkorDB(connection_pool=self._pool).select_graph(self.graph_name))
            return self._graph

    def _call(self, fn: Any) -> Any:
        import redis.exceptions as re_

        try:
            return fn()
        except re_.TimeoutError:
            raise GraphUnavailableError(f"FalkorDB at {self.uri} did not answer within {self.timeout:g} s") from None
        except (re_.ConnectionError, OSError) as e:
            raise GraphUnavailableError(f"cannot reach FalkorDB at {self.uri}: {one_line(e)}") from None
        except re_.ResponseError as e:
            msg = one_line(e)
            if "timed out" in msg.lower():
                raise GraphUnavailableError(f"FalkorDB at {self.uri} timed out a query: {msg}") from None
            if "unknown command" in msg.lower():
                raise KBError(f"the server at {self.uri} is not FalkorDB: {msg}") from None
            raise KBError(f"graph query failed at FalkorDB {self.uri}: {msg}") from None
        except re_.RedisError as e:
            raise KBError(f"FalkorDB error at {self.uri}: {one_line(e)}") from None

    def _query(self, query: str, params: dict[str, Any], write: bool = False) -> list[dict[str, Any]]:
        """One ``GRAPH.QUERY`` (write) or ``GRAPH.RO_QUERY`` (read, with a server-side timeout)."""
        graph = self._handle()
        try:
            if write:
                res = self._call(lambda: graph.query(query, params))
            else:
                res = self._call(lambda: graph.ro_query(query, params, timeout=int(self.timeout * 1000)))
        except GraphUnavailableError:
            raise
        except KBError as e:
            if not write and "empty key" in str(e):  # the graph does not exist (yet): no rows
                return []
            raise
        names = [h[1] for h in res.header]
        return [dict(zip(names, row, strict=True)) for row in res.result_set]

    def drop(self) -> None:
        """Delete the whole graph (nothing happens when it does not exist)."""
        graph = self._handle()
        try:
            self._call(graph.delete)
        except KBError as e:
            if isinstance(e, GraphUnavailableError) or "empty key" not in str(e):
                raise

    def list_graphs(self) -> list[str]:
        """Names of every graph on the server (``GRAPH.LIST``)."""
        import redis

        names = self._call(lambda: redis.Redis(connection_pool=self._pool).execute_command("GRAPH.LIST"))
        return [n.decode() if isinstance(n, bytes) else str(n) for n in names or ()]

    def close(self) -> None:
        """Close the pool's connections."""
        self._pool.disconnect()

    def __enter__(self) -> FalkorDBGraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

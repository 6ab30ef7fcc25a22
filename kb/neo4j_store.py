"""Graph store on a Bolt server (Neo4j, or FalkorDB's Bolt layer) through the official driver.

On connect the store finds out whether the server is a genuine Neo4j (:mod:`kb.graph_bolt`). A
genuine Neo4j keeps readable values; anything else (FalkorDB, which splices parameters into the query
text without escaping ``'``) gets hex-encoded values, requests under its message cap, and
connections closed without the GOODBYE that stalls it. Every query runs under
``HYBRIDRAG_GRAPH_TIMEOUT``; a server that is down, frozen or too slow raises
:class:`~kb.model.GraphUnavailableError` and the driver is replaced, so the same store works again
when the server is back. A ``namespace`` confines the store to one build's labels
(:mod:`kb.graph_namespace`).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from hybridrag.kb import neo4j_cypher as cy
from hybridrag.kb.bolt_quick_ack import quick_ack
from hybridrag.kb.graph_bolt import (
    FALKORDB_MAX_MESSAGE,
    FALKORDB_MAX_RECORD,
    GENUINE_PROBE,
    absorb_stuck_handshake,
    bolt_address,
    skip_goodbye,
)
from hybridrag.kb.graph_codec import HEX, PLAIN, digest
from hybridrag.kb.graph_cypher_store import REL_TYPE, CypherGraphStore, check_relation_type
from hybridrag.kb.graph_namespace import check_namespace, scoped
from hybridrag.kb.graph_timeouts import call_with_deadline, graph_timeout, one_line, redact
from hybridrag.kb.model import GraphUnavailableError, KBError, Triple

__all__ = ["REL_TYPE", "Neo4jGraphStore", "check_relation_type"]


class Neo4jGraphStore(CypherGraphStore):
    """GraphStore whose entities are ``:Entity`` nodes and whose triples are typed relationships."""

    def __init__(
        self,
        uri: str,
        auth: tuple[str, str] | None = None,
        database: str | None = None,
        timeout: float | None = None,
        namespace: str | None = None,
    ) -> None:
        """Remember how to reach the server; :meth:`connect` also checks it and picks the encoding.

        ``namespace``: the build's label namespace (:mod:`kb.graph_namespace`); None reads and writes
        the plain ``Entity`` labels.
        """
        self._uri, self._auth = uri, auth
        self.namespace = None if namespace is None else check_namespace(namespace)
        self.uri = redact(uri)
        self._session_kw = {"database": database} if database else {}
        self.timeout = graph_timeout() if timeout is None else timeout
        self._lock = threading.Lock()
        self._driver: Any = None
        self._generation = 0
        self._apoc: bool | None = None
        self.genuine_neo4j = False
        self.codec = HEX
        self.max_message_bytes = FALKORDB_MAX_MESSAGE
        self.max_record_chars = FALKORDB_MAX_RECORD
        skip_goodbye(bolt_address(uri))  # until the server proves to be a genuine Neo4j
        quick_ack(bolt_address(uri))  # FalkorDB's answers over ~4 KB wait for our ACK (kb/bolt_quick_ack.py)

    @classmethod
    def connect(
        cls,
        uri: str,
        auth: tuple[str, str] | None = None,
        database: str | None = None,
        timeout: float | None = None,
        namespace: str | None = None,
        must_exist: bool = False,
        check: bool = True,
    ) -> Neo4jGraphStore:
        """Open a driver, check the server answers and what it is; one-line errors.

        ``check`` also refuses a graph of another format; ``must_exist`` refuses a missing graph.
        """
        store = cls(uri, auth, database, timeout, namespace)
        try:
            store._identify()
            found = store.check_format() if check or must_exist else True
            if must_exist and not found:
                where = f"graph namespace {namespace!r}" if namespace else "the graph"
                raise KBError(f"{where} not found at {store.uri}; re-run `hybridrag ingest`")
        except BaseException:
            store.close()
            raise
        return store

    def _identify(self) -> None:
        try:
            names = [r["name"] for r in self._query(GENUINE_PROBE, {})]
        except GraphUnavailableError:
            raise
        except KBError:  # FalkorDB: unknown procedure
            names = []
        self.genuine_neo4j = "Neo4j Kernel" in names
        if self.genuine_neo4j:
            self.codec, self.max_record_chars = PLAIN, 0
            skip_goodbye(bolt_address(self._uri), skip=False)
            quick_ack(bolt_address(self._uri), on=False)
        env_cap = os.environ.get("HYBRIDRAG_NEO4J_MAX_BATCH_BYTES", "").strip()
        if env_cap:
            if not env_cap.isdigit():
                raise KBError(f"HYBRIDRAG_NEO4J_MAX_BATCH_BYTES must be a number of bytes, got {env_cap!r}")
            self.max_message_bytes = int(env_cap)
        elif self.genuine_neo4j:
            self.max_message_bytes = 0

    # -- the driver ----------------------------------------------------------------------
    def _new_driver(self) -> Any:
        import neo4j

        absorb_stuck_handshake(self._uri, timeout=min(0.3, self.timeout))
        try:
            return neo4j.GraphDatabase.driver(
                self._uri,
                auth=self._auth,
                connection_timeout=self.timeout,
                connection_acquisition_timeout=self.timeout,
                max_transaction_retry_time=0,
            )
        except Exception as e:  # bad URI scheme, bad auth value
            raise KBError(f"cannot use Neo4j URI {self.uri}: {one_line(e)}") from None

    def _current(self) -> tuple[Any, int]:
        with self._lock:
            if self._driver is None:
                self._driver = self._new_driver()
            return self._driver, self._generation

    def _reset(self, generation: int) -> None:
        """Drop the driver a failed query used (closing it ends any stuck socket read)."""
        with self._lock:
            if generation != self._generation or self._driver is None:
                return
            old, self._driver = self._driver, None
            self._generation += 1
        threading.Thread(target=_close_quietly, args=(old,), daemon=True).start()

    def close(self) -> None:
        """Close the driver."""
        with self._lock:
            old, self._driver = self._driver, None
            self._generation += 1
        _close_quietly(old)

    def __enter__(self) -> Neo4jGraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _query(self, query: str, params: dict[str, Any], write: bool = False) -> list[dict[str, Any]]:
        """Run one auto-commit query under the deadline; a connection failure is retried once."""
        import neo4j
        import neo4j.exceptions as ne

        if self.namespace:
            query = scoped(query, self.namespace)
        kw = dict(self._session_kw)
        if self.genuine_neo4j and not write:  # Neo4j refuses writes in read sessions (FalkorDB's Bolt
            kw["default_access_mode"] = neo4j.READ_ACCESS  # layer takes the mode for a graph name)
        for attempt in (1, 2):
            driver, generation = self._current()

            def work(driver: Any = driver) -> list[dict[str, Any]]:
                with driver.session(**kw) as session:
                    return [dict(r) for r in session.run(query, params)]

            try:
                return call_with_deadline(
                    work, self.timeout, f"graph server at {self.uri} did not answer within {self.timeout:g} s"
                )
            except GraphUnavailableError:
                self._reset(generation)
                raise
            except (ne.ServiceUnavailable, ne.SessionExpired, ne.IncompleteCommit, OSError) as e:
                self._reset(generation)
                if attempt == 2 or isinstance(e, ne.IncompleteCommit):
                    raise GraphUnavailableError(f"cannot reach Neo4j at {self.uri}: {one_line(e)}") from None
            except ne.Neo4jError as e:
                raise KBError(f"graph query failed at {self.uri}: {one_line(e)}") from None
            except ne.DriverError as e:
                self._reset(generation)
                raise GraphUnavailableError(f"cannot reach Neo4j at {self.uri}: {one_line(e)}") from None
        raise AssertionError("unreachable")

    # -- fusion ---------------------------------------------------------------------------
    def one_hop_dice(self, seeds: list[str], query: str, limit: int) -> list[tuple[Triple, float]] | None:
        """The fusion paper's Cypher (APOC Dice) ranking of seed triples; None without APOC.

        Only on a genuine Neo4j: the question must not be sent to a server that splices it into the
        query text, and Dice over encoded names would be meaningless.
        """
        if not self.genuine_neo4j:
            return None
        if self._apoc is None:
            try:
                self._query(cy.APOC_PROBE, {})
                self._apoc = True
            except GraphUnavailableError:
                raise
            except KBError:  # unknown function: no APOC on this server
                self._apoc = False
        if not self._apoc:
            return None
        recs = self._query(
            cy.ONE_HOP_DICE, {"keys": [digest(s) for s in dict.fromkeys(seeds)], "query": query, "limit": int(limit)}
        )
        return [(Triple(r["head"], r["rel"], r["tail"]), float(r["score"])) for r in recs]


def _close_quietly(driver: Any) -> None:
    if driver is None:
        return
    try:
        driver.close()
    except Exception:  # noqa: BLE001 - a broken driver may fail to close; nothing to do
        pass

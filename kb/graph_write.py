"""Writing a graph to a Cypher server: encoded rows, size-capped batches, staged oversized rows.

Used by :class:`kb.graph_cypher_store.CypherGraphStore`. A server with a message cap (FalkorDB over
Bolt) gets batches that fit; a row that cannot fit alone (a long text, a huge name) is assembled piece
by piece on a ``:HybridragStage`` node and then moved onto its ``:Entity`` node in one statement.
"""

from __future__ import annotations

import json
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from hybridrag.kb import neo4j_cypher as cy
from hybridrag.kb.graph_codec import Codec, digest
from hybridrag.kb.model import Entity, GraphUnavailableError, KBError, Triple

if TYPE_CHECKING:
    from hybridrag.kb.graph_session import CypherSession

_MARGIN = 64  # bytes of message framing beyond query text and JSON-sized parameters
OWNER_WRITE = (
    "MERGE (m:HybridragMeta {key: 'schema'}) SET m.kb = $kb, m.kb_path = $kb_path, m.build = $build, m.shared = $shared"
)
OWNER_READ = "MATCH (m:HybridragMeta) RETURN m.kb AS kb, m.kb_path AS kb_path, m.shared AS shared"
PATH_CHARS = 200  # of the KB path kept on the meta node: enough to name it, small for any message cap


def message_bytes(query: str, params: dict[str, Any]) -> int:
    """An upper estimate of the request size: query text, parameters as JSON, framing."""
    return len(query.encode()) + len(json.dumps(params, ensure_ascii=False).encode()) + _MARGIN


def batches(items: list, size: int, cap: int, base: int) -> Iterator[tuple[list, bool]]:
    """Split ``items`` into chunks of at most ``size`` whose bytes plus ``base`` stay under ``cap``.

    Yields ``(chunk, fits)``; an item too large on its own comes alone with ``fits`` False. ``cap`` 0
    means no byte cap.
    """
    chunk: list = []
    used = base
    for item in items:
        cost = len(json.dumps(item, ensure_ascii=False).encode()) + 1 if cap else 0
        if cap and base + cost > cap:
            if chunk:
                yield chunk, True
                chunk, used = [], base
            yield [item], False
            continue
        if chunk and (len(chunk) >= size or (cap and used + cost > cap)):
            yield chunk, True
            chunk, used = [], base
        chunk.append(item)
        used += cost
    if chunk:
        yield chunk, True


def entity_row(codec: Codec, e: Entity) -> dict[str, Any]:
    """The stored form of an entity: encoded values and digest keys."""
    keys = dict.fromkeys(digest(s.lower()) for s in (e.id, e.name, *e.aliases))
    return {
        "key": digest(e.id),
        "id": codec.enc(e.id),
        "name": codec.enc(e.name),
        "type": codec.enc(e.type),
        "type_key": digest(e.type),
        "text": codec.enc(e.text),
        "aliases": codec.enc_all(e.aliases),
        "lookup_keys": list(keys),
    }


def _pieces(value: str, room: int, plain: bool) -> list[str]:
    step = max(1, room // 6 if plain else room)  # a plain char may take 6 bytes of JSON
    return [value[i : i + step] for i in range(0, len(value), step)] or [""]


def stage(store: CypherSession, row: dict[str, Any], final_query: str) -> None:
    """Write an oversized row through a stage node, every message under the store's cap."""
    k = secrets.token_hex(16)
    run: Callable[[str, dict], Any] = lambda q, p: store._query(q, p, write=True)  # noqa: E731
    room = store.max_message_bytes - message_bytes(cy.STAGE_FIELD.format(field="lookup_keys"), {"k": k, "piece": ""})
    if room < 16:
        raise KBError(f"message cap {store.max_message_bytes} bytes is too small to write to {store.uri}")
    plain = store.codec.name == "plain"

    def append(field: str, value: str) -> None:
        for piece in _pieces(value, room, plain):
            run(cy.STAGE_FIELD.format(field=field), {"k": k, "piece": piece})

    run(cy.STAGE_CREATE, {"k": k})
    for field, value in row.items():
        if field not in cy.FIELDS and field not in ("schema", "codec"):
            raise KBError(f"unexpected field {field!r} in a staged row")
        if isinstance(value, list):
            run(cy.STAGE_EMPTY_LIST.format(field=field), {"k": k})
            for item in value:
                append("cur", item)
                run(cy.STAGE_PUSH.format(field=field), {"k": k})
        elif value is not None:
            append(field, value)
    run(final_query, {"k": k})


def write_graph(
    store: CypherSession,
    entities: Iterable[Entity],
    triples: Iterable[Triple],
    progress: bool,
    batch_size: int,
    check_relation_type: Callable[[str], str],
) -> None:
    """Merge entities and typed relationships in batches that fit the store's message cap."""
    ents = {e.id: e for e in entities}
    by_type: dict[str, list[list[str]]] = defaultdict(list)
    trips = list(dict.fromkeys(triples))
    for t in trips:
        by_type[check_relation_type(t.type)].append([digest(t.head), digest(t.tail)])
        for eid in (t.head, t.tail):
            ents.setdefault(eid, Entity(eid, eid))
    for q in cy.INDEXES:
        try:
            store._query(q, {}, write=True)
        except GraphUnavailableError:
            raise
        except KBError:
            pass  # exists already, or unsupported by this server
    rows = [entity_row(store.codec, e) for e in ents.values()]
    cap = store.max_message_bytes
    with tqdm(total=len(rows) + len(trips), desc="graph write", unit=" items", disable=not progress) as bar:
        for chunk, fits in batches(rows, batch_size, cap, message_bytes(cy.MERGE_NODES, {"rows": []})):
            if fits:
                store._query(cy.MERGE_NODES, {"rows": chunk}, write=True)
            else:
                stage(store, chunk[0], cy.STAGE_TO_NODE)
            bar.update(len(chunk))
        for rel, pairs in by_type.items():
            query = cy.merge_edges(rel)
            for chunk, _ in batches(pairs, batch_size, cap, message_bytes(query, {"rows": []})):
                store._query(query, {"rows": chunk}, write=True)
                bar.update(len(chunk))


def write_meta(store: CypherSession, schema: dict) -> None:
    """Store the derived schema and the codec name on the ``:HybridragMeta`` node."""
    params = {"schema": store.codec.enc(json.dumps(schema)), "codec": store.codec.name}
    if not store.max_message_bytes or message_bytes(cy.META_WRITE, params) <= store.max_message_bytes:
        store._query(cy.META_WRITE, params, write=True)
    else:
        stage(store, params, cy.STAGE_TO_META)


def write_owner(store: CypherSession, owner: dict[str, Any]) -> None:
    """Record which KB directory and build wrote this graph on the ``:HybridragMeta`` node."""
    c = store.codec
    store._query(
        OWNER_WRITE,
        {
            "kb": c.enc(str(owner["kb"])),
            "kb_path": c.enc(str(owner["kb_path"])[-PATH_CHARS:]),
            "build": c.enc(str(owner["build"])),
            "shared": bool(owner["shared"]),
        },
        write=True,
    )


def read_owner(store: CypherSession) -> dict[str, Any] | None:
    """The owner :func:`write_owner` recorded (kb, kb_path, shared), or None when the graph has none."""
    recs = store._query(OWNER_READ, {})
    if not recs or recs[0]["kb"] is None:
        return None
    c = store.codec
    return {"kb": c.dec(recs[0]["kb"]), "kb_path": c.dec(recs[0]["kb_path"]), "shared": bool(recs[0]["shared"])}

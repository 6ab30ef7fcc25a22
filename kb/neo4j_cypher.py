"""Cypher text of the graph-server stores; accepted by Neo4j 5 and by FalkorDB (no APOC needed).

No value ever appears in the text: every value is a parameter, and string values arrive already
encoded (:mod:`kb.graph_codec`). Nodes are matched by fixed-size digest keys, never by the strings
themselves: ``key`` (the id), ``lookup_keys`` (lowercase id, name and aliases) and ``type_key``.
Traversals return keys; :mod:`kb.graph_read` turns keys into values, in bounded slices when the server
cannot send large records (FalkorDB over Bolt).
Relationship types only appear in the text of :func:`merge_edges` after validation against a strict
pattern; reads filter relationship types with ``type(r) IN $rels`` (also validated).
"""

from __future__ import annotations

FIELDS = ("key", "id", "name", "type", "type_key", "text", "aliases", "lookup_keys")
TEXT_FIELDS = ("id", "name", "type", "text")

INDEXES = (
    "CREATE INDEX FOR (n:Entity) ON (n.key)",
    "CREATE INDEX FOR (n:Entity) ON (n.lookup_keys)",  # FalkorDB indexes array members for IN
    "CREATE INDEX FOR (n:HybridragStage) ON (n.k)",
)

MERGE_NODES = """
UNWIND $rows AS row
MERGE (n:Entity {key: row.key})
SET n.id = row.id, n.name = row.name, n.type = row.type, n.type_key = row.type_key, n.text = row.text,
    n.aliases = row.aliases, n.lookup_keys = row.lookup_keys
"""

# A row too large for one message (Bolt on FalkorDB) is assembled on a stage node, then moved.
STAGE_CREATE = "CREATE (s:HybridragStage {k: $k})"
STAGE_FIELD = "MATCH (s:HybridragStage {{k: $k}}) SET s.{field} = coalesce(s.{field}, '') + $piece"
STAGE_EMPTY_LIST = "MATCH (s:HybridragStage {{k: $k}}) SET s.{field} = []"
STAGE_PUSH = (
    "MATCH (s:HybridragStage {{k: $k}}) SET s.{field} = coalesce(s.{field}, []) + [coalesce(s.cur, '')], s.cur = null"
)
STAGE_TO_NODE = """
MATCH (s:HybridragStage {k: $k})
MERGE (n:Entity {key: s.key})
SET n.id = s.id, n.name = s.name, n.type = s.type, n.type_key = s.type_key, n.text = s.text,
    n.aliases = s.aliases, n.lookup_keys = s.lookup_keys
DELETE s
"""
STAGE_TO_META = """
MATCH (s:HybridragStage {k: $k})
MERGE (m:HybridragMeta {key: 'schema'})
SET m.schema = s.schema, m.codec = s.codec
DELETE s
"""

BY_KEYS = "MATCH (n:Entity) WHERE n.key IN $keys RETURN {fields}"
EXISTING = "MATCH (n:Entity) WHERE n.key IN $keys RETURN n.key AS key"
LOOKUP = "MATCH (n:Entity) WHERE $k IN n.lookup_keys RETURN {fields}"  # the entities themselves: one request
ENTITY_PART = "MATCH (n:Entity {{key: $key}}) RETURN substring({expr}, $start, $len) AS part"
ALIAS_HEAD = "MATCH (n:Entity {key: $key}) RETURN left(n.aliases[$i], $len) AS part, size(n.aliases[$i]) AS n"
META_PART = "MATCH (n:HybridragMeta {{key: 'schema'}}) RETURN substring({expr}, $start, $len) AS part"

PATTERNS = {
    "out": "(s:Entity)-[r]->(t:Entity)",
    "in": "(s:Entity)<-[r]-(t:Entity)",
    "both": "(s:Entity)-[r]-(t:Entity)",
}

EDGE = "startNode(r).key AS head, type(r) AS rel, endNode(r).key AS tail"

TRIPLES = f"MATCH (s:Entity)-[r]->(t:Entity) WHERE s.key IN $keys AND t.key IN $keys RETURN {EDGE}"

COUNT_ENTITIES = "MATCH (n:Entity) RETURN count(n) AS c"
COUNT_TRIPLES = "MATCH (:Entity)-[r]->(:Entity) RETURN count(r) AS c"

SCHEMA_TYPES = "MATCH (n:Entity) RETURN n.type_key AS type_key, count(n) AS c, min(n.key) AS example"
SCHEMA_RELATIONS = """
MATCH (h:Entity)-[r]->(t:Entity)
RETURN type(r) AS rel, h.type_key AS head_type, t.type_key AS tail_type, count(r) AS c
"""

META_READ = "MATCH (n:HybridragMeta) RETURN n.codec AS codec, {schema}"
META_WRITE = "MERGE (m:HybridragMeta {key: 'schema'}) SET m.schema = $schema, m.codec = $codec"

CLEAR = "MATCH (n) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS c"

APOC_PROBE = "RETURN apoc.text.sorensenDiceSimilarity('ab', 'ab') AS x"

# The fusion paper's Figure 2: 1-hop expansion of the seeds ranked by mean Dice-Sorensen similarity.
# Only run on a genuine Neo4j (readable values, parameters kept apart from the text).
ONE_HOP_DICE = """
UNWIND $keys AS sKey
MATCH (s:Entity {key: sKey})-[r]-(t:Entity)
WITH s, r, t, toLower($query) AS q
WITH s, r, t, (apoc.text.sorensenDiceSimilarity(toLower(s.name), q)
             + apoc.text.sorensenDiceSimilarity(toLower(replace(type(r), '_', ' ')), q)
             + apoc.text.sorensenDiceSimilarity(toLower(t.name), q)) / 3.0 AS score
RETURN s.id AS head, type(r) AS rel, t.id AS tail, score
ORDER BY score DESC LIMIT $limit
"""


def entity_fields(cap: int, first_aliases: int) -> str:
    """Entity columns; with ``cap`` > 0 every string is cut to ``cap`` characters and sized."""
    if not cap:
        return "n.key AS key, " + ", ".join(f"n.{f} AS {f}" for f in (*TEXT_FIELDS, "aliases"))
    cut = ", ".join(f"left(n.{f}, {int(cap)}) AS {f}, size(n.{f}) AS {f}_n" for f in TEXT_FIELDS)
    head = f"n.aliases[0..{int(first_aliases)}]"
    return (
        f"n.key AS key, {cut}, [a IN {head} | left(a, {int(cap)})] AS aliases, "
        f"[a IN {head} | size(a)] AS aliases_n, size(n.aliases) AS aliases_count"
    )


def id_fields(cap: int) -> str:
    """Key and id columns (the id cut to ``cap`` characters and sized when ``cap`` > 0)."""
    return f"n.key AS key, left(n.id, {int(cap)}) AS id, size(n.id) AS id_n" if cap else "n.key AS key, n.id AS id"


def meta_schema(cap: int) -> str:
    """The schema column of :data:`META_READ`."""
    return f"left(n.schema, {int(cap)}) AS schema, size(n.schema) AS schema_n" if cap else "n.schema AS schema"


def merge_edges(rel_type: str) -> str:
    """Batch-create edges of one type; ``rel_type`` must already be validated by the caller."""
    return f"""
UNWIND $rows AS row
MATCH (h:Entity {{key: row[0]}})
MATCH (t:Entity {{key: row[1]}})
MERGE (h)-[:`{rel_type}`]->(t)
"""


def neighbors(direction: str, relations: bool, target_type: bool, cap: int = 0) -> str:
    """1-hop edges of ``$keys`` with the other end's id; optional ``$rels`` and ``$type_key`` filters."""
    where = ["s.key IN $keys"]
    if relations:
        where.append("type(r) IN $rels")
    if target_type:
        where.append("t.type_key = $type_key")
    where_text = " AND ".join(where)
    other = _other_end(cap)
    return f"MATCH {PATTERNS[direction]} WHERE {where_text} RETURN s.key AS src, {EDGE}, t.key AS other, {other}"


def _other_end(cap: int) -> str:
    """The other end's id and name columns (cut to ``cap`` characters and sized when ``cap`` > 0)."""
    if cap:
        return (
            f"left(t.id, {int(cap)}) AS other_id, size(t.id) AS other_id_n, "
            f"left(t.name, {int(cap)}) AS other_name, size(t.name) AS other_name_n"
        )
    return "t.id AS other_id, t.name AS other_name"


def node_edges(cap: int) -> str:
    """Per node of ``$keys``: its degree ``n``, its name, and, unless ``n`` > ``$limit``, every edge of it.

    One request for a hop of SSRAG's walk: an edge row is the relation, whether the node is its head
    (``out``) and the other end's key, id and name; a node over the limit (a hub) and a node without
    edges give one row without an edge.
    """
    name = f"left(s.name, {int(cap)}) AS src_name, size(s.name) AS src_name_n" if cap else "s.name AS src_name"
    return (
        "MATCH (s:Entity) WHERE s.key IN $keys "
        "OPTIONAL MATCH (s)-[d]-(:Entity) WITH s, count(d) AS n "
        "OPTIONAL MATCH (s)-[r]-(t:Entity) WHERE n <= $limit "
        f"RETURN s.key AS src, n, {name}, type(r) AS rel, startNode(r) = s AS out, t.key AS other, {_other_end(cap)}"
    )


def first_edges(cap: int) -> str:
    """The first ``$limit`` edges of node ``$key`` by (relation, head id, tail id), with the other end's id.

    Stored ids compare as the originals do: hex of UTF-8 keeps code-point order (plain strings on Neo4j
    compare by UTF-16 unit, the same outside the astral planes).
    """
    return (
        "MATCH (s:Entity {key: $key})-[r]-(t:Entity) "
        "WITH r, t ORDER BY type(r), startNode(r).id, endNode(r).id LIMIT $limit "
        f"RETURN {EDGE}, t.key AS other, {_other_end(cap)}"
    )


def name_fields(cap: int) -> str:
    """Key and name columns (the name cut to ``cap`` characters and sized when ``cap`` > 0)."""
    if cap:
        return f"n.key AS key, left(n.name, {int(cap)}) AS name, size(n.name) AS name_n"
    return "n.key AS key, n.name AS name"


def within_hops(depth: int) -> str:
    """Keys of ``$keys`` within ``depth`` undirected hops of ``$seeds``: a breadth-first walk on the server.

    Each hop keeps distinct nodes (``WITH DISTINCT``), so the work is the edges of the ball, never
    the paths through it, and only the keys asked about come back.
    """
    if int(depth) < 1:
        raise ValueError(f"within_hops needs a depth of at least 1, not {depth!r}")
    walk = ["MATCH (n0:Entity) WHERE n0.key IN $seeds", "WITH DISTINCT n0"]
    walk += [f"MATCH (n{i})-[*0..1]-(n{i + 1}:Entity) WITH DISTINCT n{i + 1}" for i in range(int(depth) - 1)]
    walk += [f"MATCH (n{int(depth) - 1})-[*0..1]-(c:Entity) WHERE c.key IN $keys", "RETURN DISTINCT c.key AS key"]
    return "\n".join(walk)


def paths(max_hops: int) -> str:
    """Simple undirected paths of 1..max_hops from ``$sources`` ending at the first ``$targets`` node."""
    return f"""
MATCH p = (s:Entity)-[*1..{int(max_hops)}]-(t:Entity)
WHERE s.key IN $sources AND t.key IN $targets
WITH p, [n IN nodes(p) | n.key] AS ns
WHERE ALL(i IN range(1, size(ns) - 1) WHERE NOT ns[i] IN ns[0..i])
  AND NONE(x IN ns[1..size(ns) - 1] WHERE x IN $targets)
RETURN [r IN relationships(p) | [startNode(r).key, type(r), endNode(r).key]] AS path, length(p) AS hops
ORDER BY hops LIMIT $limit
"""

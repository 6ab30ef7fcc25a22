"""Cypher text of the Neo4j graph store; accepted by Neo4j 5 and by FalkorDB (no APOC needed).

Every value is a parameter. Relationship types only appear in the text of :func:`merge_edges`, after
validation; reads filter relationship types with ``type(r) IN $rels``.
"""

from __future__ import annotations

ENTITY = "n.id AS id, n.name AS name, n.type AS type, n.text AS text, n.aliases AS aliases"

INDEXES = (
    "CREATE INDEX FOR (n:Entity) ON (n.id)",
    "CREATE INDEX FOR (n:Entity) ON (n.name_lc)",
)

MERGE_NODES = """
UNWIND $rows AS row
MERGE (n:Entity {id: row.id})
SET n.name = row.name, n.name_lc = row.name_lc, n.type = row.type, n.text = row.text,
    n.aliases = row.aliases, n.aliases_lc = row.aliases_lc
"""

GET = f"MATCH (n:Entity {{id: $id}}) RETURN {ENTITY}"

GET_MANY = f"MATCH (n:Entity) WHERE n.id IN $ids RETURN {ENTITY}"

EXISTING = "MATCH (n:Entity) WHERE n.id IN $ids RETURN n.id AS id"

LOOKUP = f"""
MATCH (n:Entity)
WHERE n.name_lc = $lc OR toLower(n.id) = $lc OR $lc IN n.aliases_lc
RETURN {ENTITY},
       CASE WHEN n.id = $name OR n.name = $name OR $name IN n.aliases THEN 0 ELSE 1 END AS rank
ORDER BY rank, id
"""

PATTERNS = {
    "out": "(s:Entity)-[r]->(t:Entity)",
    "in": "(s:Entity)<-[r]-(t:Entity)",
    "both": "(s:Entity)-[r]-(t:Entity)",
}

EDGE = "startNode(r).id AS head, type(r) AS rel, endNode(r).id AS tail"

TRIPLES = f"MATCH (s:Entity)-[r]->(t:Entity) WHERE s.id IN $ids AND t.id IN $ids RETURN {EDGE}"

COUNT_ENTITIES = "MATCH (n:Entity) RETURN count(n) AS c"
COUNT_TRIPLES = "MATCH (:Entity)-[r]->(:Entity) RETURN count(r) AS c"

SCHEMA_TYPES = "MATCH (n:Entity) RETURN n.type AS type, count(n) AS c"
SCHEMA_RELATIONS = """
MATCH (h:Entity)-[r]->(t:Entity)
RETURN type(r) AS rel, h.type AS head_type, t.type AS tail_type, count(r) AS c
"""

META_READ = "MATCH (m:HybridragMeta) RETURN m.schema AS schema"
META_WRITE = "MERGE (m:HybridragMeta {key: 'schema'}) SET m.schema = $schema"

CLEAR = "MATCH (n) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS c"

APOC_PROBE = "RETURN apoc.text.sorensenDiceSimilarity('ab', 'ab') AS x"

# The fusion paper's Figure 2: 1-hop expansion of the seeds ranked by mean Dice-Sorensen similarity.
ONE_HOP_DICE = """
UNWIND $seeds AS sId
MATCH (s:Entity {id: sId})-[r]-(t:Entity)
WITH s, r, t, toLower($query) AS q
WITH s, r, t, (apoc.text.sorensenDiceSimilarity(toLower(s.name), q)
             + apoc.text.sorensenDiceSimilarity(toLower(replace(type(r), '_', ' ')), q)
             + apoc.text.sorensenDiceSimilarity(toLower(t.name), q)) / 3.0 AS score
RETURN s.id AS head, type(r) AS rel, t.id AS tail, score
ORDER BY score DESC LIMIT $limit
"""


def merge_edges(rel_type: str) -> str:
    """Batch-create edges of one type; ``rel_type`` must already be validated by the caller."""
    return f"""
UNWIND $rows AS row
MATCH (h:Entity {{id: row[0]}})
MATCH (t:Entity {{id: row[1]}})
MERGE (h)-[:`{rel_type}`]->(t)
"""


def neighbors(direction: str, relations: bool, target_type: bool) -> str:
    """1-hop edges of ``$ids``; optional ``$rels`` and ``$target_type`` filters."""
    where = ["s.id IN $ids"]
    if relations:
        where.append("type(r) IN $rels")
    if target_type:
        where.append("t.type = $target_type")
    where_text = " AND ".join(where)
    return f"MATCH {PATTERNS[direction]} WHERE {where_text} RETURN s.id AS src, {EDGE}, t.id AS other"


def paths(max_hops: int) -> str:
    """Simple undirected paths of 1..max_hops from ``$sources`` ending at the first ``$targets`` node."""
    return f"""
MATCH p = (s:Entity)-[*1..{int(max_hops)}]-(t:Entity)
WHERE s.id IN $sources AND t.id IN $targets
WITH p, [n IN nodes(p) | n.id] AS ns
WHERE ALL(i IN range(1, size(ns) - 1) WHERE NOT ns[i] IN ns[0..i])
  AND NONE(x IN ns[1..size(ns) - 1] WHERE x IN $targets)
RETURN [r IN relationships(p) | [startNode(r).id, type(r), endNode(r).id]] AS path, length(p) AS hops
ORDER BY hops LIMIT $limit
"""

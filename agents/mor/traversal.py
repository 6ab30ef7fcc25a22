"""MoR reasoning: mixed structural/textual traversal of one route, and merging routes (§3.2).

Per route ``c_0<r_0> → c_1<r_1> → ... → c_L``:

- layer 0 seeds: the top ``seed_k`` entities of category ``c_0`` by textual matching of the
  question expanded with ``r_0`` (§3.2.1, 5 in §4.1);
- layer l ≥ 1: neighbours of the previous layer's candidates whose category is ``c_l``, along the
  relation types linking ``c_{l-1}`` and ``c_l`` (Eq. 4), united with the top ``layer_k``
  entities of category ``c_l`` by textual matching of question + ``r_l`` (Eq. 5-6; 10 in §4.1);
  the union seeds the next layer.

Every candidate keeps a trajectory, the steps that reached it: ``{"id", "type", "via": "text" |
"struct", "edge": [head, relation, tail] | None, "tf"}`` where ``tf`` is the textual score of the
layer's expanded query against that node (the reranker's textual fingerprint). A node reached
several ways keeps its most informative trajectory: the longest, then the higher summed ``tf``
(the paper keeps the longest, Limitations). Routes are merged by intersection (§3.2.2); when the
intersection is empty we take the union (the paper is silent; the authors' code does the same).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hybridrag.agents.mor import frontier
from hybridrag.agents.mor.matching import LayerScores, semantic_scores
from hybridrag.agents.mor.mentions import mentioned
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.cancel import check_cancelled

Trajectory = list[dict]
EDGES = ("struct", "mention")  # steps along an edge: a graph edge, or a textual edge (agents.mor.mentions)


def expand_query(question: str, restriction: str) -> str:
    """The expanded query of one planning node: the question plus its restriction (Eq. 5)."""
    return f"{question} {restriction}".strip()


def anchored(traj: Trajectory) -> bool:
    """Reached along edges all the way from a topic entity (a seed marked ``topic``)."""
    return len(traj) > 1 and bool(traj[0].get("topic")) and all(s["via"] in EDGES for s in traj[1:])


def _key(traj: Trajectory) -> tuple[bool, int, float]:
    return anchored(traj), len(traj), sum(s["tf"] for s in traj)


def _step(eid: str, etype: str, via: str, tf: float, edge: list[str] | None = None) -> dict:
    return {"id": eid, "type": etype, "via": via, "edge": edge, "tf": round(float(tf), 6)}


def _structural(
    kb: KnowledgeBase, current: dict[str, Trajectory], category: str, relations: list[str], scores: LayerScores
) -> dict[str, Trajectory]:
    """Neighbours of ``current`` of ``category`` along ``relations`` (Eq. 4), with trajectories."""
    out: dict[str, Trajectory] = {}
    found = kb.graph.neighbors(list(current), relations, "both")
    children = {c for t in found for p, c in ((t.head, t.tail), (t.tail, t.head)) if p in current and c != p}
    ents = kb.graph.get_many(children) if children else {}  # every child's type in one read
    types = {e: ents[e].type if e in ents else "" for e in children}

    roles = kb.graph.schema().relation_types

    def plays(t, child_is_tail: bool) -> bool:  # the schema's type for that end of the relation
        rel = roles.get(t.type)
        return rel is not None and category in (rel.tail_types if child_is_tail else rel.head_types)

    # No target-type filter in the store: an entity has one type, but a name can play several
    # roles ("1941" is a film and a year); a neighbour counts as ``category`` when it has that
    # type or plays it on the edge's end (ours).
    for t in found:
        for parent, child, is_tail in ((t.head, t.tail, True), (t.tail, t.head, False)):
            if parent not in current or child == parent or (types[child] != category and not plays(t, is_tail)):
                continue
            edge = [t.head, t.type, t.tail]
            traj = [*current[parent], _step(child, category, "struct", scores.of(child), edge)]
            if child not in out or _key(traj) > _key(out[child]):
                out[child] = traj
    return out


def _struct_layer(
    kb: KnowledgeBase,
    current: dict[str, Trajectory],
    category: str,
    relations: list[str],
    scores: LayerScores,
    keep_unanchored: bool,
    limit: int,
) -> tuple[dict[str, Trajectory], int, bool, bool]:
    """The structural part of a layer: (children, how many found, any anchored, whether cut to ``limit``).

    The array path (:mod:`agents.mor.frontier`) builds only the ``limit`` best children when more
    were found, unless none is anchored and ``keep_unanchored`` (textual edges then run and compare).
    """
    if not (current and relations):
        return {}, 0, False, False
    if frontier.applies(kb, scores):
        out, found, anchors = frontier.structural(kb, current, category, relations, scores, limit, keep_unanchored)
        return out, found, anchors, found > len(out)
    out = _structural(kb, current, category, relations, scores)
    return out, len(out), any(anchored(t) for t in out.values()), False


def _textual_edges(
    kb: KnowledgeBase,
    current: dict[str, Trajectory],
    category: str,
    relations: list[str],
    scores: LayerScores,
    nxt: dict[str, Trajectory],
    parents_k: int = 5,
    mention_rows: int = 200,
) -> int:
    """Add to ``nxt`` the entities of ``category`` linked by texts to the layer; returns how many were added.

    The links (:func:`agents.mor.mentions.mentioned`) start at the layer's anchored entities, else
    its first ``parents_k``. The step's edge is ``[names, "mentions", named]``: whose text names whom.
    """
    rooted = [e for e, t in current.items() if t[0].get("topic") and all(s["via"] in EDGES for s in t[1:])]
    added = 0
    linked = mentioned(kb, rooted or list(current)[:parents_k], category, relations, mention_rows)
    for parent, children in linked.items():
        for child, forward in children:
            edge = [parent, "mentions", child] if forward else [child, "mentions", parent]
            traj = [*current[parent], _step(child, category, "mention", scores.of(child), edge)]
            if child not in nxt or _key(traj) > _key(nxt[child]):
                added += child not in nxt
                nxt[child] = traj
    return added


def _cap(layer: dict[str, Trajectory], limit: int, ordered: bool = False) -> dict[str, Trajectory]:
    """Keep the ``limit`` best trajectories of a layer (ours: bounds hub explosions).

    ``ordered``: return them best first even when there are fewer (a layer already cut to the cap).
    """
    if len(layer) <= limit and not ordered:
        return layer
    best = sorted(layer.items(), key=lambda kv: _key(kv[1]), reverse=True)[:limit]
    return dict(best)


def traverse_route(
    kb: KnowledgeBase,
    question: str,
    route: dict,
    *,
    seed_k: int = 5,
    layer_k: int = 10,
    matcher: str = "bm25",
    layer_match: str = "always",
    max_frontier: int = 5000,
    structure: bool = True,
    topic_rule: Callable[[list[str]], set[str]] | None = None,
    text_edges: bool = False,
    mention_rows: int = 200,
) -> dict:
    """Mixed traversal of one validated route.

    Args:
        kb: the knowledge base.
        question: the user question.
        route: ``{"nodes": [{"type","restriction"}], "relations": [[rel, ...] per hop]}``.
        seed_k: textual seeds at layer 0.
        layer_k: textual matches added at each later layer.
        matcher: ``bm25`` or ``dense`` textual similarity.
        layer_match: ``always`` (the paper), ``restricted`` (only nodes with a restriction) or
            ``never`` (the paper's ablation without textual retrieval after seeding).
        max_frontier: most candidates a layer keeps.
        structure: fetch neighbours; False is the ablation without structural retrieval.
        text_edges: when structure reached nothing at a layer, take the entities of its category
            linked by texts to the previous layer's nodes, both ways (:mod:`agents.mor.mentions`; ours).
        mention_rows: most texts naming one node read for a backward textual edge.
        topic_rule: layer-0 seeds (best first) → the route's topic entities (graph-first ranking):
            their seed steps are marked ``topic``, a trajectory from one is preferred over any
            other reaching the same node, and no later layer holds them (a route never walks
            back through its topic entity, which is never a candidate); a topic entity that is
            not a seed joins layer 0 (and the seeds). None: the paper.

    Returns:
        ``{"candidates": {id: trajectory}, "layers": [{"layer", "type", "struct", "text", "kept"[,
        "anchored"]}],
        "seeds": [layer-0 seed ids, best first], "topics": [topic entity ids]}``.
    """
    nodes, hops = route["nodes"], route["relations"]
    first = nodes[0]
    scores = LayerScores(kb, expand_query(question, first["restriction"]), matcher)
    current = {e: [_step(e, first["type"], "text", s)] for e, s in frontier.top_of(kb, scores, [first["type"]], seed_k)}
    seeds = list(current)  # best first
    topics = topic_rule(seeds) if topic_rule else set()
    for t in sorted(topics - set(current)):  # a topic entity textual matching missed, linked by name
        current[t] = [_step(t, first["type"], "text", scores.of(t))]
        seeds.append(t)
    for t in topics:
        current[t][0]["topic"] = True
    layers = [{"layer": 0, "type": first["type"], "struct": 0, "text": len(current), "kept": len(current)}]
    limit = max_frontier + len(topics)  # the cap, after the topic entities are dropped
    for i, (node, rels) in enumerate(zip(nodes[1:], hops, strict=True), start=1):
        check_cancelled()  # a layer of hubs can take a while: a stopped run ends here
        scores = LayerScores(kb, expand_query(question, node["restriction"]), matcher)
        reach = structure and text_edges  # textual edges may follow: a cut layer could lose what they compare with
        nxt, n_struct, anchors, cut = _struct_layer(
            kb, current, node["type"], rels if structure else [], scores, reach, limit
        )
        n_mention = 0
        if text_edges and structure and current and not anchors:
            n_mention = _textual_edges(kb, current, node["type"], rels, scores, nxt, mention_rows=mention_rows)
        wanted = layer_match == "always" or (layer_match == "restricted" and node["restriction"])
        matched = frontier.top_of(kb, scores, [node["type"]], layer_k) if wanted else []
        for e, s in matched:
            nxt.setdefault(e, [_step(e, node["type"], "text", s)])
        current = _cap({e: t for e, t in nxt.items() if e not in topics}, max_frontier, cut)  # never walk back
        layers.append(
            {
                "layer": i,
                "type": node["type"],
                "struct": n_struct,
                "text": len(matched),
                "kept": len(current),
                "anchored": sum(anchored(t) for t in current.values()),
                "mention": n_mention,
            }
        )
    return {"candidates": current, "layers": layers, "seeds": seeds, "topics": sorted(topics)}


def merge_routes(results: list[dict]) -> tuple[dict[str, Trajectory], str]:
    """Intersect the candidate sets of the routes that found any (union when that is empty).

    Returns:
        (candidate id → its most informative trajectory over the routes, how they were merged).
    """
    found = [r["candidates"] for r in results if r["candidates"]]
    if not found:
        return {}, "no route found candidates"
    common = set(found[0]).intersection(*found[1:])
    mode = "intersection" if common or len(found) == 1 else "union (empty intersection)"
    pool = common or set().union(*found)
    merged: dict[str, Trajectory] = {}
    for cands in found:
        for eid, traj in cands.items():
            if eid in pool and (eid not in merged or _key(traj) > _key(merged[eid])):
                merged[eid] = traj
    return merged, mode


def text_candidates(
    kb: KnowledgeBase,
    question: str,
    categories: list[str] | None,
    k: int,
    matcher: str = "bm25",
    exclude: set[str] | frozenset = frozenset(),
) -> dict[str, Trajectory]:
    """Textual matching of the question alone: the fallback for invalid plans, and the filler."""
    scores = LayerScores(kb, question, matcher)
    out: dict[str, Trajectory] = {}
    top = [(eid, s) for eid, s in frontier.top_of(kb, scores, categories, k + len(exclude)) if eid not in exclude]
    ents = kb.graph.get_many([eid for eid, _ in top]) if top else {}  # their types in one read
    for eid, s in top:
        out[eid] = [_step(eid, ents[eid].type if eid in ents else "", "text", s)]
        if len(out) >= k:
            break
    return out


def select_candidates(kb: KnowledgeBase, query_vec: np.ndarray, pool: dict[str, Trajectory], limit: int) -> list[dict]:
    """Rank the pool by the initial semantic score and keep ``limit`` (§B.2: selects candidates).

    Returns:
        ``[{"id", "semantic", "trajectory"}]`` best first.
    """
    sem = semantic_scores(kb, query_vec, pool)
    order = sorted(pool, key=lambda e: (-sem[e], e))[:limit]
    return [{"id": e, "semantic": round(sem[e], 6), "trajectory": pool[e]} for e in order]


def fillers(
    kb: KnowledgeBase,
    question: str,
    query_vec: np.ndarray,
    have: set[str],
    categories: list[str] | None,
    k: int,
    matcher: str = "bm25",
) -> list[dict]:
    """Up to ``k`` textual matches not in ``have``, marked ``filler`` (they rank after the rest)."""
    if k <= 0:
        return []
    extra = text_candidates(kb, question, categories, k, matcher, have)
    return [{**c, "filler": True} for c in select_candidates(kb, query_vec, extra, k)]

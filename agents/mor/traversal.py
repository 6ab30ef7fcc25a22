"""MoR reasoning: mixed structural/textual traversal of one route (§3.2.1).

Per route ``c_0<r_0> → c_1<r_1> → ... → c_L``:

- layer 0 seeds: the top ``seed_k`` entities of category ``c_0`` by textual matching of the
  question expanded with ``r_0`` (§3.2.1, 5 in §4.1);
- layer l ≥ 1: neighbours of the previous layer's candidates whose category is ``c_l``, along the
  relation types linking ``c_{l-1}`` and ``c_l`` (Eq. 4), united with the top ``layer_k``
  entities of category ``c_l`` by textual matching of question + ``r_l`` (Eq. 5-6; 10 in §4.1);
  the union seeds the next layer.

Every candidate keeps a trajectory, the steps that reached it (:mod:`agents.mor.trajectory`).
Merging the routes and the candidate pool live in :mod:`agents.mor.candidates`; their functions
are re-exported here, where the pipeline (:mod:`agents.mor.tools`) and the benchmarks name them.
"""

from __future__ import annotations

from collections.abc import Callable

from hybridrag.agents.mor import frontier
from hybridrag.agents.mor.candidates import fillers, merge_routes, select_candidates, text_candidates
from hybridrag.agents.mor.matching import LayerScores
from hybridrag.agents.mor.mentions import mentioned
from hybridrag.agents.mor.trajectory import EDGES, Trajectory, anchored, cap, expand_query, rank_key, step
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.cancel import check_cancelled

__all__ = [
    "Trajectory",
    "anchored",
    "expand_query",
    "fillers",
    "merge_routes",
    "select_candidates",
    "text_candidates",
    "traverse_route",
]


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
            traj = [*current[parent], step(child, category, "struct", scores.of(child), edge)]
            if child not in out or rank_key(traj) > rank_key(out[child]):
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
            traj = [*current[parent], step(child, category, "mention", scores.of(child), edge)]
            if child not in nxt or rank_key(traj) > rank_key(nxt[child]):
                added += child not in nxt
                nxt[child] = traj
    return added


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
    current = {e: [step(e, first["type"], "text", s)] for e, s in frontier.top_of(kb, scores, [first["type"]], seed_k)}
    seeds = list(current)  # best first
    topics = topic_rule(seeds) if topic_rule else set()
    for t in sorted(topics - set(current)):  # a topic entity textual matching missed, linked by name
        current[t] = [step(t, first["type"], "text", scores.of(t))]
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
            nxt.setdefault(e, [step(e, node["type"], "text", s)])
        current = cap({e: t for e, t in nxt.items() if e not in topics}, max_frontier, cut)  # never walk back
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

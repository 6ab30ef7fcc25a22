"""HybGRAG's hybrid module when the radius follows the router's relation path (no LLM here).

The paper extracts "the entities connected by the path 'John Smith → author writes paper →
{papers}'" (§3.2) with an ego-graph of radius at most two (App. C). A fixed radius 2 floods
1-hop questions with 2-hop entities and cannot reach 3 hops, and an ego-graph keeps the
intermediate entities as candidates. With ``radius = 0`` (our default) the module instead:

- one linked topic entity with useful relations: follows the relations *in the router's
  order*, hop by hop (either direction), and the candidates are the entities reached at the
  end of the path, the topic entity excluded. A router lists each relation once, so a path
  that repeats a relation ("films that share a director with Heat": directed_by twice) is
  longer than its relation list: a path of ``hops`` relations is every stretching of the
  list that keeps its order and uses each relation at least once, consecutive repeats only
  ([a, b] at 3 hops: a a b and a b b). A walk never steps back onto the topic entity ("films
  that share a director with Heat" are not Heat; the actors of those films are not reached
  through Heat). ``hops`` starts at the number of relations;
  :func:`next_hops` lengthens it by one when the critic rejected the same action;
- several topic entities, or no useful relation: the paper's ego-graph intersection
  (:func:`agents.hybgrag.retrieval.hybrid_retrieve`), the radius being the relations per
  entity (at least 1), lengthened the same way.

On a KB with passages, a hop may also go through a passage where the graph lacks the edge
(:mod:`tools.text_hops`; ``text_hops`` setting).
"""

from __future__ import annotations

import math
from itertools import combinations

from hybridrag.agents.hybgrag.retrieval import Reference, Retrieval, hybrid_retrieve, rank_entities
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.model import Triple
from hybridrag.tools.text_hops import base_relation, has_passages, nearest_steps, text_steps

MAX_HOPS = 3  # longest path or radius the widening reaches (MetaQA's deepest questions)
MAX_TEXT_FRONTIER = 100  # frontier entities per hop that take text hops (a bound on lexical searches)


def base_hops(relations: list[str], n_topics: int) -> int:
    """Hops of a first retrieval: the router's relations per topic entity, at least 1."""
    return max(1, math.ceil(len(relations) / max(n_topics, 1)))


def action_key(topic_ids: list[str], relations: list[str]) -> list[str]:
    """What identifies a retrieval request: the linked topic ids, then the relations."""
    return [*sorted(topic_ids), "|", *relations]


def next_hops(previous: dict | None, key: list[str], relations: list[str], n_topics: int) -> int:
    """Hops of this retrieval: one more than the last one when it ran the same action.

    The critic rejected the last retrieval (otherwise the loop would have ended); when the
    router answered the feedback with the same entities and relations, the answer is further
    away than the path searched, so the search goes one hop deeper (at most :data:`MAX_HOPS`).
    """
    first = base_hops(relations, n_topics)
    if previous and previous.get("key") == key and previous.get("hops"):
        return max(first, min(previous["hops"] + 1, MAX_HOPS))
    return first


def hybrid_request(
    question: str, action: dict, previous: dict | None, radius: int, text_hops: bool, k: int
) -> tuple[dict, dict]:
    """The hybrid_retrieve step's arguments for an action, and the facts its retrieval records.

    The relations are the action's ``path`` when a rule set one, else the router's ``relations``.
    ``radius`` >= 1 is the paper's fixed ego-graph radius; 0 follows the relation path, one hop
    deeper than ``previous`` (the last retrieval's facts) when that ran the same action.

    Returns:
        ``(step arguments, facts)``: the facts name the ``hops`` and, along the path, the action ``key``.
    """
    ids = list(dict.fromkeys(e["id"] for e in action["linked"]))
    rels = list(action.get("path") or action["relations"])  # a rule's path (agents.hybgrag.reroute), else the router's
    args = {"question": question, "entities": ids, "relations": rels, "k": k}
    if radius > 0:
        return {**args, "hops": radius}, {"hops": radius}
    key = action_key(ids, rels)
    hops = next_hops(previous, key, rels, len(ids))
    return {**args, "hops": hops, "along_path": True, "text_hops": text_hops}, {"hops": hops, "key": key}


def stretched_paths(relations: list[str], hops: int) -> list[tuple[str, ...]]:
    """Relation sequences of length ``hops`` keeping the order, each relation at least once.

    Fewer hops than relations keeps the first ``hops`` relations.
    """
    n = len(relations)
    if hops <= n:
        return [tuple(relations[:hops])]
    out = []
    for cuts in combinations(range(1, hops), n - 1):  # where each next relation starts
        bounds = [0, *cuts, hops]
        out.append(tuple(r for i, r in enumerate(relations) for _ in range(bounds[i + 1] - bounds[i])))
    return out


def follow_path(kb: KnowledgeBase, topic: str, path: tuple[str, ...], text: bool = False) -> dict[str, list[Triple]]:
    """Entities reached by walking ``path`` from ``topic``, with one path each.

    A step goes either direction and never back onto ``topic``; with ``text``, also through
    passages (:mod:`tools.text_hops`, for at most ``MAX_TEXT_FRONTIER`` entities per hop).
    """
    frontier: dict[str, list[Triple]] = {topic: []}
    for rel in path:
        nxt: dict[str, list[Triple]] = {}
        steps = [
            (p, c, t)
            for t in kb.graph.neighbors(list(frontier), relations=[rel], direction="both")
            for p, c in ((t.head, t.tail), (t.tail, t.head))
            if p in frontier
        ]
        if text:
            steps += text_steps(kb, list(frontier)[:MAX_TEXT_FRONTIER], rel, {p for p, _, _ in steps})
            steps = steps or nearest_steps(kb, list(frontier), rel)  # a hop that reached nothing
        for parent, child, t in steps:
            if child not in (parent, topic) and child not in nxt:
                nxt[child] = [*frontier[parent], t]
        frontier = nxt
        if not frontier:
            break
    return frontier


def path_retrieve(
    kb: KnowledgeBase,
    question: str,
    topic_ids: list[str],
    relations: list[str],
    hops: int,
    k: int = 10,
    text: bool = True,
) -> Retrieval:
    """Hybrid module along the relation path (one topic), else the ego-graph intersection.

    ``text``: text hops too when the KB holds passages.
    """
    if len(topic_ids) != 1 or not relations:
        return hybrid_retrieve(kb, question, topic_ids, relations, hops, k)
    topic = topic_ids[0]
    reached: dict[str, list[Triple]] = {}
    for path in stretched_paths(relations, hops):
        for eid, trail in follow_path(kb, topic, path, text and has_passages(kb)).items():
            if eid != topic and eid not in reached:
                reached[eid] = trail
    used = {base_relation(t.type) for trail in reached.values() for t in trail}
    out = Retrieval("hybrid", [], {topic: len(reached)}, len(reached), [r for r in relations if r not in used])
    ranked = rank_entities(kb, question, sorted(reached), k)
    names = kb.names(eid for eid, _, _ in ranked)  # one store read for all candidates
    for eid, score, row in ranked:
        text = kb.docs[row].text if row >= 0 else names[eid]
        out.references.append(Reference(eid, "entity", names[eid], score, "kg", text, [reached[eid]]))
    return out

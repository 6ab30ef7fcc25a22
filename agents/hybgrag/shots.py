"""HybGRAG's in-context examples drawn from the KB at hand (no LLM here).

Built from the KB's solved examples (:mod:`agents.shots`: questions synthesized from the
KB's schema and its own entities, or kept from runs), so every example names only this
KB's entity types and relations:

- router: the ``k`` solved examples nearest to the question (masked-question neighbours),
  as the action a router should take (topic entities with types, the path's relations once
  each, module ``hybrid``);
- validator: two examples per entity type, as the paper (App. C.2): for each type, one
  example whose reference is an answer reached along the example's relation path (``yes``)
  and one whose reference is a neighbour of the topic through another relation (``no``);
- commentor: Table 4's six error types applied to solved examples (:mod:`agents.hybgrag.experience`),
  each labelled by construction and, for the two intersection types, by the intersection the KB gives.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from hybridrag.agents.hybgrag import experience
from hybridrag.agents.hybgrag.paths import follow_path
from hybridrag.agents.hybgrag.retrieval import verbalise_path
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts import load_examples

FEEDBACK_TYPES = experience.FEEDBACK_TYPES


def _bank(kb: KnowledgeBase) -> Any:
    from hybridrag.agents.shots import bank_for  # the shared solved-examples bank

    return bank_for(kb)


def router_shots(kb: KnowledgeBase, question: str, k: int) -> list[dict]:
    """The ``k`` nearest solved examples as router actions (``question, entities, relations, module``).

    ``relations`` names each relation of the example's path once, as a router does; ``path`` is
    the whole path (for the rules of :mod:`agents.hybgrag.reroute`; the prompt does not show it).
    """
    if k <= 0:
        return []
    return [
        {
            "question": ex.question,
            "entities": experience.entities_of(ex),
            "relations": list(dict.fromkeys(ex.relations)),
            "module": "hybrid",
            "path": list(ex.relations),
        }
        for ex in _bank(kb).nearest(question, k, role="router")
    ]


def _positive(kb: KnowledgeBase, ex: Any, topic: str) -> dict | None:
    answers = {a.casefold() for a in ex.answers}
    reached = follow_path(kb, topic, tuple(ex.relations))
    names = kb.names(reached) if reached else {}  # one store read for every reached entity
    for eid, trail in reached.items():
        if names[eid].casefold() in answers:
            return {"name": names[eid], "path": verbalise_path(kb, topic, trail)}
    return None


def _negative(kb: KnowledgeBase, ex: Any, topic: str) -> dict | None:
    """A reference that misses the question (never an answer), or None.

    A neighbour through another relation, else an entity the path reaches one hop short or one hop too far.
    """
    answers = {a.casefold() for a in ex.answers}
    edges = [(t, t.tail if t.head == topic else t.head) for t in kb.graph.neighbors([topic], direction="both")]
    names = kb.names(other for _, other in edges) if edges else {}  # one store read per list of entities
    for t, other in edges:
        if t.type not in ex.relations and other != topic and names[other].casefold() not in answers:
            return {"name": names[other], "path": verbalise_path(kb, topic, [t])}
    rels = tuple(ex.relations)
    for path in (rels[:-1], (*rels, rels[-1])):
        reached = sorted(follow_path(kb, topic, path).items()) if path else []
        names = kb.names(eid for eid, _ in reached) if reached else {}
        for eid, trail in reached:
            if names[eid].casefold() not in answers:
                return {"name": names[eid], "path": verbalise_path(kb, topic, trail)}
    return None


def validator_shots(kb: KnowledgeBase, per_type: int = 2) -> list[dict]:
    """Per entity type, ``per_type`` examples alternating yes / no: ``question, name, path, verdict``."""
    if per_type <= 0:
        return []
    out = []
    for etype, examples in sorted(_bank(kb).by_type(2 * per_type).items()):
        made = 0
        for ex in examples:
            topic = experience.topic_id(kb, ex)
            if topic is None or made >= per_type:
                continue
            want_no = made % 2 == 1
            ref = _negative(kb, ex, topic) if want_no else _positive(kb, ex, topic)
            if ref is None:
                continue
            out.append({"question": ex.question, "type": etype, **ref, "verdict": "no" if want_no else "yes"})
            made += 1
    return out


def commentor_shots(kb: KnowledgeBase, count: int) -> list[dict]:
    """Up to ``count`` experience entries (Table 4's six error types in turn) made from the KB's examples."""
    return experience.commentor_shots(kb, count, _bank(kb))


@lru_cache(maxsize=16)
def _cached(kb: KnowledgeBase, role: str, n: int) -> tuple[dict, ...]:
    return tuple(validator_shots(kb, n) if role == "validator" else commentor_shots(kb, n))


def examples_for(kb: KnowledgeBase, role: str, question: str, source: str, n: int, file: str = "") -> list[dict]:
    """A role's examples: from the KB at hand (``source="kb"``) or a JSON file (``"bundled"``, or ``file``).

    ``n`` is the number of examples (router, commentor) or examples per entity type (validator,
    always from the KB: the bundled files hold none).
    """
    if source not in ("kb", "bundled"):
        raise ValueError(f"hybgrag examples must be 'kb' or 'bundled', got {source!r}")
    if role != "validator" and (source == "bundled" or file):
        name = {"router": "hybgrag_router", "commentor": "hybgrag_experience"}[role]
        return load_examples(name, file or None, n)
    if role == "router":
        return router_shots(kb, question, n)
    return list(_cached(kb, role, n))

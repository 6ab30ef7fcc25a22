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
- commentor: the six error types applied to solved examples, each labelled by construction
  and, for the two intersection types, by the intersection the KB actually gives.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from hybridrag.agents.hybgrag.paths import follow_path
from hybridrag.agents.hybgrag.retrieval import hybrid_retrieve, link_entity, verbalise_path
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts import load_examples

FEEDBACK_TYPES = (
    "incorrect_retrieval_module",
    "no_entity",
    "incorrect_entity_relation",
    "missing_entity",
    "no_intersection",
    "incorrect_intersection",
)


def _bank(kb: KnowledgeBase) -> Any:
    from hybridrag.agents.shots import bank_for  # the shared solved-examples bank

    return bank_for(kb)


def _entities(ex: Any) -> list[dict]:
    return [{"name": n, "type": t} for n, t in zip(ex.topic, ex.topic_types, strict=False)]


def router_shots(kb: KnowledgeBase, question: str, k: int) -> list[dict]:
    """The ``k`` nearest solved examples as router actions (``question, entities, relations, module``)."""
    if k <= 0:
        return []
    return [
        {
            "question": ex.question,
            "entities": _entities(ex),
            "relations": list(dict.fromkeys(ex.relations)),
            "module": "hybrid",
        }
        for ex in _bank(kb).nearest(question, k, role="router")
    ]


def _topic_id(kb: KnowledgeBase, ex: Any) -> str | None:
    if not ex.topic:
        return None
    ent = link_entity(kb, ex.topic[0], ex.topic_types[0] if ex.topic_types else None)
    return ent.id if ent else None


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
            topic = _topic_id(kb, ex)
            if topic is None or made >= per_type:
                continue
            want_no = made % 2 == 1
            ref = _negative(kb, ex, topic) if want_no else _positive(kb, ex, topic)
            if ref is None:
                continue
            out.append({"question": ex.question, "type": etype, **ref, "verdict": "no" if want_no else "yes"})
            made += 1
    return out


def _intersection_type(kb: KnowledgeBase, ex: Any, ids: list[str], relations: list[str]) -> str | None:
    res = hybrid_retrieve(kb, ex.question, ids, relations, 1, 5)
    if not res.intersection:
        return "no_intersection"
    answers = {a.casefold() for a in ex.answers}
    return None if any(r.name.casefold() in answers for r in res.references) else "incorrect_intersection"


def _second_entity(kb: KnowledgeBase, ex: Any, other: Any, etype: str) -> dict | None:
    """A second topic entity for an intersection error, or None.

    For ``incorrect_intersection`` one sharing a neighbour with the topic along the first relation
    (so the neighbourhoods meet), else another example's topic.
    """
    if etype == "incorrect_intersection":
        topic = _topic_id(kb, ex)
        reached = sorted(follow_path(kb, topic, (ex.relations[0], ex.relations[0]))) if topic else []
        ents = kb.graph.get_many(reached) if reached else {}  # one store read for every reached entity
        for eid in reached:
            name = ents[eid].name if eid in ents else eid
            if name.casefold() not in {a.casefold() for a in ex.answers}:
                return {"id": eid, "name": name, "type": ents[eid].type if eid in ents else None}
        return None
    oid = _topic_id(kb, other)
    return {"id": oid, "name": other.topic[0], "type": other.topic_types[0]} if oid else None


def commentor_shots(kb: KnowledgeBase, count: int) -> list[dict]:
    """Up to ``count`` experience entries (the six error types in turn) made from the KB's examples."""
    bank, relations = _bank(kb), sorted(kb.graph.schema().relation_types)
    grouped = bank.by_type(max(2, count // 3)) if count > 0 else {}
    examples = [ex for _, exs in sorted(grouped.items()) for ex in exs if ex.topic and ex.relations]
    out: list[dict] = []
    for i, ex in enumerate(examples):
        if len(out) >= count:
            break
        etype, ents, rels = FEEDBACK_TYPES[len(out) % len(FEEDBACK_TYPES)], _entities(ex), list(ex.relations)
        entry = {
            "question": ex.question,
            "module": "hybrid",
            "entities": ents,
            "relations": rels,
            "error_type": etype,
            "wrong_entities": [],
            "wrong_relations": [],
        }
        if etype == "incorrect_retrieval_module":
            entry["module"] = "text"
        elif etype == "no_entity":
            entry["entities"] = []
        elif etype == "incorrect_entity_relation":
            wrong = next((r for r in relations if r not in rels), None)
            if wrong is None:
                continue
            entry["relations"], entry["wrong_relations"] = [wrong, *rels[1:]], [wrong]
        elif etype == "missing_entity":
            entry["relations"] = rels[:-1]
        else:  # a second topic entity; which intersection error the KB shows decides the label
            second = _second_entity(kb, ex, examples[(i + 1) % len(examples)], etype)
            topic = _topic_id(kb, ex)
            if second is None or topic is None or second["id"] == topic:
                continue
            found = _intersection_type(kb, ex, [topic, second["id"]], rels)
            if found is None:
                continue
            entry.update(entities=[*ents, {"name": second["name"], "type": second["type"]}], error_type=found)
        out.append(entry)
    return out


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

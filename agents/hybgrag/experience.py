"""HybGRAG's commentor examples made from the KB at hand: Table 4's six error types (no LLM here).

Each entry is a rejected router action on one of the KB's solved examples, with the critique
that names its error, as the paper's experience pairs (§3.2). The error is put in by
construction, so its label is known; the two intersection types are labelled by the
intersection the KB actually gives:

- ``incorrect_entity_relation``: a textual aspect of the question (a run of its words that
  names no KB entity) taken for an entity of another type, the paper's main error (Fig. 1c,
  Fig. 5a), in turn with a relation that does not lead to the answer;
- ``missing_entity``: the question names a second entity (one linked to an answer by another
  relation, added to the question as a constraint) and the action dropped it with its relation;
- ``no_entity``: nothing extracted;
- ``no_intersection`` / ``incorrect_intersection``: a second topic entity whose neighbourhood
  misses the topic's, or meets it away from the answers;
- ``incorrect_retrieval_module``: the text module chosen for a relational question.
"""

from __future__ import annotations

from typing import Any

from hybridrag.agents.hybgrag.aspects import answer_ids, passage_aspect, textual_aspect, topic_id
from hybridrag.agents.hybgrag.aspects import entities_of as entities_of  # the router's examples use it
from hybridrag.agents.hybgrag.paths import follow_path
from hybridrag.agents.hybgrag.retrieval import hybrid_retrieve
from hybridrag.agents.hybgrag.roles import ERROR_TYPES
from hybridrag.agents.shots.synth import phrase
from hybridrag.kb.base import KnowledgeBase

FEEDBACK_TYPES = ERROR_TYPES  # Table 4's six error types, in the commentor's order
REASONS = {
    "aspect": "{name} describes what is asked (a textual aspect), not a {type} of the graph.",
    "relation": "Relation {name} does not lead from the topic entity to the answer.",
    "missing_entity": "The question also names {name}; only one entity was extracted.",
    "no_entity": "The question names an entity, but none was extracted.",
    "no_intersection": "The neighbourhoods of the two entities share nothing.",
    "incorrect_intersection": "The neighbourhoods of the two entities meet, but not at the answer.",
    "incorrect_retrieval_module": "The question names an entity and a relation: search the graph.",
}


def _wrong_entity(kb: KnowledgeBase, ex: Any, entry: dict) -> dict | None:
    """A textual aspect of the question (or one added from an answer's passage) taken for an entity of another type."""
    aspect = textual_aspect(kb, ex)
    if aspect is None and (aspect := passage_aspect(kb, ex)) is not None:
        entry = {**entry, "question": f"{ex.question.rstrip(' ?')}, {aspect}"}
    types = [t for t in sorted(kb.graph.schema().entity_types) if t not in ex.topic_types]
    if aspect is None or not types:
        return None
    named = aspect.replace(" ", "_").casefold()
    etype = next((t for t in [ex.answer_type, *types] if t in types and t.casefold() != named), types[0])
    reason = REASONS["aspect"].format(name=f'"{aspect}"', type=etype)
    entities = [*entry["entities"], {"name": aspect, "type": etype}]
    return {**entry, "entities": entities, "wrong_entities": [aspect], "reasoning": reason}


def _wrong_relation(kb: KnowledgeBase, ex: Any, entry: dict) -> dict | None:
    rels = list(ex.relations)
    wrong = next((r for r in sorted(kb.graph.schema().relation_types) if r not in rels), None)
    if wrong is None:
        return None
    reason = REASONS["relation"].format(name=f'"{wrong}"')
    return {**entry, "relations": [wrong, *rels[1:]], "wrong_relations": [wrong], "reasoning": reason}


def second_constraint(kb: KnowledgeBase, ex: Any) -> dict | None:
    """An entity linked to one of the answers by a relation off the path, as ``{id, name, type, relation, phrase}``."""
    topic, answers = answer_ids(kb, ex)
    for eid in answers:
        for t in kb.graph.neighbors([eid], direction="both"):
            other = t.tail if t.head == eid else t.head
            if t.type in ex.relations or other in (eid, topic):
                continue
            ent = kb.graph.get_many([other]).get(other)
            if ent is None or ent.name.casefold() in ex.question.casefold():
                continue
            direction = "in" if t.head == eid else "out"  # seen from the added entity
            text = phrase(ent.name, t.type, direction, ex.answer_type)
            return {"id": other, "name": ent.name, "type": ent.type, "relation": t.type, "phrase": text}
    return None


def _missing_entity(kb: KnowledgeBase, ex: Any, entry: dict) -> dict | None:
    """The question with a second constraint; the action keeps only the first entity and its relations."""
    extra = second_constraint(kb, ex)
    if extra is None:
        return None
    question = f"{ex.question.rstrip(' ?')}, and is also {extra['phrase']}?"
    reason = REASONS["missing_entity"].format(name=f'"{extra["name"]}"')
    return {**entry, "question": question, "dropped_entity": extra, "reasoning": reason}


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
        topic = topic_id(kb, ex)
        reached = sorted(follow_path(kb, topic, (ex.relations[0], ex.relations[0]))) if topic else []
        ents = kb.graph.get_many(reached) if reached else {}  # one store read for every reached entity
        for eid in reached:
            name = ents[eid].name if eid in ents else eid
            if name.casefold() not in {a.casefold() for a in ex.answers}:
                return {"id": eid, "name": name, "type": ents[eid].type if eid in ents else None}
        return None
    oid = topic_id(kb, other)
    return {"id": oid, "name": other.topic[0], "type": other.topic_types[0]} if oid else None


def _intersection(kb: KnowledgeBase, ex: Any, other: Any, etype: str, entry: dict) -> dict | None:
    """A second topic entity; which intersection error the KB shows decides the label."""
    second, topic = _second_entity(kb, ex, other, etype), topic_id(kb, ex)
    if second is None or topic is None or second["id"] == topic:
        return None
    found = _intersection_type(kb, ex, [topic, second["id"]], list(ex.relations))
    if found is None:
        return None
    entities = [*entry["entities"], {"name": second["name"], "type": second["type"]}]
    return {**entry, "entities": entities, "error_type": found, "reasoning": REASONS[found]}


def make_entry(kb: KnowledgeBase, ex: Any, other: Any, kind: str) -> dict | None:
    """One rejected action of ``kind`` (an error type, or ``aspect`` / ``relation``) on example ``ex``, or None."""
    etype = kind if kind in FEEDBACK_TYPES else "incorrect_entity_relation"
    entry = {
        "question": ex.question,
        "module": "hybrid",
        "entities": entities_of(ex),
        "relations": list(ex.relations),
        "error_type": etype,
        "wrong_entities": [],
        "wrong_relations": [],
        "reasoning": REASONS.get(etype, ""),
    }
    if kind == "incorrect_retrieval_module":
        return {**entry, "module": "text"}
    if kind == "no_entity":
        return {**entry, "entities": []}
    if kind == "aspect":
        return _wrong_entity(kb, ex, entry)
    if kind == "relation":
        return _wrong_relation(kb, ex, entry)
    if kind == "missing_entity":
        return _missing_entity(kb, ex, entry)
    return _intersection(kb, ex, other, kind, entry)


# Table 4's incorrect entity/relation, in turn as a textual aspect taken for an entity (the paper's main case) and
# as a relation that does not lead to the answer
_KINDS = {etype: (etype,) for etype in FEEDBACK_TYPES} | {"incorrect_entity_relation": ("aspect", "relation")}


def commentor_shots(kb: KnowledgeBase, count: int, bank: Any) -> list[dict]:
    """Up to ``count`` experience entries, Table 4's six error types in turn, made from ``bank``'s examples.

    Each kind of error walks the examples with its own cursor, so an example that cannot show one
    kind (no textual aspect in its question, no second constraint in the KB) is still used for the others.
    """
    grouped = bank.by_type(max(2, count)) if count > 0 else {}
    examples = [ex for _, exs in sorted(grouped.items()) for ex in exs if ex.topic and ex.relations]
    cursor = {kind: 0 for kinds in _KINDS.values() for kind in kinds}
    turns = dict.fromkeys(FEEDBACK_TYPES, 0)

    def next_entry(kind: str) -> dict | None:
        while cursor[kind] < len(examples):
            i = cursor[kind]
            cursor[kind] += 1
            entry = make_entry(kb, examples[i], examples[(i + 1) % len(examples)], kind)
            if entry is not None:
                return entry
        return None

    out: list[dict] = []
    live = list(FEEDBACK_TYPES)
    while len(out) < count and live:
        etype = live[len(out) % len(live)]
        kinds = _KINDS[etype][turns[etype] % len(_KINDS[etype]) :] + _KINDS[etype][: turns[etype] % len(_KINDS[etype])]
        entry = next((e for e in map(next_entry, kinds) if e is not None), None)
        if entry is None:
            live.remove(etype)
            continue
        turns[etype] += 1
        out.append(entry)
    return out

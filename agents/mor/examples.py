"""The planner's few-shot examples: from the KB's solved-examples bank, or the bundled movie files.

``examples="kb"`` (default): the ``k`` solved examples of the KB at hand nearest to the question
(:meth:`agents.shots.Bank.nearest`, entity mentions masked), each turned into a planning graph:
one route from the topic entity (its type, its name as the restriction) along the example's
relation path, every node typed by the schema, the last one the answer type; in triplet mode
the same path as one triplet per hop. ``examples="bundled"``: the movie JSON files in
``prompts/examples/`` (MetaQA evaluations), or the file named by ``few_shot``.
"""

from __future__ import annotations

from hybridrag.agents.mor.plan import hop_relations
from hybridrag.agents.shots import SolvedExample, bank_for
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.model import Schema
from hybridrag.prompts import load_examples


def _next_type(schema: Schema, at: str, relation: str, direction: str) -> str | None:
    rel = schema.relation_types.get(relation)
    if rel is None:
        return None
    forward = direction == "out" or (direction != "in" and at in rel.head_types)
    ends = rel.tail_types if forward else rel.head_types
    return ends[0] if ends else None


def route_of(example: SolvedExample, schema: Schema) -> list[dict] | None:
    """The example's relation path as route nodes ``{"type", "restriction", "relation"}``; None when untypable."""
    if not example.topic or not example.topic_types or not example.relations:
        return None
    nodes = [{"type": example.topic_types[0], "restriction": example.topic[0]}]
    for i, relation in enumerate(example.relations):
        direction = example.directions[i] if i < len(example.directions) else ""
        last = i == len(example.relations) - 1
        kind = example.answer_type if last else _next_type(schema, nodes[-1]["type"], relation, direction)
        if not kind:
            return None
        nodes.append({"type": kind, "relation": relation})
    return nodes


def needed_relations(nodes: list[dict], schema: Schema) -> list[dict]:
    """The route's nodes naming a relation only where more than one relation links the two types.

    Where one relation links them, naming it adds nothing the plan's validation does not find
    (:func:`agents.mor.plan.hop_relations`) and costs the planner tokens to read and to write.
    """
    out = [nodes[0]]
    for a, b in zip(nodes, nodes[1:], strict=False):
        sole = len(hop_relations(schema, a["type"], b["type"])) == 1
        out.append({k: v for k, v in b.items() if not (sole and k == "relation")})
    return out


def as_shot(example: SolvedExample, schema: Schema, mode: str, relations: str = "all") -> dict | None:
    """One planner example ``{"question", "plan"}`` (paths) or ``{"question", "triplets"}``.

    ``relations="needed"``: a paths example names a relation only where the types need it
    (:func:`needed_relations`).
    """
    nodes = route_of(example, schema)
    if nodes is None:
        return None
    if mode != "triplets":
        shown = needed_relations(nodes, schema) if relations == "needed" else nodes
        return {"question": example.question, "plan": {"routes": [{"nodes": shown}]}}
    triplets = [
        {
            "head": {k: v for k, v in a.items() if k != "relation"},
            "relation": b["relation"],
            "tail": {"type": b["type"]},
        }
        for a, b in zip(nodes, nodes[1:], strict=False)
    ]
    return {"question": example.question, "triplets": {"target": nodes[-1]["type"], "triplets": triplets}}


def planner_shots(
    kb: KnowledgeBase,
    question: str,
    source: str,
    k: int,
    mode: str = "paths",
    few_shot: str = "",
    relations: str = "all",
) -> list[dict]:
    """The planner's ``k`` examples for ``question`` from ``source`` (``kb`` or ``bundled``).

    ``relations``: ``needed`` or ``all``, the relations a KB example's route names (:func:`as_shot`).
    """
    if source == "bundled" or few_shot:
        return load_examples("mor_triplets" if mode == "triplets" else "mor_planner", few_shot or None, k)
    if source != "kb":
        raise ValueError(f"unknown examples source {source!r}; use kb or bundled")
    schema = kb.graph.schema()
    shots = []
    for ex in bank_for(kb).nearest(question, k * 2):
        shot = as_shot(ex, schema, mode, relations)
        if shot is not None:
            shots.append(shot)
        if len(shots) >= k:
            break
    return shots

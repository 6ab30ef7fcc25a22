"""One question's first decision (router, planner, analysis, entity extraction) against its gold record.

The first decision is read from the run's trace, as the method recorded it:

- HybGRAG: ``route_question`` (module, linked entities, relations);
- MoR: ``plan_question`` (the first route's nodes: types, the anchor's name, relations);
- HydraRAG: ``analyze_question`` (topic and skyline relations) and ``select_sources``;
- SSRAG: ``extract_entities`` (linked entities) and ``route_query`` (the route label).

The errors found are named with the noise types of :mod:`hybridrag.evals.oracle.noise`; a
decision with several gets the first of :data:`PRIORITY` as its type (all are kept in
``errors``). A decision no noise type describes (no route, an extra hop, an extra entity where
the method's stand-in has no such type) is ``unclassified`` with the reason, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from hybridrag.evals.oracle.gold import GoldRecord, norm
from hybridrag.evals.oracle.noise import METHOD_TYPES, OPT_IN_TYPES

PRIORITY = (
    "wrong_module",
    "missing_entity",
    "wrong_entity",
    "wrong_category",
    "wrong_relation",
    "missing_relation",
    "extra_entity",
)
# the trace node after which a method's first decision is complete (the run can stop there)
LAST_NODE = {
    "hybgrag": "route_question",
    "mor": "plan_question",
    "hydrarag": "select_sources",
    "ssrag": "route_query",
}


@dataclass(frozen=True)
class Verdict:
    """The type of one first decision (``correct``, a noise type or ``unclassified``) and its findings."""

    type: str
    errors: tuple[str, ...] = ()
    reason: str = ""
    detail: dict = field(default_factory=dict)


def _verdict(method: str, errors: list[str], detail: dict) -> Verdict:
    """The first error of ``errors`` by priority; one the method's stand-in cannot draw is unclassified."""
    if not errors:
        return Verdict("correct", (), "", detail)
    found = tuple(sorted(dict.fromkeys(errors), key=PRIORITY.index))
    drawable = (*METHOD_TYPES[method], *OPT_IN_TYPES.get(method, ()))
    if found[0] not in drawable:
        return Verdict("unclassified", found, f"{found[0]} (no {method} noise type)", detail)
    return Verdict(found[0], found, "", detail)


def name_key(name: str) -> str:
    """A name compared without case, punctuation or spacing (``Railroaded!`` is ``Railroaded``)."""
    return re.sub(r"\W+", "", norm(str(name)))


def _names(values: Sequence[str]) -> list[str]:
    return [name_key(v) for v in values if name_key(v)]


def entity_errors(names: Sequence[str], topic: str) -> list[str]:
    """``missing_entity`` (none), ``wrong_entity`` (the topic not among them), ``extra_entity``."""
    got = _names(names)
    if not got:
        return ["missing_entity"]
    if name_key(topic) not in got:
        return ["wrong_entity"]
    return ["extra_entity"] if len(set(got)) > 1 else []


def relation_errors(path: Sequence[str], rec: GoldRecord, unique_ok: bool = False) -> list[str]:
    """``wrong_relation`` (a relation off the gold path, or out of order), ``missing_relation`` (fewer)."""
    path = [p for p in path if p]
    gold = list(rec.relations)
    if path == gold or (unique_ok and path == rec.unique_relations()):
        return []
    foreign = bool(set(path) - set(gold))
    if len(path) > len(gold):  # an extra hop: no noise type makes one, unless a relation is also wrong
        return ["wrong_relation", "extra_relation"] if foreign else ["extra_relation"]
    if len(path) < len(gold):
        return ["wrong_relation", "missing_relation"] if foreign else ["missing_relation"]
    return ["wrong_relation"]


def hybgrag(steps: dict[str, dict], rec: GoldRecord) -> Verdict:
    """HybGRAG's router: module, entities, relations (each once, as the router lists them)."""
    s = steps.get("route_question")
    if s is None:
        return Verdict("unclassified", (), "no route_question step")
    names = s.get("linked") or [str(e).rsplit(" (", 1)[0] for e in s.get("entities") or []]
    errors = [] if s.get("module") == "hybrid" else ["wrong_module"]
    errors += entity_errors(names, rec.topic) + relation_errors(s.get("relations") or [], rec, unique_ok=True)
    detail = {
        "module": s.get("module"),
        "entities": names,
        "relations": s.get("relations"),
        "fallback": s.get("fallback"),
    }
    return _extra_hop("hybgrag", errors, detail)


def _extra_hop(method: str, errors: list[str], detail: dict) -> Verdict:
    if "extra_relation" in errors and "wrong_relation" not in errors:
        return Verdict("unclassified", ("extra_relation",), "extra hop (no noise type)", detail)
    return _verdict(method, [e for e in errors if e != "extra_relation"], detail)


def mor(steps: dict[str, dict], rec: GoldRecord) -> Verdict:
    """MoR's planner: the first route's anchor, node types and relations."""
    s = steps.get("plan_question")
    if s is None:
        return Verdict("unclassified", (), "no plan_question step")
    routes = (s.get("raw") or {}).get("routes") or []
    if not routes or not routes[0].get("nodes"):
        return Verdict("unclassified", (), "no route planned", {"problems": s.get("problems")})
    nodes = routes[0]["nodes"]
    anchors = [n.get("restriction") for n in nodes if n.get("restriction")]
    errors = entity_errors(anchors, rec.topic)
    errors = [e for e in errors if e != "extra_entity"]  # several anchors: MoR intersects them
    types = [n.get("type", "") for n in nodes]
    if len(types) == len(rec.types) and types != list(rec.types):
        errors.append("wrong_category")
    rels = [n.get("relation") or "" for n in nodes[1:]]
    errors += ["missing_relation"] if "" in rels and len(rels) == rec.hops else relation_errors(rels, rec)
    detail = {"types": types, "anchors": anchors, "relations": rels, "problems": s.get("problems")}
    return _extra_hop("mor", errors, detail)


def hydrarag(steps: dict[str, dict], rec: GoldRecord) -> Verdict:
    """HydraRAG's analysis (planned topic, skyline relations) and source selection."""
    from hybridrag.agents.hydrarag.analysis import split_chain

    a = steps.get("analyze_question")
    if a is None:
        return Verdict("unclassified", (), "no analyze_question step")
    topics = a.get("topic_order") or []
    skyline = str(a.get("decision", "")).split(": ", 1)[-1]
    rels = [r.replace(" ", "_") for r in split_chain(skyline)[1::2]]
    chosen = str((steps.get("select_sources") or {}).get("decision", "")).split("=", 1)[-1]
    errors = [] if "kg" in chosen.replace(",", " ").split() else ["wrong_module"]
    errors += [e for e in entity_errors(topics[:1], rec.topic)] + relation_errors(rels, rec)
    detail = {"topics": topics, "relations": rels, "sources": chosen.strip(), "fallback": a.get("fallback")}
    return _extra_hop("hydrarag", errors, detail)


def ssrag(steps: dict[str, dict], rec: GoldRecord) -> Verdict:
    """SSRAG's entity extraction (linked entities) and its route label."""
    e, r = steps.get("extract_entities"), steps.get("route_query")
    if e is None or r is None:
        return Verdict("unclassified", (), "no extract_entities or route_query step")
    label = str(r.get("decision", "")).split(" ", 1)[0]
    errors = [] if label == "FACTUAL" else ["wrong_module"]
    errors += entity_errors(e.get("linked") or [], rec.topic)
    detail = {"linked": e.get("linked"), "route": label, "fallback": e.get("fallback")}
    return _verdict("ssrag", errors, detail)


CLASSIFIERS = {"hybgrag": hybgrag, "mor": mor, "hydrarag": hydrarag, "ssrag": ssrag}


def classify(method: str, trace: Sequence[dict], rec: GoldRecord) -> Verdict:
    """The verdict on ``trace``'s first decision (the first step of each node name counts)."""
    steps: dict[str, dict] = {}
    for step in trace:
        steps.setdefault(str(step.get("node")), step)
    return CLASSIFIERS[method](steps, rec)

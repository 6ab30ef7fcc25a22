"""Grounding a small model's plan in the question's KB names and in the examples it was shown.

SmolLM2-135M plans by copying its few-shot examples, and on free wording it copies them badly: the
restriction of a route's first node is a run of words around the name ("steve martin was in"), a
misspelt name ("Dibalo Cody"), or a phrase with no name at all ("films"); the anchor gets the
examples' type rather than the name's (``movie<burt reynolds>``); a hop is dropped or one added.
Its re-plans repeat the same plan (32 of 34 re-plans on the 120 paraphrase-set questions of issue
26). Each route of such a plan is grounded here, before validation (:func:`agents.mor.plan.validate_plan`):

1. the anchor: a restriction that is not a KB name of its type becomes the KB name the question
   writes there (:func:`agents.shots.mask.find_mentions`, case-insensitive) or writes with one typo
   (:func:`tools.names.close_spellings`), with that entity's type: among the names whose span
   overlaps the restriction (else all), one of the planned type, else of a type a shown example
   starts from, else the first;
2. the path: a route whose chain of types and relations is none of the shown examples' routes
   from the anchor's type takes the nearest such example's route after its anchor (the examples
   are the KB's solved questions nearest to this one, :mod:`agents.mor.examples`).

A route whose anchor no KB name grounds is kept as the model wrote it.

When the shown examples leave nothing to choose, no call is made (:func:`ruled_plan`): every example
is one route with one chain of types and relations from one start type, and the question writes
exactly one KB name of that type. Grounding would turn a plan from that type into this route with
that name, so the rule writes it (SmolLM2's 3-hop plan is one ~50-token call, about 2 s on this
2-core CPU; issue 31 asks for fewer calls where a rule decides as well). The content of the plan is
still the paper's planning graph (§3.1): typed nodes, a restriction on the anchor, the answer's
type at the end; only where its parts come from changes.
"""

from __future__ import annotations

from hybridrag.agents.mor.plan import Plan, PlanNode, PlanRoute
from hybridrag.agents.shots.mask import find_mentions
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.names import close_spellings

Named = tuple[str, str, str]  # (span as the question writes it, entity name, entity type)


def question_names(kb: KnowledgeBase, question: str) -> list[Named]:
    """KB names the question writes, exactly or with one typo, in question order, each with its types."""
    found: list[tuple[int, Named]] = []
    for m in find_mentions(question, kb):
        found += [(m.start, (m.text, e.name, e.type)) for e in m.entities]
    for start, end, ids in close_spellings(kb, question):
        ents = kb.graph.get_many(ids)
        found += [(start, (question[start:end], e.name, e.type)) for e in ents.values()]
    return [n for _, n in sorted(found, key=lambda x: x[0])]


def ground_anchor(kb: KnowledgeBase, node: PlanNode, names: list[Named], starts: list[str]) -> tuple[str, str] | None:
    """The anchor's (restriction, type): kept when it names a KB entity of its type, else a question name.

    Among the names the question writes where the restriction is (else anywhere), one of the planned
    type is taken first, then one of a type a shown example starts from (``starts``: "burt reynolds"
    is a person and a tag; the examples start from a person), then the first.
    """
    said = node.restriction.strip()
    if said and any(e.type == node.type for e in kb.graph.lookup(said)):
        return said, node.type
    low = said.lower()
    near = [n for n in names if low and (n[0].lower() in low or low in n[0].lower())]
    pool = near or names
    if not pool:
        return None
    _, name, kind = next((n for n in pool if n[2] == node.type), next((n for n in pool if n[2] in starts), pool[0]))
    return name, kind


def _chain(nodes: list[dict] | list[PlanNode]) -> list[tuple[str, str]]:
    """(type, relation) of each node after the anchor."""
    rows = [n if isinstance(n, dict) else n.model_dump() for n in nodes]
    return [(r.get("type", ""), r.get("relation", "")) for r in rows[1:]]


def _same(a: list[tuple[str, str]], b: list[tuple[str, str]]) -> bool:
    """Same types in order, and the same relation wherever both name one."""
    if len(a) != len(b):
        return False
    return all(x[0] == y[0] and (not x[1] or not y[1] or x[1] == y[1]) for x, y in zip(a, b, strict=True))


def ground_route(kb: KnowledgeBase, route: PlanRoute, names: list[Named], shown: list[list[dict]]) -> PlanRoute:
    """One route grounded: its anchor in the question's names, its path in the shown examples' routes."""
    if not route.nodes:
        return route
    anchor = ground_anchor(kb, route.nodes[0], names, [ex[0].get("type", "") for ex in shown if ex])
    if anchor is None:
        return route
    restriction, kind = anchor
    head = PlanNode(type=kind, restriction=restriction)
    same_start = [ex for ex in shown if ex and ex[0].get("type") == kind]
    chain = _chain(route.nodes)
    if not same_start or any(_same(chain, _chain(ex)) for ex in same_start):
        return PlanRoute(nodes=[head, *route.nodes[1:]])
    rest = [PlanNode(type=n["type"], relation=n.get("relation", "")) for n in same_start[0][1:]]
    return PlanRoute(nodes=[head, *rest])


def ground_plan(kb: KnowledgeBase, question: str, plan: Plan, shots: list[dict]) -> Plan:
    """Every route grounded (:func:`ground_route`); routes that become the same are kept once."""
    names = question_names(kb, question)
    shown = [r["nodes"] for s in shots for r in (s.get("plan") or {}).get("routes", [])[:1]]
    routes: list[PlanRoute] = []
    for route in plan.routes:
        grounded = ground_route(kb, route, names, shown)
        if grounded not in routes:
            routes.append(grounded)
    return Plan(routes=routes)


def ruled_plan(kb: KnowledgeBase, question: str, shots: list[dict]) -> Plan | None:
    """The examples' one route from the question's one KB name of its start type, or None (see the module)."""
    routes = [(s.get("plan") or {}).get("routes", []) for s in shots]
    if len(shots) < 2 or any(len(r) != 1 or not r[0].get("nodes") for r in routes):
        return None
    first = routes[0][0]["nodes"]
    kind = first[0].get("type", "")
    if any(r[0]["nodes"][0].get("type") != kind or _chain(r[0]["nodes"]) != _chain(first) for r in routes[1:]):
        return None
    named = {name for _, name, t in question_names(kb, question) if t == kind}
    if len(named) != 1:
        return None
    rest = [PlanNode(type=n["type"], relation=n.get("relation", "")) for n in first[1:]]
    return Plan(routes=[PlanRoute(nodes=[PlanNode(type=kind, restriction=named.pop()), *rest])])

"""MoR planning graphs: the planner's output models, triplet merging, schema validation, what follows a plan.

A planning graph (MoR §3.1.1) is a set of reasoning paths ("routes"); each route is a chain of
entity categories, each node carrying an optional textual restriction taken from the question,
ending at the category of the answer. Example for "films starring Tom Hanks released in 1995":
``person<Tom Hanks> → movie`` and ``year<1995> → movie``.

Validation against the KB schema (§4.1: an invalid plan falls back to textual matching), our
rules, written out because the paper gives none beyond "invalid":

- an unknown category, or two consecutive categories no relation type connects, drops the route;
- a route whose first node has no restriction has no textual anchor to seed from and is dropped;
- the target is the end category shared by most routes (the first route breaks ties), or must
  be one of the configured target types when those are given; other routes are dropped;
- a plan of one single-node route is no plan: textual matching answers it;
- each problem names the part that is wrong (``type X``, ``relation R``, ``restriction``), so
  that a re-planning turn can repair it (:mod:`agents.mor.critique`);
- routes longer than ``max_hops`` hops keep their last ``max_hops`` hops;
- in a KB without any relation type (facts only in texts) any two types may follow each other:
  the hop is followed along textual edges (:mod:`agents.mor.mentions`), by its named relation.

A relation named on an edge narrows that hop when it connects the two categories; otherwise
every relation type connecting them is traversed (noted in ``problems``).
"""

from __future__ import annotations

import json
from collections import Counter, deque

from pydantic import BaseModel, Field

from hybridrag.kb.model import Schema


class PlanNode(BaseModel):
    """One node of a reasoning path: an entity category and its restriction."""

    type: str = Field(description="Entity type, exactly as listed in the entity types.")
    restriction: str = Field(
        default="",
        description=(
            "Words of the question that pin this entity down (a name, a value, a description); "
            "empty when the question says nothing specific about it."
        ),
    )
    relation: str = Field(default="", description="Optional relation type from the previous node.")


class PlanRoute(BaseModel):
    """A reasoning path from an entity the question names to the answer's category."""

    nodes: list[PlanNode] = Field(description="Nodes in order; the last node is the answer's category.")


class Plan(BaseModel):
    """A planning graph decomposed into reasoning paths."""

    routes: list[PlanRoute] = Field(description="One route per constraint the answer must satisfy.")


class PlanTriplet(BaseModel):
    """One (head, relation, tail) fact pattern extracted from the question."""

    head: PlanNode
    relation: str = Field(default="", description="Relation type between head and tail.")
    tail: PlanNode


class TripletPlan(BaseModel):
    """Triplets of the question and the answer's category (the paper's PRIME variant)."""

    triplets: list[PlanTriplet] = Field(description="Fact patterns the answer takes part in.")
    target: str = Field(description="Entity type of the answer.")


def _norm(text: str) -> str:
    return text.strip().lower().replace(" ", "_").replace("-", "_")


def plan_from_triplets(tp: TripletPlan) -> Plan:
    """Merge triplets sharing nodes into a graph, then one route per restricted node to the answer.

    The answer node is the target-typed node without a restriction (else the first target-typed
    node); each route is the shortest chain from an anchor to it (MoR §4.1, PRIME).
    """
    key = lambda n: (_norm(n.type), n.restriction.strip().lower())  # noqa: E731
    nodes: dict[tuple[str, str], PlanNode] = {}
    adj: dict[tuple[str, str], list[tuple[tuple[str, str], str]]] = {}
    for t in tp.triplets:
        h, tl = key(t.head), key(t.tail)
        nodes.setdefault(h, t.head), nodes.setdefault(tl, t.tail)
        adj.setdefault(h, []).append((tl, t.relation))
        adj.setdefault(tl, []).append((h, t.relation))
    typed = [k for k in nodes if k[0] == _norm(tp.target)]
    answer = next((k for k in typed if not k[1]), typed[0] if typed else None)
    if answer is None:
        return Plan(routes=[])
    routes = []
    for anchor in (k for k in nodes if k[1] and k != answer):
        prev: dict = {anchor: None}
        queue = deque([anchor])
        while queue and answer not in prev:
            cur = queue.popleft()
            for nxt, rel in adj.get(cur, []):
                if nxt not in prev:
                    prev[nxt] = (cur, rel)
                    queue.append(nxt)
        if answer not in prev:
            continue
        chain, cur = [], answer
        while prev[cur] is not None:
            before, rel = prev[cur]
            chain.append(nodes[cur].model_copy(update={"relation": rel}))
            cur = before
        routes.append(PlanRoute(nodes=[nodes[anchor].model_copy(update={"relation": ""}), *reversed(chain)]))
    return Plan(routes=routes)


def hop_relations(schema: Schema, a: str, b: str) -> list[str]:
    """Relation types connecting categories ``a`` and ``b`` in either direction."""
    return [
        r.name
        for r in schema.relation_types.values()
        if (a in r.head_types and b in r.tail_types) or (b in r.head_types and a in r.tail_types)
    ]


def _check_route(route: PlanRoute, schema: Schema, types: dict[str, str], max_hops: int) -> tuple[dict | None, list]:
    """One route → (validated route dict or None, problems)."""
    shown = " → ".join(n.type for n in route.nodes)
    nodes = [
        {"type": types.get(_norm(n.type)), "restriction": n.restriction.strip(), "relation": n.relation}
        for n in route.nodes
    ]
    if not nodes:
        return None, ["empty route"]
    unknown = [n.type for n, c in zip(route.nodes, nodes, strict=True) if c["type"] is None]
    if unknown:
        return None, [f"route {shown}: unknown entity type: type {unknown[0]} is not one of the entity types"]
    nodes = nodes[-(max_hops + 1) :]
    if not nodes[0]["restriction"]:
        return None, [f"route {shown}: its first node has no restriction to start from"]
    hops, problems, said = [], [], []
    for a, b in zip(nodes, nodes[1:], strict=False):
        rels = hop_relations(schema, a["type"], b["type"])
        if not rels and not schema.relation_types:  # a KB without graph edges: the hop is followed in texts
            hops.append([b["relation"]] if b["relation"] else [])
            said.append(bool(b["relation"]))
            continue
        if not rels:
            return None, [
                f"route {shown}: no relation connects {a['type']} and {b['type']}: "
                f"type {b['type']} cannot follow type {a['type']}"
            ]
        named = {_norm(b["relation"])} & {_norm(r) for r in rels}
        if b["relation"] and not named:
            problems.append(f"relation {b['relation']} does not link type {a['type']} and type {b['type']}: all used")
        hops.append([r for r in rels if _norm(r) in named] or rels)
        said.append(bool(named))
    clean = [{"type": n["type"], "restriction": n["restriction"]} for n in nodes]
    return {"nodes": clean, "relations": hops, "named": said}, problems


def validate_plan(plan: Plan, schema: Schema, target_types: list[str], max_hops: int = 3) -> dict:
    """Check a plan against the schema.

    Returns:
        ``{"valid", "target", "routes": [{"nodes": [{"type","restriction"}], "relations": [[...]]}],
        "problems": [str], "shown": [str]}`` where ``shown`` renders the routes kept.
    """
    types = {_norm(t): t for t in schema.entity_types}
    wanted = [types[_norm(t)] for t in target_types if _norm(t) in types]
    checked, problems = [], []
    for route in plan.routes:
        ok, notes = _check_route(route, schema, types, max_hops)
        problems += notes
        if ok is not None:
            checked.append(ok)
    if len(plan.routes) == 1 and len(plan.routes[0].nodes) == 1:
        checked, problems = [], problems + ["a single node is not a plan: textual matching instead"]
    ends = [r["nodes"][-1]["type"] for r in checked if not wanted or r["nodes"][-1]["type"] in wanted]
    target = Counter(ends).most_common(1)[0][0] if ends else None
    kept = [r for r in checked if r["nodes"][-1]["type"] == target]
    problems += [
        f"route ending at {r['nodes'][-1]['type']} dropped (target {target})" for r in checked if r not in kept
    ]
    if not kept and not problems:
        problems.append("no route")
    return {
        "valid": bool(kept),
        "target": target,
        "routes": kept,
        "problems": problems,
        "shown": [render_route(r) for r in kept],
    }


def render_route(route: dict) -> str:
    """``person<Tom Hanks> → movie`` as in the paper's figures."""
    return " → ".join(f"{n['type']}<{n['restriction']}>" if n["restriction"] else n["type"] for n in route["nodes"])


def plan_outcome(
    checked: dict, raw: dict | None, iteration: int, max_iterations: int, seen: list[str]
) -> tuple[str, bool, bool, str]:
    """What follows a plan: its key among the plans ``seen``, whether it repeats one, whether to re-plan.

    An invalid plan is re-planned while plans are left and it does not repeat an earlier one.

    Returns:
        (the plan's key, repeated, re-plan, the trace decision).
    """
    key = json.dumps(raw, sort_keys=True)
    repeated = raw is not None and key in seen
    retry = not checked["valid"] and iteration < max_iterations and not repeated
    if checked["valid"]:
        decision = f"mixed traversal over {len(checked['routes'])} route(s)"
    else:
        decision = "invalid plan: re-plan" if retry else "invalid plan: textual matching"
    return key, repeated, retry, decision

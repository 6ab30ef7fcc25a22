"""MoR's corrective edge (ours; the paper plans once): what went wrong with a followed plan.

After the routes are traversed and merged, the plan is checked against what the traversal
found. Each problem names the part of the plan that is wrong, so that the planner can repair
that part (the problems go back to it in the re-planning turn, :data:`prompts.mor.REPLAN`):

- a restriction on a route's first node that names no entity of its type among the seeds
  textual matching found (``restriction "films" names no person entity ...``);
- a hop along which structure reached nothing: ``relation directed_by from type movie reached
  no type person entity`` (from the route's topic entity when it has one, else from any seed);
  a later hop also names the relations of the hops before it, since it started from what they
  reached (a wrong earlier relation leaves the next hop nothing to follow);
- a hop with several relation types between its two types and none named (``hop movie → person
  names no relation ...``): every one of them was traversed;
- a planned type most reached entities do not have (``type movie at step 1 ...: the entities
  reached there along starred_actors are mostly person``): the schema admits them only because
  some entity of that type plays the relation's end;
- routes whose candidates do not intersect.

Schema problems of the plan itself (a relation that does not link its two types, a type that
cannot follow the previous one, a missing restriction) come from :func:`agents.mor.plan.validate_plan`
and count as problems too. No problem: the plan is kept. ``max_iterations=1`` is the paper's
single pass (the problems are then only traced).

No LLM judges here: every check above reads the plan and what the traversal reached, so MoR
already ends its loop by rule with any model, small or large (it has no ``judge`` setting; the
only LLM role is the planner, whose examples and grammar are what a small model needs).
"""

from __future__ import annotations

from hybridrag.agents.mor.plan import render_route
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.text import name_pattern


def _named(a: str, b: str) -> bool:
    """Whether ``a`` occurs in ``b`` as a whole phrase (case-insensitive)."""
    a, b = a.strip().lower(), b.strip().lower()
    return bool(a) and name_pattern(a).search(b) is not None


def restriction_problem(kb: KnowledgeBase, route: dict, seeds: list[str]) -> str | None:
    """The first node's restriction names none of the seeds (and no seed's name holds it)."""
    first = route["nodes"][0]
    text = first["restriction"]
    if len(route["nodes"]) < 2 or not text:
        return None
    names = kb.names(seeds) if seeds else {}  # one store read for every seed
    if any(_named(names[s], text) for s in seeds):  # as the topic entities are found (graph_first)
        return None
    return (
        f'restriction "{text}" names no {first["type"]} entity in the knowledge graph '
        f"(route {render_route(route)}); copy the name the question gives"
    )


def type_problems(kb: KnowledgeBase, route: dict, candidates: dict[str, list[dict]], sample: int = 50) -> list[str]:
    """Positions whose structurally reached entities mostly have another KB type than the planned one.

    Such entities were admitted only because the relation's schema allows the planned type at that
    end (:func:`agents.mor.traversal._structural`), so the planned type is probably wrong.
    """
    seen: dict[int, dict[str, str]] = {}
    full = [t for t in candidates.values() if len(t) == len(route["nodes"])]  # started at the first node
    for traj in full[:sample]:
        for i, s in enumerate(traj[1:], start=1):
            if s["via"] == "struct":
                seen.setdefault(i, {})[s["id"]] = s["type"]
    out = []
    ents = kb.graph.get_many(dict.fromkeys(e for found in seen.values() for e in found)) if seen else {}
    for i, found in sorted(seen.items()):
        planned = route["nodes"][i]["type"] if i < len(route["nodes"]) else None
        kinds = [ents[e].type for e in found if e in ents]
        if planned is None or not kinds:
            continue
        top = max(set(kinds), key=kinds.count)
        if top != planned and kinds.count(top) > len(kinds) / 2:
            out.append(
                f"type {planned} at step {i} of route {render_route(route)}: the entities reached "
                f"there along {', '.join(route['relations'][i - 1])} are mostly {top}"
            )
    return out


def _relations(rels: list[str]) -> str:
    return f"relation {rels[0]}" if len(rels) == 1 else "relations " + ", ".join(rels)


def hop_problems(kb: KnowledgeBase, route: dict, result: dict) -> list[str]:
    """Hops along which structure reached nothing (from the topic entity when there is one)."""
    nodes, hops = route["nodes"], route["relations"]
    topics = result.get("topics", [])
    names = kb.names(topics) if topics else {}
    topic = [names[t] for t in topics]
    out = []
    for i, (layer, a, b, rels) in enumerate(zip(result["layers"][1:], nodes, nodes[1:], hops, strict=False)):
        reached = layer.get("anchored", layer["struct"]) if topic else layer["struct"]
        if reached:
            continue
        start = f' from "{topic[0]}"' if topic else ""
        if i:  # it started from what the earlier hops reached: their relations are suspects too
            start = (
                f" (the type {a['type']} entities reached{start} along "
                f"{' then '.join(_relations(h) for h in hops[:i])})"
            )
        out.append(
            f"{_relations(rels)} from type {a['type']}{start} reached no type {b['type']} entity "
            f"(route {render_route(route)})"
        )
        break  # later hops start from nothing: the first failing hop is the one to repair
    return out


def unnamed_hops(route: dict, named: list[bool]) -> list[str]:
    """Hops several relation types could take, none of them named by the planner."""
    out = []
    for a, b, rels, was_named in zip(route["nodes"], route["nodes"][1:], route["relations"], named, strict=False):
        if len(rels) > 1 and not was_named:
            out.append(
                f"hop {a['type']} → {b['type']} names no relation, and {len(rels)} link them "
                f"({', '.join(rels)}): all were followed; name the one the question means"
            )
    return out


def critique(kb: KnowledgeBase, plan: dict, results: list[dict], merge_mode: str, structure: bool = True) -> list[str]:
    """Problems of a followed plan: the validation's, then what the traversal shows.

    Args:
        kb: the knowledge base (entity names).
        plan: the validated plan (:func:`agents.mor.plan.validate_plan`, with ``named`` per hop).
        results: one traversal result per route (``layers`` with ``struct`` / ``anchored``
            counts, ``seeds``, ``topics``), in route order.
        merge_mode: how :func:`agents.mor.candidates.merge_routes` merged them.
        structure: whether neighbours were fetched (False: the textual ablation, no hop checks).
    """
    problems = list(plan.get("problems", []))
    for route, res in zip(plan["routes"], results, strict=False):
        problems += unnamed_hops(route, route.get("named", [True] * len(route["relations"])))
        restricted = restriction_problem(kb, route, res.get("seeds", []))
        problems += [restricted] if restricted else []
        if structure:
            problems += hop_problems(kb, route, res) + type_problems(kb, route, res.get("candidates", {}))
    if merge_mode.startswith("union"):
        problems.append(
            "the routes "
            + " and ".join(render_route(r) for r in plan["routes"])
            + " share no candidate; check which condition the answer really meets"
        )
    return list(dict.fromkeys(problems))

"""MoR's roles as a perfect model plays them (planner, answerer).

- Planner: one route from the topic entity to the answer's type along the gold path:
  ``person<Tom Hanks> → movie (starred_actors) → person (directed_by)``; for the triplet
  planner the same path as one triplet per hop, unrestricted nodes in between, the answer's
  type as target (MoR's merging of unrestricted nodes of one type is the machinery's own).
  Its first decision may carry the drawn error: a wrong restriction (wrong entity), a hop's
  relation replaced (wrong relation) or left out (missing relation: every relation linking
  the two types is then traversed), one node's type replaced (wrong category), no
  restriction on the first node (missing entity). A re-plan (the prompt holds the earlier
  plan and the method's problems, :mod:`agents.mor.critique`) repairs the error only when a
  problem names the wrong part the way MoR's problems name parts: ``type <wrong type>`` for a
  wrong category, ``no restriction`` for a missing anchor, ``restriction "<wrong words>"`` for
  a wrong entity, ``relation <wrong relation>`` for a wrong relation, a hop that ``names no
  relation`` for a missing relation. A route merely rendered in a problem names nothing.
- Answerer (QA mode): the gold answers the retrieved entities' data blocks name, else
  "I do not know".
"""

from __future__ import annotations

from hybridrag.agents.mor import plan as MP
from hybridrag.agents.mor import roles as R
from hybridrag.evals.oracle.call import Call, Rule
from hybridrag.evals.oracle.gold import GoldRecord
from hybridrag.evals.oracle.noise import Injected
from hybridrag.evals.oracle.prompt import answer_text, golds_in, phrase_in

METHOD = "mor"


def gold_nodes(rec: GoldRecord) -> list[dict]:
    """The perfect route: topic type with its name, then each hop's type and relation."""
    nodes = [{"type": rec.types[0], "restriction": rec.topic, "relation": ""}]
    return nodes + [
        {"type": t, "restriction": "", "relation": r} for t, r in zip(rec.types[1:], rec.relations, strict=True)
    ]


def corrupt(nodes: list[dict], inj: Injected) -> list[dict]:
    """The route with the drawn error in it."""
    out = [dict(n) for n in nodes]
    match inj.type:
        case "wrong_entity":
            out[0]["restriction"] = inj.entity
        case "wrong_relation":
            out[inj.hop + 1]["relation"] = inj.relation
        case "missing_relation":
            out[inj.hop + 1]["relation"] = ""
        case "wrong_category":
            out[inj.hop]["type"] = inj.category
        case "missing_entity":
            out[0]["restriction"] = ""
    return out


def names_error(inj: Injected, feedback: str) -> bool:
    """Whether the re-plan problems name the drawn error (see the module docstring)."""
    match inj.type:
        case "wrong_category":
            return phrase_in(f"type {inj.category}", feedback)
        case "missing_entity":
            return phrase_in("no restriction", feedback)
        case "wrong_entity":
            return phrase_in(f'restriction "{inj.entity}"', feedback)
        case "wrong_relation":
            return phrase_in(f"relation {inj.relation}", feedback) or phrase_in(f"relations {inj.relation}", feedback)
        case "missing_relation":
            return phrase_in("names no relation", feedback)
    return False


def _nodes(call: Call) -> list[dict]:
    rec = call.record
    if call.view.has_ai_turn:
        inj = call.injected(METHOD)
        named = inj is not None and names_error(inj, call.view.feedback(rec.question))
        call.later(named)
    else:
        inj, named = call.begin(METHOD), False
    nodes = gold_nodes(rec)
    if inj is not None and not named:
        nodes = corrupt(nodes, inj)
        call.carried("planner")
    return nodes


def planner(call: Call) -> MP.Plan:
    """Planner (reasoning paths): the gold route, or the noisy one."""
    return MP.Plan(routes=[MP.PlanRoute(nodes=[MP.PlanNode(**n) for n in _nodes(call)])])


def triplet_planner(call: Call) -> MP.TripletPlan:
    """Planner (triplets): one triplet per hop of the gold route, or the noisy one."""
    nodes = _nodes(call)
    triplets = [
        MP.PlanTriplet(
            head=MP.PlanNode(type=a["type"], restriction=a["restriction"]),
            relation=b["relation"],
            tail=MP.PlanNode(type=b["type"], restriction=b["restriction"]),
        )
        for a, b in zip(nodes, nodes[1:], strict=False)
    ]
    return MP.TripletPlan(triplets=triplets, target=nodes[-1]["type"])


def answerer(call: Call) -> R.Answer:
    """Answerer: the gold answers the retrieved entities name."""
    found = golds_in(call.record, call.view.evidence(call.record.question))
    reasoning = "The retrieved entities include the answer." if found else "No retrieved entity answers it."
    return R.Answer(reasoning=reasoning, answer=answer_text(found))


ROLES: dict[type, Rule] = {MP.Plan: planner, MP.TripletPlan: triplet_planner, R.Answer: answerer}

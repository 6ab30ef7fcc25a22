"""Collect HybGRAG's experience bank: (router action, feedback) pairs verified by gold answers.

As the paper builds its ~30 examples from a labelled split: run the router on dev questions,
retrieve, and when the top reference is wrong, label the error with the gold answers (which
entity's ego-graph misses every answer, whether the intersection is empty or misses them,
whether one entity leaves the answer unranked, whether the module was wrong). The labelled
feedback is then given back to the router; the pair is kept only if the corrected action
ranks a gold answer within ``--verify-k``. ``--llm oracle`` replaces the LLM router by
:class:`PerturbedOracle` (for a seed bank without a capable model; its entries say so).

    python -m evals.collect_experience --llm local:smollm2 --limit 60 --kb ~/.cache/hybridrag/metaqa-full
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from agents.hybgrag import roles as roles
from agents.hybgrag.critic import render_feedback
from agents.hybgrag.retrieval import Retrieval, hybrid_retrieve, link_entity, text_retrieve
from agents.llm.models import load_chat_model
from evals.datasets import Question, load_metaqa
from evals.oracle_router import RELATION_OF, TYPE_OF, relation_path
from kb.base import KnowledgeBase, open_kb
from prompts import examples_path, load_examples

REASONS = {
    "no_entity": "The question names a specific entity, but none was extracted.",
    "incorrect_retrieval_module": "The question is anchored on a named entity; the graph narrows it better.",
    "incorrect_entity_relation": "An extracted entity or relation does not lead to what is asked.",
    "no_intersection": "The entities' neighbourhoods are disjoint, so one of them is wrong.",
    "incorrect_intersection": "The shared neighbourhood does not hold the answer; one entity is wrong.",
    "missing_entity": "One entity leaves too many candidates; the question constrains the answer more.",
}


def finish(kb: KnowledgeBase, reply: roles.RouterAction | None) -> dict | None:
    """Schema check and linking of a router reply; None when unparseable."""
    if reply is None:
        return None
    action = roles.check_action(reply, kb.graph.schema())
    linked = [(e, link_entity(kb, e["name"], e["type"])) for e in action["entities"]]
    action["linked"] = [{"name": e["name"], "id": ent.id} for e, ent in linked if ent]
    action["unlinked"] = [e["name"] for e, ent in linked if ent is None]
    return action


class LLMRouter:
    """The HybGRAG router on a chat model (the paper's setting)."""

    def __init__(self, spec: str, base_url: str, method: str) -> None:
        """Load the model once."""
        self.model, self.method = load_chat_model(spec, base_url), method

    def first(self, q: Question, messages: list[dict], i: int) -> roles.RouterAction | None:
        """The first action."""
        return roles.route(self.model, messages, self.method)[0]

    def again(self, q: Question, messages: list[dict]) -> roles.RouterAction | None:
        """The action after feedback (the messages end with it)."""
        return roles.route(self.model, messages, self.method)[0]


class PerturbedOracle:
    """No LLM: a mistaken first action of a known kind, then the oracle action as the fix.

    The mistakes cycle through the kinds the paper reports: text module with nothing
    extracted, hybrid with nothing extracted, a wrong relation, and the answer type taken
    for an extra entity. Labels and verification are the same as with an LLM router.
    """

    def first(self, q: Question, messages: list[dict], i: int) -> roles.RouterAction | None:
        """A mistaken action derived from the gold one."""
        good = self.again(q, messages)
        path = relation_path(q.qtype or "")
        others = [r for r in RELATION_OF.values() if r not in path]
        mistakes = [roles.RouterAction(module="text"), roles.RouterAction(module="hybrid"),
                    good.model_copy(update={"relations": [others[i % len(others)]]}),
                    good.model_copy(update={"entities": [*good.entities, roles.TopicEntity(
                        name=(q.qtype or "").split("_to_")[-1], type=good.entities[0].type)]})]
        return mistakes[i % len(mistakes)]

    def again(self, q: Question, messages: list[dict]) -> roles.RouterAction:
        """The oracle action: gold topic entity and the question type's relations."""
        entity = roles.TopicEntity(name=q.topic or "", type=TYPE_OF[(q.qtype or "").split("_to_")[0]])
        return roles.RouterAction(module="hybrid", entities=[entity],
                                  relations=list(dict.fromkeys(relation_path(q.qtype or ""))))


def retrieve(kb: KnowledgeBase, question: str, action: dict, radius: int) -> Retrieval:
    """Run the module the action selects (text when nothing linked)."""
    ids = [e["id"] for e in action["linked"]]
    if action["module"] == "hybrid" and ids:
        return hybrid_retrieve(kb, question, ids, action["relations"], radius, 10)
    return text_retrieve(kb, question, 10)


def label(kb: KnowledgeBase, action: dict, res: Retrieval, gold: set[str], radius: int) -> list:
    """The error items of a wrong retrieval, decided with the gold answers."""
    if action["module"] == "text":
        return ([] if action["entities"] else [("no_entity", [])]) + [("incorrect_retrieval_module", [])]
    if not action["entities"]:
        return [("no_entity", [])]
    wrong = [f"entity:{n}" for n in action["unlinked"]]
    wrong += [f"relation:{r}" for r in action["dropped_relations"] + res.unused_relations]
    for e in action["linked"]:
        if not _reaches(kb, e["id"], action["relations"] or None, radius, gold):
            # blame the relations when any relation would have reached an answer, else the entity
            if action["relations"] and _reaches(kb, e["id"], None, radius, gold):
                wrong += [f"relation:{r}" for r in action["relations"]]
            else:
                wrong.append(f"entity:{e['name']}")
    if wrong:
        return [("incorrect_entity_relation", list(dict.fromkeys(wrong)))]
    if len(action["linked"]) >= 2:
        return [("no_intersection" if not res.intersection else "incorrect_intersection", [])]
    return [("missing_entity", [])]


def _reaches(kb: KnowledgeBase, eid: str, relations: list[str] | None, radius: int, gold: set[str]) -> bool:
    ego = kb.graph.ego_graph([eid], radius=radius, relations=relations)
    return bool({kb.name(x).lower() for x in ego.distance} & gold)


def hits(res: Retrieval, gold: set[str], k: int) -> bool:
    """Whether a gold answer is in the top ``k`` references."""
    return any(r.name.lower() in gold for r in res.references[:k])


def experience(q: Question, router, kb: KnowledgeBase, shots: list[dict], args, i: int) -> dict | None:
    """Collect one verified (action, feedback) pair for a question, or None."""
    gold = {a.lower() for a in q.answers}
    messages = roles.router_first_messages(q.question, kb.graph.schema(), shots)
    action = finish(kb, router.first(q, messages, i))
    if action is None:
        return None
    res = retrieve(kb, q.question, action, args.radius)
    if hits(res, gold, 1):
        return None  # right at the first try: nothing to learn
    items = label(kb, action, res, gold, args.radius)
    feedback = render_feedback(items)
    again = finish(kb, router.again(q, roles.router_reflect_messages(messages, action, feedback, q.question)))
    if again is None or not hits(retrieve(kb, q.question, again, args.radius), gold, args.verify_k):
        return None
    etype, names = items[-1]
    return {"question": q.question, "module": action["module"], "entities": action["entities"],
            "relations": action["relations"], "error_type": etype,
            "wrong_entities": [n[7:] for n in names if n.startswith("entity:")],
            "wrong_relations": [n[9:] for n in names if n.startswith("relation:")],
            "reasoning": REASONS[etype], "feedback": feedback, "source_id": q.id, "router": args.llm}


def collect(args) -> list[dict]:
    """Run over shuffled dev questions of the requested hop counts; return verified pairs."""
    kb = open_kb(args.kb)
    router = PerturbedOracle() if args.llm == "oracle" else LLMRouter(args.llm, args.base_url, args.method)
    shots = load_examples("hybgrag_router")
    questions = [q for h in args.hops for q in load_metaqa(Path(args.data) / f"dev_{h}hop.txt")]
    random.Random(args.seed).shuffle(questions)
    bank: list[dict] = []
    per_type: dict[str, int] = {}
    for i, q in enumerate(questions[: args.limit], 1):
        ex = experience(q, router, kb, shots, args, i)
        if ex and per_type.get(ex["error_type"], 0) < args.per_type:
            per_type[ex["error_type"]] = per_type.get(ex["error_type"], 0) + 1
            bank.append(ex)
        print(f"{i}/{args.limit} questions, {len(bank)} verified pairs {per_type}", file=sys.stderr)  # noqa: T201
    return bank


def main(argv: list[str] | None = None) -> None:
    """Command line: collect and write the bank (merged with the existing one with --append)."""
    from evals.paths import datasets_dir, metaqa_kb_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llm", required=True, help="router model spec, or 'oracle' (perturbed gold actions)")
    ap.add_argument("--base-url", default="")
    ap.add_argument("--method", default="function_calling")
    ap.add_argument("--limit", type=int, default=100, help="dev questions to try")
    ap.add_argument("--hops", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--kb", default=str(metaqa_kb_dir()))
    ap.add_argument("--data", default=str(datasets_dir() / "metaqa"))
    ap.add_argument("--radius", type=int, default=2)
    ap.add_argument("--verify-k", type=int, default=1, help="corrected action must rank gold within k")
    ap.add_argument("--per-type", type=int, default=5, help="cap of pairs per error type")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(examples_path("hybgrag_experience")))
    ap.add_argument("--append", action="store_true")
    args = ap.parse_args(argv)
    bank = collect(args)
    out = Path(args.out)
    old = load_examples("hybgrag_experience", out) if args.append else []
    cmd = "python -m evals.collect_experience " + " ".join(argv if argv is not None else sys.argv[1:])
    doc = {"description": "HybGRAG experience bank: router actions with the corrective feedback that fixed "
                          "them, verified with MetaQA dev gold answers.", "command": cmd,
           "examples": old + bank}
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(bank)} new pairs to {out}", file=sys.stderr)  # noqa: T201


if __name__ == "__main__":
    main()

"""Collect HybGRAG's experience bank by running the method: corrections that led to a right answer.

The paper keeps about 30 "successful experiences" from a labelled split, each a router action
with the feedback that fixed it, verified by the ground truth (§3.2). Here the hybgrag graph
itself runs on MetaQA dev questions (positions ``--skip`` onward of the seed-0 shuffle, so
none of the first ``--skip`` questions any ``hybridrag eval --limit <= skip`` cell asks),
once per commentor setting in ``--commentors``. A run's feedback at iteration t is kept when
iteration t + 1 was accepted by the validator and its top reference is a gold answer; the
entry holds the rejected action (module, entities, relations), the commentor's error type
and named items, its feedback, and where it came from. At most ``--per-type`` entries per
error type are kept, interleaved by type so any prefix of the bank mixes the types. An
error type no run verified is filled with entries made from the KB's solved examples,
marked as such in their ``commentor`` field (``--no-fill-from-kb`` leaves them out).

With ``--llm oracle:...`` every role is the perfect-LLM stand-in and its noise makes the
router's first decision wrong (p=1 and every error type by default, including
``extra_entity``, the only way a MetaQA question gets two topic entities and so the
intersection errors). The LLM commentor names what it sees in the action; the rules name
what the retrieval shows (``no_intersection``, ``incorrect_intersection``); running both
covers the six types.

    python scripts/collect_experience.py --limit 120 --hops 1 2 3
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from hybridrag.agents.hybgrag.roles import ERROR_TYPES
from hybridrag.evals.datasets import Question, load_metaqa, sample, with_answer_names
from hybridrag.prompts import examples_path

NOISE = "oracle:p=1,types=wrong_entity+wrong_relation+missing_relation+wrong_module+missing_entity+extra_entity"
REASONS = {  # a rule-decided entry's reasoning (the rules give none), written as the commentor would
    "no_entity": "The question names a specific entity, but none was extracted.",
    "incorrect_retrieval_module": "The question is anchored on a named entity; the graph narrows it down better.",
    "incorrect_entity_relation": "An extracted entity or relation does not lead to what is asked.",
    "no_intersection": "The entities' neighbourhoods are disjoint, so one of them is wrong.",
    "incorrect_intersection": "The shared neighbourhood does not hold the answer; one entity is wrong.",
    "missing_entity": "The action leaves out part of what the question constrains.",
}
_ENTITY = re.compile(r"^(.*) \(([^()]*)\)$")
DESCRIPTION = (
    "HybGRAG experience bank: rejected router actions with the corrective feedback after which "
    "the next retrieval was accepted and right (MetaQA dev gold answers), collected by running the "
    "hybgrag graph (scripts/collect_experience.py)."
)


def _entities(shown: list[str]) -> list[dict]:
    """``name (type)`` strings of a route step → ``[{"name", "type"}]`` (type None when unknown)."""
    out = []
    for item in shown:
        m = _ENTITY.match(item)
        name, etype = (m.group(1), m.group(2)) if m else (item, "unknown")
        out.append({"name": name, "type": None if etype == "unknown" else etype})
    return out


def harvest(q: Question, out: dict, llm: str, commentor: str) -> list[dict]:
    """The verified corrections of one run: feedback followed by an accepted, right retrieval."""
    gold = {a.casefold() for a in q.answers}
    right = bool(out.get("ranked")) and out["ranked"][0]["name"].casefold() in gold
    steps = out.get("trace", [])
    accepted = {s["iteration"] for s in steps if s["node"] == "validate_retrieval" and s["decision"] == "accept"}
    routes = {s["iteration"]: s for s in steps if s["node"] == "route_question"}
    kept = []
    for s in steps:
        t = s.get("iteration")
        if s["node"] != "comment_on_routing" or not right or t + 1 not in accepted or t not in routes:
            continue
        etype, names = s["items"][-1]
        action = routes[t]
        kept.append(
            {
                "question": q.question,
                "module": action["module"],
                "entities": _entities(action["entities"]),
                "relations": action["relations"],
                "error_type": etype,
                "wrong_entities": [n[len("entity:") :] for n in names if n.startswith("entity:")],
                "wrong_relations": [n[len("relation:") :] for n in names if n.startswith("relation:")],
                "reasoning": s.get("reasoning") or REASONS[etype],
                "feedback": s["feedback"],
                "source_id": q.id,
                "router": llm,
                "commentor": f"{commentor} ({s['source']})",
            }
        )
    return kept


def interleave(entries: list[dict], per_type: int) -> list[dict]:
    """At most ``per_type`` entries per error type (first found first), round-robin over the types."""
    by_type: dict[str, list[dict]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    for e in entries:
        key = (e["question"], e["error_type"])
        if key not in seen and len(by_type[e["error_type"]]) < per_type:
            seen.add(key)
            by_type[e["error_type"]].append(e)
    order = [t for t in ERROR_TYPES if t in by_type]
    return [by_type[t][i] for i in range(per_type) for t in order if i < len(by_type[t])]


def fill_from_kb(bank: list[dict], kb_dir: str, per_type: int) -> list[dict]:
    """Entries of the error types no run verified, made from the KB's solved examples and marked as such.

    :func:`agents.hybgrag.shots.commentor_shots` labels the intersection types by the intersection
    the KB gives; these entries are appended after the run-verified entries.
    """
    from hybridrag.agents.hybgrag.critic import render_feedback
    from hybridrag.agents.hybgrag.shots import commentor_shots
    from hybridrag.kb.base import open_kb

    missing = [t for t in ERROR_TYPES if t not in {e["error_type"] for e in bank}]
    if not missing:
        return bank
    made = [e for e in commentor_shots(open_kb(kb_dir), 36) if e["error_type"] in missing]
    for e in made:
        names = [f"entity:{n}" for n in e["wrong_entities"]] + [f"relation:{r}" for r in e["wrong_relations"]]
        e.update(
            feedback=render_feedback([(e["error_type"], names)]),
            reasoning=REASONS[e["error_type"]],
            source_id="",
            router="",
            commentor="kb-made (no run verified this type; label from the KB)",
        )
    return interleave(bank + made, per_type)


def questions(data: Path, hops: list[int], skip: int, limit: int, name_of) -> list[Question]:
    """Per hop count, dev questions ``skip`` .. ``skip + limit`` of the seed-0 shuffle."""
    out = []
    for h in hops:
        qs = with_answer_names(load_metaqa(data / f"dev_{h}hop.txt", prefix=f"metaqa-{h}hop"), name_of)
        out += sample(qs, skip + limit, 0)[skip:]
    return out


def collect(args: argparse.Namespace) -> tuple[list[dict], dict]:
    """Run the graph per commentor setting; return the verified entries and counts per setting."""
    from hybridrag.evals.oracle import run as oracle_run
    from hybridrag.evals.oracle.model import is_oracle_spec
    from hybridrag.graphs import context_for, get_graph
    from hybridrag.kb.base import open_kb

    kb = open_kb(args.kb)
    qs = questions(Path(args.data), args.hops, args.skip, args.limit, kb.name)
    if is_oracle_spec(args.llm):
        oracle_run.setup(args.llm, qs, {})
    graph, found, counts = get_graph("hybgrag"), [], {}
    for mode in args.commentors:
        ctx = context_for("hybgrag", kb=str(kb.directory), llm=args.llm, commentor=mode, top_k=args.top_k)
        per_type: dict[str, int] = defaultdict(int)
        for i, q in enumerate(qs, 1):
            for e in harvest(q, graph.invoke({"question": q.question}, context=ctx), args.llm, mode):
                per_type[e["error_type"]] += 1
                found.append(e)
            if i % 50 == 0 or i == len(qs):
                print(
                    f"commentor={mode}: {i}/{len(qs)} questions, verified {dict(per_type)}",  # noqa: T201
                    file=sys.stderr,
                )
        counts[mode] = dict(per_type)
    return interleave(found, args.per_type), counts


def main(argv: list[str] | None = None) -> None:
    """Command line: collect and write the bank."""
    from hybridrag.evals.hybrid import datasets_root, full_kb

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llm", default=NOISE, help="model spec of every role (default: the noisy stand-in)")
    ap.add_argument("--commentors", nargs="+", default=["llm", "rules"], choices=["llm", "rules"])
    ap.add_argument("--limit", type=int, default=120, help="dev questions per hop count")
    ap.add_argument("--skip", type=int, default=1000, help="leading questions of the seed-0 shuffle left out")
    ap.add_argument("--hops", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--kb", default="", help="KB directory (default: the full MetaQA KB)")
    ap.add_argument("--data", default=str(datasets_root() / "metaqa"))
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--per-type", type=int, default=5, help="entries kept per error type")
    ap.add_argument("--out", default=str(examples_path("hybgrag_experience")))
    ap.add_argument(
        "--no-fill-from-kb",
        dest="fill_from_kb",
        action="store_false",
        help="leave out KB-made entries for error types no run verified",
    )
    ap.add_argument("--merge", default="", help="an earlier collected bank whose entries are kept first")
    args = ap.parse_args(argv)
    args.kb = args.kb or str(full_kb(progress=False))
    bank, counts = collect(args)
    if args.merge:
        old = json.loads(Path(args.merge).read_text(encoding="utf-8"))
        bank = interleave(old["examples"] + bank, args.per_type)
        cmd_before = old["command"]
        counts = {"earlier": old.get("verified_per_commentor", {}), "this run": counts}
    if args.fill_from_kb:
        bank = fill_from_kb(bank, args.kb, args.per_type)
    missing = [t for t in ERROR_TYPES if t not in {e["error_type"] for e in bank}]
    cmd = "python scripts/collect_experience.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.merge:
        cmd = f"{cmd_before} && {cmd}"
    doc = {"description": DESCRIPTION, "command": cmd, "verified_per_commentor": counts, "examples": bank}
    Path(args.out).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"wrote {len(bank)} entries to {args.out}" + (f"; no entry of {missing}" if missing else ""),  # noqa: T201
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()

"""HydraRAG question answering (paper §4.4): the answer check of each round and the final answer.

Node bodies (contract in :mod:`agents.hydrarag.views`). Fallbacks, each recorded in the trace:

- answer check unparseable, or {Yes} without an answer → {No} (explore further); an empty
  evidence set is {No} without a call;
- answer check {Yes} with an answer the retrieved paths do not support
  (:func:`prompts.grounding.check_answer`, strict: the check copies the answer from the
  evidence) → the best ranked entity ({No} when there is none);
- final generation unparseable → the best ranked entity, or with none ranked the span the top
  ranked passages state (:func:`best_answer`; empty when nothing was found); so is a generated
  answer that repeats instructions found in the retrieved data (lenient: generation may use the
  model's own knowledge, so the answer need not appear in the evidence) or names a passage by its id.

Support is judged on the retrieved data of every explored path (KG paths, the document or web
sentences that text paths were built from, instructions among the sentences shown to the path
builder, the ranked candidates' names), never on LLM output such as the refined summary or the
text paths themselves. Every prompt gets the paths, the summary, the skyline and the
sub-questions as quoted data blocks.

The answer check is a judging role a small model cannot do (``judge`` setting,
:mod:`agents.llm.judge`): under the rules (``rules``, or ``auto`` with a small model or for an
unparseable reply) :func:`rule_check` decides it without an LLM call. A constrained model
(:func:`agents.hydrarag.roles.constrained`) generates the final answer as one of the ranked
entities' names, decoded within them.
"""

from __future__ import annotations

import re
from typing import Any

from hybridrag.agents.hydrarag import audit, roles, shots
from hybridrag.agents.hydrarag.feedback import shortfall
from hybridrag.agents.hydrarag.views import best_entity, evidence, quoted, traced
from hybridrag.agents.llm.judge import rules_on_unusable, use_rules
from hybridrag.agents.llm.structured import add_usage
from hybridrag.prompts.grounding import Support, check_answer
from hybridrag.tools.answer_span import PASSAGES, names_passage, passage_answer
from hybridrag.tools.list_answer import SEPARATOR, asks_for_list, joined

UNSUPPORTED = {"unsupported_answers": 1}
_OR = re.compile(r"\bor\b", re.IGNORECASE)


def offered_choice(question: str, item: str) -> bool:
    """Whether ``item`` is one side of an "X or Y" the question offers ("Who was born first, X or Y?").

    A side runs from the ``or`` to the nearest comma or the question's end: ``item`` must end the
    words before an ``or`` or begin the words after it.
    """
    it = audit.words(item)
    if not it:
        return False
    for m in _OR.finditer(question):
        before = audit.words(question[: m.start()].rsplit(",", 1)[-1])
        after = audit.words(question[m.end() :].split(",", 1)[0])
        if f" {before}".endswith(f" {it}") or f"{after} ".startswith(f"{it} "):
            return True
    return False


def without_own_entities(state: dict, answer: str) -> str:
    """``answer`` without the items that are the question's own topic entities (names or mentions).

    A side of an "X or Y" the question offers stays (:func:`offered_choice`): choosing it is the answer.
    """
    own = {audit.words(n) for t in state.get("topics", []) for n in (t["name"], t["mention"])}
    own |= {audit.words(m) for m in state.get("mentions", [])}
    sep = SEPARATOR if SEPARATOR.strip() in answer else ", "  # a list answer, else a comma list ("143,372" is one)
    items = [a.strip() for a in answer.split(sep) if a.strip()]
    q = state.get("question", "")
    return sep.join(a for a in items if audit.words(a) not in own or offered_choice(q, a))


def support(state: dict, answer: str, own_knowledge: bool = False) -> Support:
    """Check ``answer`` against the retrieved data behind the paths and the ranked candidates.

    A KG path is our own verbalisation of graph edges; a document or web path was written by the
    LLM, so only the sentence it was built from counts.
    """
    paths = [*state.get("candidates", []), *state.get("kept", []), *state.get("selected", [])]
    texts = [p.get("sentence") or p["text"] for p in paths] + [i for p in paths for i in p.get("instructions", [])]
    names = [r["name"] for r in state.get("ranked", [])]
    return check_answer(answer, state["question"], names, texts, own_knowledge=own_knowledge)


def best_answer(state: dict, kb: Any) -> str:
    """The best ranked entity's name; with none ranked, the span the top ranked passages state ('' for none).

    The passages are read whole from the KB (a path holds one sentence), and the span is the
    documented rule :func:`tools.answer_span.passage_answer`.
    """
    name = best_entity(state)
    if name:
        return name
    ids = [r["id"] for r in state.get("ranked", []) if r["kind"] == "passage"][:PASSAGES]
    wanted = set(ids)
    texts = {d.id: d.text for d in kb.docs if d.id in wanted} if ids else {}
    return passage_answer(state["question"], [{"kind": "passage", "text": texts.get(i, "")} for i in ids])


def _unsupported(usage: dict, role: str) -> dict:
    return add_usage(usage, {**UNSUPPORTED, "by_role": {role: dict(UNSUPPORTED)}})


def _held_back(state: dict, ctx: Any, kb: Any, answer: str) -> tuple[dict, list[str]]:
    """The audit's problems of the round, and those that hold back a {Yes} (new ones, a round left)."""
    found = audit.problems(kb, state, ctx.relation_match) if ctx.audit else {"topic": [], "path": []}
    if not answer or state["round"] >= ctx.rounds():
        return found, []
    return found, audit.new_problems(found, state.get("shortfall"))


def rule_check(kb: Any, state: dict, threshold: float) -> tuple[str, str, str]:
    """The answer check by rule: ``(answer or "", reasoning, missing)``.

    {Yes} with the best ranked entity (a list question: every ranked entity a skyline path reaches,
    in rank order, :mod:`tools.list_answer`) when a selected knowledge-graph path (or a rule-built text path
    along a skyline relation, ``follows``) reaches an entity and the
    audit finds nothing wrong (the topic entities are the question's, and a selected path follows
    the skyline's relations in as many hops); else {No} naming what is missing.
    """
    if not any((c["source"] == "kg" or c.get("follows")) and c.get("answers") for c in state.get("selected", [])):
        return (
            "",
            "rule: no selected knowledge-graph path reaches an entity",
            "a knowledge-graph path from the topic entity along the skyline's relations",
        )
    found = audit.problems(kb, state, threshold)
    issues = [*found["topic"], *found["path"]]
    if issues:
        return "", "rule: the paths disagree with the analysis: " + "; ".join(issues), "; ".join(issues)
    reached = audit.reached_along_skyline(state)
    if len(reached) > 1 and asks_for_list(state["question"]):  # a list question: every entity reached
        return joined(reached), f"rule: a list question; skyline paths reach {len(reached)} ranked entities", ""
    best = (reached[0] if reached else "") or best_entity(state)
    if not best:
        return "", "rule: the paths reach no ranked entity", "an entity the skyline's relations reach"
    return best, f"rule: a selected path follows the skyline's relations and reaches {best!r}", ""


def _judged(state: dict, ctx: Any, kb: Any, model: Any) -> tuple[str, str, str, dict]:
    """The answer check under ``ctx.judge``: ``(answer or "", reasoning, missing, usage)``."""
    if use_rules(ctx.judge, ctx.llm):
        return (*rule_check(kb, state, ctx.relation_match), {})
    examples = shots.lines(state.get("shots", []), "check", ctx.examples, ctx.num_examples)
    reply, calls = roles.check(model, ctx.structured_method, examples, **quoted(state), evidence=evidence(state))
    if reply is not None:
        return (reply.answer.strip() if reply.sufficient == "yes" else ""), reply.reasoning, reply.missing, calls
    if rules_on_unusable(ctx.judge):
        answer, reasoning, missing = rule_check(kb, state, ctx.relation_match)
        return answer, "unparseable answer check; " + reasoning, missing, calls
    return "", "unparseable answer check: {No}", "", calls


def check(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """CoT evaluation of the refined paths: {Yes} and the answer, or {No}.

    A {Yes} the audit contradicts becomes {No} while a round is left, its problems handed to the
    next round.
    """
    calls: dict = {}
    answer, missing = "", ""
    fallback: str | None = None
    if not state.get("selected"):
        reasoning, missing = "no evidence: {No} without asking", "every path: none was found"
    else:
        answer, reasoning, missing, calls = _judged(state, ctx, kb, model)
        judged = support(state, answer) if answer else None
        if judged is not None and not judged.ok:
            answer, calls = best_entity(state), _unsupported(calls, "check")
            fallback = f"answer rejected: {judged.reason}; " + ("the best ranked entity" if answer else "{No}")
        if answer and not without_own_entities(state, answer):
            answer, fallback = "", f"answer rejected: {answer!r} is the question's own entity; {{No}}"
    found, held = _held_back(state, ctx, kb, answer)
    if held:
        missing = f"the answer {answer!r} rests on an analysis the paths contradict: " + "; ".join(held)
        answer, fallback = "", "{Yes} held back by the audit"
    verdict = "yes" if answer else "no"
    update: dict[str, Any] = {"verdict": verdict, "usage": calls}
    if answer:
        update["answer"] = without_own_entities(state, answer)
    else:
        update["shortfall"] = shortfall(state, missing, found)
    step = traced(
        "check_answer",
        "{Yes} " + answer if answer else "{No}",
        phase=state["phase"],
        round=state["round"],
        reasoning=reasoning,
        fallback=fallback,
        shortfall=update.get("shortfall"),
    )
    update["trace"] = [step]
    return update


def _shown(state: dict, ctx: Any) -> str:
    """The answer generation's example lines."""
    return shots.lines(state.get("shots", []), "generate", ctx.examples, ctx.num_examples)


def _generated(state: dict, ctx: Any, model: Any) -> tuple[Any, dict]:
    """The generation reply: free (the paper) or, for a constrained model, one of the ranked entities."""
    if not roles.constrained(ctx, model):
        shown = _shown(state, ctx)
        return roles.generate(model, ctx.structured_method, shown, **quoted(state), evidence=evidence(state))
    names = list(
        dict.fromkeys(without_own_entities(state, r["name"]) for r in state.get("ranked", []) if r["kind"] == "entity")
    )
    names = [n for n in names if n]
    if not names:
        return None, {}
    reply, calls = roles.choose_answer(
        model, ctx.structured_method, names, _shown(state, ctx), **quoted(state), evidence=evidence(state)
    )
    return (
        roles.FinalAnswer(reasoning="chosen among the ranked entities", answer=reply.answer) if reply else None
    ), calls


def generate(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Answer from the final refined paths and the model's own knowledge (never the question's own entity)."""
    reply, calls = _generated(state, ctx, model)
    fallback: str | None
    if reply is not None and reply.answer.strip():
        answer, fallback = reply.answer.strip(), None
        judged = support(state, answer, own_knowledge=True)
        if not judged.ok:
            answer, calls = best_answer(state, kb), _unsupported(calls, "generate")
            fallback = f"answer rejected: {judged.reason}; the best ranked entity"
        elif not without_own_entities(state, answer):
            fallback = f"answer rejected: {answer!r} is the question's own entity; the best ranked entity"
            answer = best_answer(state, kb)
        elif names_passage(answer, state.get("ranked", [])):
            answer, fallback = best_answer(state, kb), f"answer rejected: {answer!r} is a passage's id; the best answer"
    else:
        answer, fallback = best_answer(state, kb), "unparseable generation: the best ranked entity"
    answer = without_own_entities(state, answer)
    step = traced(
        "generate_answer",
        answer or "(no answer)",
        phase="final",
        reasoning=reply.reasoning if reply else "",
        fallback=fallback,
    )
    return {"answer": answer, "trace": [step], "usage": calls}

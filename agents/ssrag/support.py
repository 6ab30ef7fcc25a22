"""The checks SSRAG's answerer (:func:`agents.ssrag.unify.generate`) puts a reply through.

:func:`supported`: whether the retrieved contexts support the answer
(:func:`prompts.grounding.check_answer`, strict: the prompt asks for an answer from the contexts
only), judged on the contexts' names, their texts and, for graph items, their facts rather than the
LLM's prose (:func:`support_evidence`). :func:`own_entity`: whether the answer is only the
question's own entity (an entity the question names is not its answer).
"""

from __future__ import annotations

from hybridrag.prompts.grounding import Support, answer_parts, check_answer, norm


def own_entity(answer: str, own: list[str]) -> bool:
    """Whether every part of ``answer`` is one of the question's own entities (names in ``own``)."""
    names = {norm(n) for n in own if n.strip()}
    parts = [norm(p) for p in answer_parts(answer)]
    return bool(names) and bool(parts) and all(p in names for p in parts)


def supported(answer: str, question: str, shown: list[dict]) -> Support:
    """The grounding check of :func:`prompts.grounding.check_answer`, part by part.

    A part the contexts write as a whole phrase is supported even without a content word (short
    tags such as "r" or "bd-r", which the word-overlap rule cannot see); an instruction echo
    still fails.
    """
    names, texts = support_evidence(shown)
    verdict = check_answer(answer, question, names, texts)
    if verdict.ok or not verdict.reason.endswith("is not supported by the retrieved data"):
        return verdict
    written = [f" {norm(t)} " for t in (*names, *texts)]
    for part in answer_parts(answer):
        one = check_answer(part, question, names, texts)
        if not one.ok and not (
            one.reason.endswith("is not supported by the retrieved data")
            and any(f" {norm(part)} " in w for w in written)
        ):
            return one
    return Support(True, "every part is written in the contexts")


def support_evidence(items: list[dict]) -> tuple[list[str], list[str]]:
    """(names, texts) an answer may rest on: names, texts shown, and graph items' own facts."""
    names = [it["name"].removeprefix("passage about ") for it in items]
    texts = [
        *(f for it in items if it["source"] == "kg" for f in it.get("path") or []),
        *(it["text"] or "" for it in items if it["source"] != "kg"),
    ]
    return names, texts

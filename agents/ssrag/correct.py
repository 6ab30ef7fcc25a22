"""SSRAG's corrective loop (ours: the paper is a single pass; ``max_iterations=1`` is the paper).

Three checks, each naming what went wrong in the next prompt of the role that decided it
(its earlier reply stays in the conversation as the assistant turn):

- entities, after extraction: an extracted entity the KB does not know, or no entity at all
  → the extractor is asked again, told which names the KB lacks and which names of the
  question the KB knows;
- route, after routing: the LLM's label disagrees with the paper's own rule (TEMPORAL
  without any time cue, FACTUAL with one) → the router is asked again with the reason (and,
  for TEMPORAL, whether the web answered at all);
- answer, after generation: an abstention, an empty reply, or one the contexts do not
  support (:func:`prompts.grounding.check_answer`) → re-augmentation from the entities, told
  which entities were searched, why the answer failed and what the contexts were about.

Each role decides at most ``max_iterations`` times per question; the answer loop re-runs
augmentation and retrieval at most ``max_iterations - 1`` times.

None of the three checks asks an LLM: they read the KB links, the question's time cues and
the contexts, so the loop ends by rule with any model.
"""

from __future__ import annotations

from hybridrag.prompts import ssrag as P
from hybridrag.prompts.data_block import data_list, neutralise
from hybridrag.prompts.grounding import check_answer
from hybridrag.tools.names import known_names, written_spans  # noqa: F401 - agents.ssrag.query reads them from here


def quoted(names: list[str]) -> str:
    """Names as ``"a", "b"`` (one line each, no brackets)."""
    return ", ".join(f'"{neutralise(n)}"' for n in names)


def entity_problems(entities: list[dict], known: list[str]) -> str:
    """Feedback on extracted entities ('' when they are fine); ``known``: KB names in the question."""
    unlinked = [e["name"] for e in entities if not e.get("id")]
    if entities and not unlinked:
        return ""
    parts = [P.ENTITY_UNLINKED.format(names=quoted(unlinked)) if unlinked else P.ENTITY_NONE.format()]
    missing = [n for n in known if n.lower() not in {s.lower() for e in entities for s in e.get("surfaces", [])}]
    if missing:
        parts.append(P.ENTITY_KNOWN.format(names=quoted(missing)))
    return "\n".join(parts)


def answer_problem(answer: str, note: str | None, question: str) -> str:
    """Why the answer failed ('' when it is an answer the generation step accepted).

    ``note`` is the generation step's fallback note (unparseable, empty or unsupported reply).
    """
    if note:
        return note
    if not answer.strip():
        return "empty answer"
    if check_answer(answer, question, [], []).reason == "abstention":
        return "the answerer found no answer in the contexts"
    return ""


def answer_feedback(entities: list[dict], why: str, found: list[str]) -> str:
    """The answer loop's feedback to the entity extractor.

    The entities are named as the extractor wrote them: the canonical name comes from the KB's
    alias store, which is data, not instructions.
    """
    names = quoted([(e.get("surfaces") or [e["name"]])[0] for e in entities]) or "(none)"
    return P.ANSWER_FAILED.format(names=names, why=neutralise(why), found=data_list(found[:8]))


def route_problem(label: str, rule_label: str, cues: dict, web_note: str | None) -> str:
    """Feedback when the LLM's label disagrees with the rule ('' when they agree)."""
    if label == rule_label:
        return ""
    if label == "TEMPORAL":
        return P.ROUTE_NO_CUE.format(web=web_note or "the local corpus has results for it")
    return P.ROUTE_CUE.format(cues=quoted(cues.get("time_hints", [])) or "(recency)")


def follow_up(reply: str, feedback: str, question: str) -> tuple:
    """The extractor's conversation continued: its earlier reply, then the feedback and the ask."""
    return ("ai", reply), ("human", P.ENTITY_RETRY.format(feedback=feedback, question=question))

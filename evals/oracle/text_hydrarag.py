"""HydraRAG's roles as a perfect model plays them on questions over documents (see :mod:`evals.oracle.text_roles`)."""

from __future__ import annotations

import re
from typing import Any, cast

from hybridrag.agents.hydrarag import roles as HY
from hybridrag.evals.oracle.call import Call
from hybridrag.evals.oracle.gold import norm
from hybridrag.evals.oracle.prompt import answer_text, phrase_in
from hybridrag.evals.oracle.text_call import answered, rec_of, topics_of
from hybridrag.evals.oracle.text_gold import supported

SOURCES = ("kg", "docs", "web")


def hy_topics(call: Call) -> HY.TopicEntities:
    """Topic extraction: the topics."""
    return HY.TopicEntities(entities=topics_of(call))


def _skyline(call: Call) -> str:
    return " - ".join([" and ".join(topics_of(call)) or "question", "answer(entity)"])


def hy_analysis(call: Call) -> HY.QuestionAnalysis:
    """Analysis: the question as its only sub-question, skyline ``topic - answer(entity)``."""
    return HY.QuestionAnalysis(split_questions=[rec_of(call).question], skyline=_skyline(call))


def hy_selector(call: Call) -> HY.SourceChoice:
    """Source selection: the documents, among the available sources."""
    outside = re.sub(r"<data[^>]*>.*?</data>", " ", call.view.human, flags=re.DOTALL)
    outside = norm(outside).replace(norm(rec_of(call).question), " ")
    available = [s for s in SOURCES if re.search(rf"\b{s}\b", outside)]
    chosen = [s for s in ("docs",) if s in available] or available
    return HY.SourceChoice(reasoning="Facts stated in documents.", sources=cast(Any, chosen))


def hy_text_paths(call: Call) -> HY.TextPaths:
    """Paragraph → paths: none (the method keeps the sentences)."""
    return HY.TextPaths(paths=[])


def _text(fields: dict[str, list[str]]) -> str:
    return " ".join(v for values in fields.values() for v in values)


def hy_choice(call: Call) -> HY.Choice:
    """Selection: items stating a supported answer, then naming a topic, then the given order."""
    rec, blocks, names = rec_of(call), call.view.numbered(), topics_of(call)
    scored = []
    for n, f in blocks:
        text = _text(f)
        scored.append((-(2 if supported(rec, [text]) else 1 if any(phrase_in(t, text) for t in names) else 0), n))
    width = call.view.width(3)
    picked = [n for _, n in sorted(scored)][:width]
    return HY.Choice(reasoning="Items stating the answer or naming the question's entities first.", selected=picked)


def hy_refine(call: Call) -> HY.Refinement:
    """Refinement: the items stating a supported answer (all shown items when none does), verbatim."""
    rec = rec_of(call)
    texts = [_text(f) for _, f in call.view.numbered()]
    return HY.Refinement(summary="; ".join([t for t in texts if supported(rec, [t])] or texts))


def hy_path_summary(call: Call) -> HY.PathSummary:
    """Path summary: the paths stating a supported answer or naming a topic, verbatim, repeats merged."""
    rec, names = rec_of(call), topics_of(call)
    groups: dict[str, list[int]] = {}
    for n, f in call.view.numbered():
        text = _text(f)
        if supported(rec, [text]) or any(phrase_in(t, text) for t in names):
            groups.setdefault(" - ".join(t.strip() for t in text.split("→")), []).append(n)
    return HY.PathSummary(paths=[HY.SummaryPath(path=p, sources=ns) for p, ns in groups.items()])


def hy_check(call: Call) -> HY.AnswerCheck:
    """Answer check: {Yes} with the supported answers, else {No} asking for the topics' passages."""
    found = answered(call)
    if found:
        return HY.AnswerCheck(reasoning="The evidence states it.", sufficient="yes", answer=answer_text(found))
    about = " and ".join(topics_of(call)) or "the question's entities"
    return HY.AnswerCheck(reasoning="Not stated.", sufficient="no", answer="", missing=f"a passage about {about}")


def hy_final(call: Call) -> HY.FinalAnswer:
    """Final answer: the supported answers, else an abstention."""
    found = answered(call)
    return HY.FinalAnswer(reasoning="From the evidence." if found else "Not stated.", answer=answer_text(found))


def hy_follow_up(call: Call) -> HY.FollowUp:
    """Follow-up: the question again, its topics."""
    return HY.FollowUp(
        missing="a passage stating the answer",
        question=rec_of(call).question,
        skyline=_skyline(call),
        topic_entities=topics_of(call),
    )


def hy_predict(call: Call) -> HY.Predictions:
    """Predictions: the supported answers the shown items state (at most three)."""
    rec = rec_of(call)
    found = supported(rec, [_text(f) for _, f in call.view.numbered()])[:3]
    return HY.Predictions(predictions=[HY.Prediction(answer=a, skyline=_skyline(call)) for a in found])


HY_ROLES: dict[type, Any] = {
    HY.TopicEntities: hy_topics,
    HY.QuestionAnalysis: hy_analysis,
    HY.SourceChoice: hy_selector,
    HY.TextPaths: hy_text_paths,
    HY.Choice: hy_choice,
    HY.Refinement: hy_refine,
    HY.PathSummary: hy_path_summary,
    HY.AnswerCheck: hy_check,
    HY.FinalAnswer: hy_final,
    HY.FollowUp: hy_follow_up,
    HY.Predictions: hy_predict,
}

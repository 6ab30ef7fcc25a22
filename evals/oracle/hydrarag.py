"""HydraRAG's roles as a perfect model plays them.

Initialisation (the first decision; the drawn error goes to the role it belongs to):

- topic extraction: the gold topic entity (wrong entity: a question word; missing: none);
- analysis: one sub-question per hop and the skyline ``topic - relation words - kind - ... -
  answer(kind)`` (:meth:`GoldRecord.skyline`, :meth:`GoldRecord.sub_questions`); a wrong or
  missing relation changes both;
- source selection: the dataset's fact sources (``kg``; MetaQA-hybrid at 50 %: ``kg`` and
  ``docs``; at 0 %: ``docs``) among the available ones the prompt lists, all available ones
  when none of them is listed (wrong module: the other available sources).

Exploration and answering (no gold needed where the rule says so):

- paragraph → paths (no gold): each paragraph that is one of the KB's verbalised facts
  (:data:`kb.verbalise.TEMPLATES`) becomes ``head - relation words - tail``; other
  paragraphs give no path (the method then keeps sentences as paths when none is built);
- web result selection: results naming a gold answer, then ones naming the topic, then the
  engine's order, at most the width asked;
- path selection: paths naming a gold answer first, then paths carrying every relation of
  the gold path, at most the width asked (the first ones when none qualifies);
- refinement: the shown paths that name a gold answer or carry the path's relations (all
  shown paths when none does), verbatim, joined by "; ";
- path summary (Algorithm 2, no gold needed beyond that rule): the document and web paths that
  name a gold answer or carry the path's relations, verbatim, the same path shown twice cited
  once with both numbers (none bear: no summary, and the method keeps the paths as built);
- answer check: {Yes} with the gold answers the evidence names, else {No};
- final answer: the gold answers the evidence names, else "I do not know" (never the
  model's own knowledge: that would be the gold itself);
- follow-up question (a later decision): the question itself, the gold skyline and the
  topic entity; predictions (a later decision): the gold answers the shown paths already
  name (at most three), none otherwise. Both repair the drawn error only when their prompt
  shows it: a relation error when the erroneous skyline is shown, an entity error when no
  shown path names the topic entity or the method's feedback flags the extraction (a
  ``topic_problem`` line naming the wrong entity; for a missing entity, any such line), a
  wrong source choice when the last answer check's
  account (``not_searched``) names a source holding the dataset's facts (the refined round
  then searches every available source).
- answer check {No}: states what is missing (a path from the topic to the answer's kind).
"""

from __future__ import annotations

import re
from typing import cast

from hybridrag.agents.hydrarag import roles as R
from hybridrag.evals.oracle.call import Call, Rule
from hybridrag.evals.oracle.gold import GoldRecord, norm, relation_words
from hybridrag.evals.oracle.noise import Injected
from hybridrag.evals.oracle.prompt import answer_text, golds_in, phrase_in
from hybridrag.kb.verbalise import TEMPLATES
from hybridrag.prompts.data_block import neutralise

METHOD = "hydrarag"
SOURCES = ("kg", "docs", "web")


def _template(relation: str, template: str) -> tuple[str, re.Pattern]:
    body = re.escape(neutralise(template)).replace(r"\{h\}", "(?P<h>.+?)").replace(r"\{t\}", "(?P<t>.+?)")
    return relation, re.compile(f"^{body}$", re.IGNORECASE)


_FACTS = sorted((_template(r, t) for r, t in TEMPLATES.items()), key=lambda rt: -len(rt[1].pattern))


def relations_of(rec: GoldRecord, inj: Injected | None) -> list[str]:
    """The path's relations, with a drawn relation error applied."""
    rels = list(rec.relations)
    if inj is not None and inj.type == "wrong_relation":
        rels[inj.hop] = inj.relation
    elif inj is not None and inj.type == "missing_relation":
        del rels[inj.hop]
    return rels


def topics(call: Call) -> R.TopicEntities:
    """Topic extraction: the gold topic (the first decision of a question's run)."""
    inj = call.begin(METHOD)
    if inj is not None and inj.type in ("wrong_entity", "missing_entity"):
        call.carried("topics")
        return R.TopicEntities(entities=[inj.entity] if inj.type == "wrong_entity" else [])
    return R.TopicEntities(entities=[call.record.topic])


def analysis(call: Call) -> R.QuestionAnalysis:
    """Question analysis: sub-questions per hop and the skyline."""
    rec, inj = call.record, call.injected(METHOD)
    rels = relations_of(rec, inj)
    if rels != list(rec.relations):
        call.carried("analysis")
    return R.QuestionAnalysis(split_questions=rec.sub_questions(rels), skyline=rec.skyline(rels))


def _available(call: Call) -> list[str]:
    outside = re.sub(r"<data[^>]*>.*?</data>", " ", call.view.human, flags=re.DOTALL)
    outside = norm(outside).replace(norm(call.record.question), " ")
    return [s for s in SOURCES if re.search(rf"\b{s}\b", outside)]


def selector(call: Call) -> R.SourceChoice:
    """Source selection: where the dataset keeps its facts, among the available sources."""
    rec, inj = call.record, call.injected(METHOD)
    available = _available(call)
    best = [s for s in rec.sources if s in available] or available
    if inj is not None and inj.type == "wrong_module":
        wrong = [s for s in available if s not in best] or best[1:]
        if wrong:
            call.carried("selector")
            return R.SourceChoice(reasoning="The documents should hold this.", sources=cast(list[R.SourceName], wrong))
    return R.SourceChoice(
        reasoning="A static fact about named entities: the sources holding such facts.",
        sources=cast(list[R.SourceName], best),
    )


def text_paths(call: Call) -> R.TextPaths:
    """Paragraph → paths: verbalised KB facts read back as ``head - relation - tail`` (no gold)."""
    out = []
    for n, fields in call.view.numbered():
        sentence = neutralise(" ".join(fields.get("", [])))
        for relation, rx in _FACTS:
            m = rx.match(sentence)
            if m:
                out.append(R.TextPath(paragraph=n, path=f"{m['h']} - {relation_words(relation)} - {m['t']}"))
                break
    return R.TextPaths(paths=out)


def _texts(fields: dict[str, list[str]]) -> str:
    return " ".join(v for values in fields.values() for v in values)


def _carries_path(rec: GoldRecord, text: str) -> bool:
    return all(phrase_in(r, text) or phrase_in(relation_words(r), text) for r in rec.unique_relations())


def choice(call: Call) -> R.Choice:
    """Web result selection or path selection (told apart by the blocks' fields)."""
    rec, blocks = call.record, call.view.numbered()
    web = any("title" in f or "snippet" in f for _, f in blocks)
    width = call.view.width(3)
    scored = []
    for n, f in blocks:
        text = _texts(f)
        second = phrase_in(rec.topic, text) if web else _carries_path(rec, text)
        scored.append((-(2 if golds_in(rec, [text]) else 1 if second else 0), n))
    picked = [n for s, n in sorted(scored) if s < 0][:width] or [n for n, _ in blocks][:width]
    why = (
        "Items naming the answer or following the question's path."
        if any(s < 0 for s, _ in scored)
        else "No item stands out: the first ones."
    )
    return R.Choice(reasoning=why, selected=picked)


def refine(call: Call) -> R.Refinement:
    """Refinement: the bearing paths, verbatim."""
    rec = call.record
    paths = [_texts(f) for _, f in call.view.numbered()]
    bearing = [p for p in paths if golds_in(rec, [p]) or _carries_path(rec, p)] or paths
    return R.Refinement(summary="; ".join(bearing))


def path_summary(call: Call) -> R.PathSummary:
    """Path summary (Algorithm 2): the text paths that bear on the question, verbatim, repeats merged."""
    rec = call.record
    groups: dict[str, list[int]] = {}
    for n, f in call.view.numbered():
        text = _texts(f)
        if golds_in(rec, [text]) or _carries_path(rec, text):
            groups.setdefault(" - ".join(t.strip() for t in text.split("→")), []).append(n)
    return R.PathSummary(paths=[R.SummaryPath(path=p, sources=ns) for p, ns in groups.items()])


def check(call: Call) -> R.AnswerCheck:
    """Answer check: {Yes} with the gold answers the evidence names, else {No} saying what is missing."""
    rec = call.record
    found = golds_in(rec, call.view.evidence(rec.question))
    if found:
        return R.AnswerCheck(reasoning="The evidence names the answer.", sufficient="yes", answer=answer_text(found))
    return R.AnswerCheck(
        reasoning="The evidence does not name the answer.",
        sufficient="no",
        answer="",
        missing=f"a path from {rec.topic} to the {rec.answer_kind}",
    )


def generate(call: Call) -> R.FinalAnswer:
    """Final answer: the gold answers the evidence names, else an abstention."""
    found = golds_in(call.record, call.view.evidence(call.record.question))
    return R.FinalAnswer(
        reasoning="From the evidence." if found else "The evidence does not say.", answer=answer_text(found)
    )


def _not_searched(call: Call) -> set[str]:
    """Sources the last answer check's account says the round did not search."""
    out: set[str] = set()
    for b in call.view.blocks:
        for label, value in b["fields"]:
            if label == "not_searched":
                out |= {s.strip() for s in value.split(",") if s.strip() in SOURCES}
    return out


def _fields_labelled(call: Call, label: str) -> list[str]:
    """Values of the data-block fields called ``label`` (the method's feedback lines)."""
    return [value for b in call.view.blocks for name, value in b["fields"] if name == label]


def _entity_named(call: Call, inj: Injected) -> bool:
    """Whether the prompt shows the drawn entity error.

    It does when no shown path names the topic entity, or when the method's feedback flags the
    extraction: a ``topic_problem`` line naming the wrong entity, or (nothing was extracted) any
    ``topic_problem`` line.
    """
    if not any(phrase_in(call.record.topic, _texts(f)) for _, f in call.view.numbered()):
        return True
    flagged = _fields_labelled(call, "topic_problem")
    if inj.type == "wrong_entity":
        return any(phrase_in(inj.entity, line) for line in flagged)
    return bool(flagged)


def _later(call: Call) -> tuple[Injected | None, bool]:
    """A later decision: the drawn error and whether this prompt shows it."""
    rec, inj = call.record, call.injected(METHOD)
    named = False
    if inj is not None and inj.type in ("wrong_relation", "missing_relation"):
        named = norm(rec.skyline(relations_of(rec, inj))) in norm(call.view.text)
    elif inj is not None and inj.type in ("wrong_entity", "missing_entity"):
        named = _entity_named(call, inj)
    elif inj is not None and inj.type == "wrong_module":  # the check's account names an unsearched source
        named = bool(_not_searched(call) & set(rec.sources))
    if inj is not None:
        call.later(named)
    return (None if named else inj), named


def follow_up(call: Call) -> R.FollowUp:
    """Refined exploration: the question again with the gold skyline and topic entity."""
    rec = call.record
    inj, _ = _later(call)
    rels = relations_of(rec, inj)
    topic = [rec.topic]
    if inj is not None and inj.type in ("wrong_entity", "missing_entity"):
        topic = [inj.entity] if inj.type == "wrong_entity" else []
    return R.FollowUp(
        missing=f"the {rec.answer_kind} linked to {rec.topic} along the question's path",
        question=rec.question,
        skyline=rec.skyline(rels),
        topic_entities=topic,
    )


def predict(call: Call) -> R.Predictions:
    """Predicted exploration: only gold answers the shown paths already name."""
    rec = call.record
    inj, _ = _later(call)
    sky = rec.skyline(relations_of(rec, inj))
    found = golds_in(rec, [_texts(f) for _, f in call.view.numbered()])[:3]
    tail = f"answer({rec.answer_kind})"
    return R.Predictions(predictions=[R.Prediction(answer=a, skyline=sky.replace(tail, a)) for a in found])


ROLES: dict[type, Rule] = {
    R.TopicEntities: topics,
    R.QuestionAnalysis: analysis,
    R.SourceChoice: selector,
    R.TextPaths: text_paths,
    R.Choice: choice,
    R.Refinement: refine,
    R.PathSummary: path_summary,
    R.AnswerCheck: check,
    R.FinalAnswer: generate,
    R.FollowUp: follow_up,
    R.Predictions: predict,
}

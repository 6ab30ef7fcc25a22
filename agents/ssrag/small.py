"""SSRAG with a small model: which roles ask the LLM, and what the others take instead.

A 135M model (``local:smollm2``) is not a usable decomposer, intent detector, query rewriter,
router, graph-to-text writer, redundancy filter or answerer. Under the ``judge`` setting's rules
(``rules``, or ``auto`` with a small model, :func:`agents.llm.judge.use_rules`) each of those roles
takes a rule, and the one role left to the LLM, entity extraction, decodes within names:

- decomposition: the question itself (every example of a KB bank is one relation chain, whose
  only sub-question is the question);
- intent and cues: the rule cues (:func:`agents.ssrag.augment.rule_cues`), question word ``what``
  when there is none;
- rewrite: the question with its entities canonicalised (the rewrite's own fallback);
- route: the paper's temporal-cue rule (:func:`agents.ssrag.routing.rule_label`), no LLM label;
- graph to text: facts as sentences (``graph_to_text="template"``);
- LLM filter: off (exact and cosine deduplication only);
- entity extraction (LLM, the bank's nearest examples): names decode within the KB names the
  question writes, its typo'd ones as the KB spells them, a lower-case word or a name inside
  another left out beside another name (:func:`question_names`; every span of the question when it writes
  none; one such name is taken without a call), types within the KB's entity types;
- graph branch: the relevance walk, and the nearest solved example's relation chain followed from
  the linked entities (``chain_walk``, :mod:`agents.ssrag.chain`);
- answer (:func:`rule_answer`; :func:`outranked` titles count as the question's): the first
  context at the chain's end, in rank order; else the
  first context, in rank order and never one of the question's entities, that a fact of its own
  names by the last relation of the nearest solved example (on the side the example's answer
  takes: ``directed by <name>`` for ``directed_by`` out), ranked first; else the top context's
  name (the method's own non-LLM answer, ``answer=false``).

A llama.cpp model under ``judge=llm`` keeps every role but still decodes its entity and answer
replies within names (:func:`constrained`; the answer within the shown contexts' names,
:func:`agents.ssrag.unify.answer_names`); any other model under ``judge=llm``, or a model that is
not small under ``auto``, runs the paper's roles.
"""

from __future__ import annotations

import re
from typing import Any

from hybridrag.agents.llm.constrained import is_llama_cpp, question_spans
from hybridrag.agents.llm.judge import use_rules
from hybridrag.agents.ssrag import augment as aug
from hybridrag.agents.ssrag import unify as uni
from hybridrag.agents.ssrag.typos import plain_words
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.names import known_names, prefer_exact
from hybridrag.tools.retrieval import mentions_in

RULED = "judge rules (small model)"


def small(ctx: Any) -> bool:
    """Whether the rules replace the roles above (``rules``, or ``auto`` with a small model).

    A context without a ``judge`` (a partial one built in Python) runs the paper's roles.
    """
    return use_rules(getattr(ctx, "judge", "llm"), getattr(ctx, "llm", ""))


def constrained(ctx: Any, model: Any) -> bool:
    """Whether the entity and answer replies decode within names: a llama.cpp model or :func:`small`."""
    return is_llama_cpp(model) or small(ctx)


def entity_choices(kb: KnowledgeBase, question: str, known: list[str] | None = None) -> dict[str, list[str]]:
    """The names and types a constrained extractor decodes within.

    Names: the KB names the question writes, longest first, else every span of the question.
    """
    names = sorted(known_names(kb, question) if known is None else known, key=len, reverse=True) or question_spans(
        question
    )
    return {"entities.name": names, "entities.type": sorted(t for t in kb.graph.schema().entity_types if t)}


def question_names(kb: KnowledgeBase, question: str, spellings: dict[str, str]) -> list[str]:
    """The KB names the question writes: exactly (case ignored), then as the KB spells its typo'd ones.

    With two or more, the words of the sentence among them are left out
    (:func:`agents.ssrag.typos.plain_words`): a one-word name written only in lower case ("who made
    the films Anton Wlabrook was in" writes the title "Made"), a name inside another ("Short" in
    "Short Circuit").
    """
    names = list(dict.fromkeys([*known_names(kb, question), *spellings.values()]))
    plain = set(plain_words(question, names))
    return [n for n in names if n not in plain]


def extract(
    model: Any,
    kb: KnowledgeBase,
    ctx: Any,
    question: str,
    subs: list[str],
    follow: tuple,
    examples: str,
    spellings: dict[str, str] | None = None,
) -> tuple[list[dict], dict, str | None]:
    """ExtractKeyEntities (:func:`agents.ssrag.augment.extract_entities`): ``(entities, usage, note)``.

    A constrained model decodes within :func:`entity_choices` of :func:`question_names`; one such
    name is taken without a call on the first ask. ``spellings``: :func:`agents.ssrag.typos.spelled`.
    """
    spellings = spellings or {}
    if not constrained(ctx, model):
        return aug.extract_entities(
            model, kb, question, subs, ctx.structured_method, follow, examples, spellings=spellings
        )
    known = question_names(kb, question, spellings)
    if len(known) == 1 and not follow:  # the grammar admits one name only
        return [{"name": known[0], "type": ""}], {}, "one KB name in the question: taken without a call"
    choices = entity_choices(kb, question, known)
    return aug.extract_entities(model, kb, question, subs, ctx.structured_method, follow, examples, choices, spellings)


def rule_intent(question: str) -> dict:
    """The intent step's cues by rule alone (the shape :func:`agents.ssrag.augment.detect_intent` returns)."""
    rules = aug.rule_cues(question)
    return {**rules, "intent": rules["intent"] or "what", "subtopics": []}


def outranked(kb: KnowledgeBase, question: str, items: list[dict]) -> set[str]:
    """Entity ids of ``items`` that the question's exactly written names outrank (never its answer).

    A question that writes "Big" is about "Big": "The Big Picture" and "Big Eyes", close to it in
    cosine and so often ranked first, are near-misses of its topic, not answers; the rule treats
    them as it treats the question's own entities (:func:`tools.names.prefer_exact`, the rule
    fusion's seeding uses).
    """
    named = mentions_in(kb, question)
    about = [it.get("entity_id") or (it["id"] if it.get("kind") == "entity" else None) for it in items]
    ids = [e for e in dict.fromkeys(about) if e and e not in named]
    if not named or not ids:
        return set()
    written = [re.compile(rf"(?<!\w){re.escape(kb.name(n).casefold())}(?!\w)") for n in named]
    near = [i for i in ids if any(w.search(kb.name(i).casefold()) for w in written)]  # titles holding a named one
    return set(near) - set(prefer_exact(kb, question, near, named))


def _states(item: dict, phrase: str, direction: str) -> bool:
    """Whether one of the item's facts names it by ``phrase`` on the answer's side."""
    name = item["name"].casefold()
    wanted = f"{phrase} {name}" if direction != "in" else f"{name} {phrase}"
    return any(wanted in f.casefold() for f in [*(item.get("path") or []), item.get("text") or ""])


def rule_answer(
    items: list[dict], asked: set[str], examples: list, graph: list[dict] | None = None, question: str = ""
) -> tuple[str, list[dict], str]:
    """The small model's answer by rule: ``(answer, contexts reordered with it first, why)``.

    ``examples``: the nearest solved examples (:func:`agents.ssrag.shots.nearest`); their first one's
    last relation and direction pick the context (see the module doc). ``graph``: the graph branch's
    contexts; when the joint rerank cut every context at the chain's end, the first of them in the
    chain's order is put back first. A passage about no entity answers ``question`` with its span
    (:func:`agents.ssrag.unify.context_answer`).
    """
    order = uni.candidates_first(items, asked)
    for i, it in enumerate(order):
        if it.get("chain") and (it.get("entity_id") or it["id"]) not in asked:
            why = f"{RULED}: the first context at the end of the nearest solved example's relation chain"
            return it["name"], [it, *order[:i], *order[i + 1 :]], why
    cut = next((it for it in graph or [] if it.get("chain") and (it.get("entity_id") or it["id"]) not in asked), None)
    if cut is not None:
        why = (
            f"{RULED}: the first entity at the end of the nearest solved example's relation chain (put back: "
            "the rerank had cut it)"
        )
        return cut["name"], [cut, *order], why
    ex = next((e for e in examples if e.relations), None)
    if ex is not None:
        phrase = ex.relations[-1].replace("_", " ").casefold()
        direction = ex.directions[-1] if len(ex.directions) == len(ex.relations) else "out"
        for i, it in enumerate(order):
            if (it.get("entity_id") or it["id"]) not in asked and _states(it, phrase, direction):
                why = f"{RULED}: the first context stated by '{phrase}', the nearest solved example's relation"
                return uni.context_answer(order, i, question), [it, *order[:i], *order[i + 1 :]], why
    return uni.fallback_answer(order, asked, question), order, f"{RULED}: the top context's name"

"""Gold records: what a perfect model knows about one question, and finding it from a prompt.

A gold record is built from the dataset's annotations only. For MetaQA:

- the topic entity is the [bracketed] span of the raw question (:attr:`Question.topic`);
- the relation path comes from the question type, one relation per hop
  (``actor_to_movie_to_director`` → ``starred_actors``, ``directed_by``), with the entity
  type of every position (``person``, ``movie``, ``person``);
- the answers are the gold answers;
- ``sources`` says where the dataset keeps its facts (``kg`` for MetaQA; MetaQA-hybrid at
  50 % completeness keeps half of them in passages: ``kg`` and ``docs``).

The stand-in finds the record of a call from the question text the method sends: the
record whose question occurs latest in the prompt (few-shot examples come before the
question asked), compared after the same normalisation data blocks apply
(:func:`prompts.data_block.neutralise`) and case folding. A prompt naming no known
question raises :class:`UnknownQuestionError`. Question texts that occur twice in a
dataset with different answers (2 of MetaQA's 9,992 1-hop dev questions) get the union.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hybridrag.evals.datasets import Question
from hybridrag.evals.metaqa import RELATION_OF, TYPE_OF, relation_path
from hybridrag.prompts.data_block import neutralise

RELATIONS: tuple[str, ...] = tuple(dict.fromkeys(RELATION_OF.values()))  # MetaQA's relation vocabulary
PERSON_KINDS = frozenset({"actor", "director", "writer"})


class UnknownQuestionError(LookupError):
    """The prompt names no question the stand-in has a gold record for."""


class NoGoldAnnotationError(ValueError):
    """A question lacks the annotations a gold record needs (topic entity and question type)."""


def norm(text: str) -> str:
    """Case-folded text with data-block neutralisation (one line, no brackets, single spaces)."""
    return neutralise(text).casefold()


def relation_words(relation: str) -> str:
    """``directed_by`` → ``directed by``."""
    return relation.replace("_", " ")


@dataclass(frozen=True)
class GoldRecord:
    """The gold annotation of one question."""

    id: str
    question: str
    topic: str
    kinds: tuple[str, ...]
    relations: tuple[str, ...]
    answers: tuple[str, ...]
    sources: tuple[str, ...] = ("kg",)
    kb_types: tuple[str, ...] = ()

    @property
    def types(self) -> tuple[str, ...]:
        """KB entity type of every position of the path (topic first, answer last).

        As the KB's schema names them when it was given (a perfect model reads the schema in its
        prompt: an untyped KB's inferred types), else MetaQA's own type names.
        """
        return self.kb_types or tuple(TYPE_OF[k] for k in self.kinds)

    @property
    def topic_type(self) -> str:
        """KB entity type of the topic entity."""
        return self.types[0]

    @property
    def answer_kind(self) -> str:
        """The answer's kind as the question type names it (``director``, ``year``...)."""
        return self.kinds[-1]

    @property
    def hops(self) -> int:
        """Number of relations between topic and answer."""
        return len(self.relations)

    def unique_relations(self) -> list[str]:
        """The relations of the path, each once, in path order."""
        return list(dict.fromkeys(self.relations))

    def skyline(self, relations: Iterable[str] | None = None) -> str:
        """``Tom Hanks - starred actors - movie - directed by - answer(director)``.

        Deterministic rule: the topic, then per hop the relation's words and the kind of
        the entity reached, the last one written ``answer(kind)``. ``relations`` replaces
        the path's relations (a noisy skyline may have fewer).
        """
        rels = list(self.relations if relations is None else relations)
        parts = [self.topic]
        for i, rel in enumerate(rels):
            last = i == len(rels) - 1
            kind = self.answer_kind if last or i + 1 >= len(self.kinds) else self.kinds[i + 1]
            parts += [relation_words(rel), f"answer({kind})" if last else kind]
        return " - ".join(parts if rels else [self.topic, f"answer({self.answer_kind})"])

    def sub_questions(self, relations: Iterable[str] | None = None) -> list[str]:
        """One simple question per hop (deterministic rule; later hops refer back to the earlier answer).

        ``Which movies have Tom Hanks as actor (starred actors)?``, then ``What is the director
        (directed by) of those movies?``. ``relations`` replaces the path's relations.
        """
        rels = list(self.relations if relations is None else relations)
        out, subject = [], self.topic
        for i, rel in enumerate(rels):
            a = self.kinds[min(i, len(self.kinds) - 1)]
            b = self.answer_kind if i == len(rels) - 1 else self.kinds[min(i + 1, len(self.kinds) - 1)]
            if b == "movie":
                out.append(f"Which movies have {subject} as {a} ({relation_words(rel)})?")
            else:
                out.append(f"What is the {b} ({relation_words(rel)}) of {subject}?")
            subject = f"those {b}s"
        return out


def record_for(q: Question, sources: tuple[str, ...] = ("kg",), relation_types: Mapping | None = None) -> GoldRecord:
    """The gold record of a MetaQA-style question (needs ``topic`` and ``qtype``)."""
    if not q.topic or not q.qtype:
        raise NoGoldAnnotationError(
            f"question {q.id!r} has no topic entity or question type; the oracle LLM needs MetaQA-style "
            "gold (a [bracketed] topic and a *_qtype file, or 'topic' and 'qtype' in JSONL)"
        )
    try:
        relations = tuple(relation_path(q.qtype))
    except ValueError as exc:
        raise NoGoldAnnotationError(f"question {q.id!r}: {exc}") from None
    kinds = tuple(q.qtype.split("_to_"))
    if any(k not in TYPE_OF for k in kinds):
        raise NoGoldAnnotationError(f"question {q.id!r}: unknown kind in question type {q.qtype!r}")
    types = schema_types(kinds, relations, relation_types or {})
    return GoldRecord(q.id, q.question, q.topic, kinds, relations, tuple(q.answers), tuple(sources), types)


def schema_types(kinds: tuple[str, ...], relations: tuple[str, ...], relation_types: Mapping) -> tuple[str, ...]:
    """The KB type of every position of a MetaQA path, read off the KB's relation signatures.

    Every MetaQA relation starts from a film: a ``movie`` position is its relation's head type, any
    other its tail type. () when a relation is not in the schema (MetaQA's own names are used then).
    """
    out = []
    for i, kind in enumerate(kinds):
        rel = relation_types.get(relations[max(i - 1, 0)])
        if rel is None or not rel.head_types or not rel.tail_types:
            return ()
        out.append(rel.head_types[0] if kind == "movie" else rel.tail_types[0])
    return tuple(out)


_LABELLED = re.compile(r"^[^:]{1,40}: ")


class GoldSet:
    """Gold records by question text, and the lookup of a prompt's question."""

    def __init__(self, records: Iterable[GoldRecord]) -> None:
        """Index ``records`` by their normalised question text (answers of repeats merged)."""
        self._by_text: dict[str, GoldRecord] = {}
        self.has_text = False  # holds a question over documents (evals.oracle.text_gold.TextRecord)
        self.answer_shown: dict[str, bool] = {}  # text questions: an answer prompt showed a supported gold answer
        for r in records:
            if not isinstance(r, GoldRecord):
                self.has_text = True
                self._by_text.setdefault(norm(r.question), r)
                continue
            key = norm(r.question)
            if key in self._by_text:
                old = self._by_text[key]
                r = GoldRecord(
                    old.id,
                    old.question,
                    old.topic,
                    old.kinds,
                    old.relations,
                    tuple(dict.fromkeys(old.answers + r.answers)),
                    old.sources,
                    old.kb_types,
                )
            self._by_text[key] = r

    @classmethod
    def from_questions(
        cls, questions: Iterable[Question], sources: tuple[str, ...] = ("kg",), relation_types: Mapping | None = None
    ) -> GoldSet:
        """Gold records of every question (types as ``relation_types``, the KB schema's, name them)."""
        return cls(record_for(q, sources, relation_types) for q in questions)

    def __len__(self) -> int:
        return len(self._by_text)

    def records(self) -> list[GoldRecord]:
        """Every record."""
        return list(self._by_text.values())

    def find(self, prompt: str) -> GoldRecord | None:
        """The record whose question occurs latest in ``prompt`` (longest on a tie), or None.

        Fast path: the last line that is a question, or ends with one after ``label: ``
        prefixes; then the lines after it are searched for a question inside a longer line.
        """
        lines = [norm(line) for line in (prompt or "").split("\n")]
        found, after = None, 0
        for i in range(len(lines) - 1, -1, -1):
            tail = lines[i]
            while True:  # the line itself first: the longest candidate
                if tail in self._by_text:
                    found, after = tail, i + 1
                    break
                m = _LABELLED.match(tail)
                if not m:
                    break
                tail = tail[m.end() :]
            if found is not None:
                break
        text = "\n".join(lines[after:])
        inside = [(text.rfind(k) + len(k), len(k), k) for k in self._by_text if k in text]
        if inside:
            found = max(inside)[2]
        return self._by_text[found] if found is not None else None

    def lookup(self, prompt: str) -> GoldRecord:
        """:meth:`find`, raising :class:`UnknownQuestionError` when the prompt names no known question."""
        found = self.find(prompt)
        if found is None:
            shown = " ".join((prompt or "").split())[-160:]
            raise UnknownQuestionError(
                f"the oracle LLM has no gold record for the question in this prompt (…{shown!r}); it answers "
                f"only the {len(self)} questions it was built for"
            )
        return found

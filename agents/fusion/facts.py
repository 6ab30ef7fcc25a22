"""The facts a passage states, scored like the graph's answer-aware triples (``scoring=evidence``).

A graph fact (seed, relation, neighbour) scores (Dice(q, seed) + Dice(q, relation label)) / 2:
the neighbour is the candidate answer, so its own overlap with the question is no evidence.
A sentence is scored the same way. Its subject is a seed or question entity it names; its
relation is what is left once every entity it names is taken out, plus those entities' types
(the schema side of a relation: "Papillon is in English" says ``is in`` about a *language*,
as the graph's ``in_language`` does). The entities taken out are the sentence's answers.
Without the types, a sentence's remaining words rarely name what the question asks for and
the object's own words decide the ranking (a tag "dustin hoffman" outscoring "English" for
"what language is Papillon in").
"""

from __future__ import annotations

from dataclasses import dataclass

from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.dice import Tokenizer, dice, tokens
from hybridrag.tools.retrieval import mentions_in
from hybridrag.tools.text import name_pattern, sentences

MAX_SENTENCES = 200  # sentences of one text read for facts (MetaQA's longest passage has under 100)


@dataclass(frozen=True)
class Fact:
    """One sentence about one subject: its score, the sentence, the subject, the entities it answers with."""

    score: float
    sentence: str
    subject: str
    answers: tuple[str, ...]


def sentence_facts(
    kb: KnowledgeBase,
    question: str,
    text: str,
    subjects: dict[str, str],
    tokenizer: Tokenizer = "bigram",
    about: str = "",
) -> list[Fact]:
    """Facts ``text`` states about ``subjects`` (id → name), best first.

    ``about`` is the name of the entity the text is about: inside it a shorter subject name is
    no mention ("Alien" in "Alien 3"). A sentence naming a subject and nothing else (a bare
    name) states no fact.
    """
    q = tokens(question, tokenizer)
    pats = {sid: name_pattern(name.strip()) for sid, name in subjects.items() if name.strip()}
    own = name_pattern(about.strip()) if about.strip() else None
    out = []
    for sent in split_sentences(text)[:MAX_SENTENCES]:
        named = [
            (sid, pat)
            for sid, pat in pats.items()
            if pat.search(sent if own is None or subjects[sid].lower() == about.lower() else own.sub(" ", sent))
        ]
        if not named:
            continue
        mentioned = mentions_in(kb, sent)
        for sid, pat in named:
            others = [e for e in mentioned if e != sid and kb.name(e).lower() != subjects[sid].lower()]
            rest = tokens(_without(pat.sub(" ", sent), [kb.name(e) for e in others]), tokenizer)
            types = {t for e in others if (t := _type(kb, e))}
            relation = rest | frozenset().union(*(tokens(t, tokenizer) for t in types))
            if relation:
                score = (dice(q, tokens(subjects[sid], tokenizer)) + dice(q, relation)) / 2.0
                out.append(Fact(score, sent, sid, tuple(others)))
    out.sort(key=lambda f: -f.score)
    return out


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, not split after an initial or a title written after a space ("J.", "Dr.", "Mt.")."""
    return sentences(text, after="spaced abbreviations")


def _without(text: str, names: list[str]) -> str:
    """``text`` with every whole-phrase occurrence of ``names`` removed, longest name first."""
    for name in sorted({n for n in names if n.strip()}, key=len, reverse=True):
        text = name_pattern(name.strip()).sub(" ", text)
    return text


def _type(kb: KnowledgeBase, entity_id: str) -> str:
    entity = kb.graph.get(entity_id)
    return (entity.type or "") if entity is not None else ""

"""How a schema step is put into words: relation names and entity types only, no LLM.

Three wordings of the step that ends a question: a noun phrase (``which person that Heat is
directed by``), a direct question on it (``what person is Heat directed by``) and, for a
relation named ``<participle> by`` walked from its head, the wording people use (``who directed
Heat``, ``what company made Widget``), so the nearest example of a one-hop question a person
writes is a one-hop example.
"""

from __future__ import annotations

_PREPOSITIONS = {"by", "in", "of", "to", "at", "on", "for", "with", "from", "into", "as", "about"}
PERSON_TYPES = frozenset({"person", "people", "human", "actor", "director", "writer", "author", "artist"})
# past tense of participles that do not end in -ed (an -ed participle is its own past tense)
_IRREGULAR = {
    "written": "wrote",
    "sung": "sang",
    "drawn": "drew",
    "driven": "drove",
    "given": "gave",
    "taken": "took",
    "shown": "showed",
    "spoken": "spoke",
    "chosen": "chose",
    "begun": "began",
    "done": "did",
    "seen": "saw",
    "grown": "grew",
    "thrown": "threw",
    "ridden": "rode",
    "made": "made",
    "built": "built",
    "sold": "sold",
    "bought": "bought",
    "taught": "taught",
    "held": "held",
    "led": "led",
    "won": "won",
    "told": "told",
    "found": "found",
    "founded": "founded",
    "shot": "shot",
    "set": "set",
    "run": "ran",
    "known": "knew",
}


def relation_words(relation: str) -> str:
    """A relation name as words (``directed_by`` -> ``directed by``)."""
    return relation.replace("_", " ").strip()


def phrase(inner: str, relation: str, direction: str, reached: str) -> str:
    """Noun phrase for the entities one step from ``inner`` (template from relation words and types)."""
    words = relation_words(relation)
    first, last = words.split()[0].lower(), words.split()[-1].lower()
    verb = len(words.split()) == 1 and first.endswith("s") and not first.endswith("ss")  # makes, owns
    if direction == "out":
        if verb:
            return f"the {reached} that {inner} {words}"
        if first == "has":
            return f"the {words[4:]} of {inner}"
        if last in _PREPOSITIONS or first in _PREPOSITIONS:
            return f"the {reached} that {inner} is {words}"
        return f"the {words} of {inner}"
    if first == "has":
        return f"the {reached} that has {words[4:]} {inner}"
    if verb:
        return f"the {reached} that {words} {inner}"
    if last in _PREPOSITIONS or first in _PREPOSITIONS:
        return f"the {reached} {words} {inner}"
    return f"the {reached} whose {words} is {inner}"


def ask(inner: str, relation: str, direction: str, reached: str) -> str:
    """A direct question for the entities one step from ``inner`` ("what movie is directed by <E>")."""
    words = relation_words(relation)
    first, last = words.split()[0].lower(), words.split()[-1].lower()
    verb = len(words.split()) == 1 and first.endswith("s") and not first.endswith("ss")
    prep = last in _PREPOSITIONS or first in _PREPOSITIONS
    if direction == "out":
        if first == "has":
            return f"what is the {words[4:]} of {inner}"
        if verb:
            return f"{inner} {words} what {reached}"
        return f"what {reached} is {inner} {words}" if prep else f"what is the {words} of {inner}"
    if first == "has":
        return f"what {reached} has {inner} as {words[4:]}"
    if verb:
        return f"what {reached} {words} {inner}"
    return f"what {reached} is {words} {inner}" if prep else f"what {reached} has {inner} as {words}"


def natural(inner: str, relation: str, direction: str, reached: str) -> str | None:
    """The usual question for a ``<participle> by`` step walked from its head, else None.

    ``directed_by`` from a movie to a person is ``who directed <E>``; ``made_by`` from a product
    to a company is ``what company made <E>``. Other relations and the backward walk have no
    such wording here (their direct question already reads naturally).
    """
    words = relation_words(relation).split()
    if direction != "out" or len(words) < 2 or words[-1].lower() != "by":
        return None
    participle = words[-2].lower()
    past = _IRREGULAR.get(participle) or (participle if participle.endswith("ed") else None)
    if past is None:
        return None
    verb = " ".join([*words[:-2], past])
    who = "who" if reached.lower() in PERSON_TYPES else f"what {reached}"
    return f"{who} {verb} {inner}"

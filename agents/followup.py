"""A follow-up question read through the previous turn of a chat, offline (no LLM).

The previous turn gives two referents: its *topic*, the longest KB name its question writes
(``who directed Big?`` → Big), and its *answer* (Penny Marshall). :func:`follow_up` applies these
rules to the new message, in order:

1. ``and X?`` / ``what about X?`` / ``how about X?`` where X is exactly a KB name: the previous
   question with its topic replaced by X (``and Forrest Gump?`` → ``who directed Forrest Gump?``).
2. Pronouns are replaced (a leading ``and`` / ``so`` / ``also`` / ``then`` is dropped):
   ``it``, ``that movie``, ``this film``, ``the same one`` → the topic (``its`` → ``Big's``);
   ``he``, ``she``, ``him``, ``her``, ``they``, ``them`` → the answer (``his``, ``their`` →
   ``Penny Marshall's``). Without a topic, ``it`` means the answer; without an answer, ``he``
   means the topic.
3. A message that writes a KB name is a new question, kept as written.
4. A message that names nothing and is a follow-up by its shape (it starts with ``and`` /
   ``also`` / ``what about``, or has at most three words) gets the topic: ``and the writer?`` →
   ``the writer of Big?``, ``who wrote?`` → ``who wrote Big?``. Any other message is kept.

With a chat model that is not a small one (:func:`rewrites_with_llm`), the model rewrites the
follow-up instead (:func:`rewrite_with_llm`, ``prompts/chat.py``); an empty or unparseable reply,
or a model that cannot answer the call (a ``LookupError``, as the perfect-LLM stand-in raises),
leaves the rules' reading.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from hybridrag.kb.base import KnowledgeBase

NamesIn = Callable[[str], list[str]]
"""KB names a text writes, as it writes them."""

LEAD = re.compile(r"^\s*(?:and|so|also|then)\b[\s,]*", re.I)
ELLIPSIS = re.compile(r"^\s*(?:and|what about|how about)\s+(?P<name>.+?)[\s?.!]*$", re.I)
FOLLOW_UP_START = re.compile(r"^\s*(?:and|also|what about|how about)\b", re.I)
THING = re.compile(r"\b(?:(?:that|this|the same)\s+(?:movie|film|one|book|show|title)|it)\b", re.I)
THING_OF = re.compile(r"\bits\b", re.I)
PERSON = re.compile(r"\b(?:he|she|him|her|they|them)\b", re.I)
PERSON_OF = re.compile(r"\b(?:his|their)\b", re.I)
PRONOUN_WORDS = {"it", "its", "he", "she", "him", "her", "his", "they", "them", "their"}
SHORT = 3
"""A message of at most this many words that names nothing is a follow-up."""


def names_in_kb(kb: KnowledgeBase) -> NamesIn:
    """The KB names a text writes, pronouns left out (a film called "It" is not the pronoun)."""
    from hybridrag.tools.names import written_spans

    return lambda text: [n for n in written_spans(kb, text) if n.casefold() not in PRONOUN_WORDS]


def topic_of(question: str, names_in: NamesIn) -> str:
    """The longest KB name a question writes ('' for none; the first of equal length)."""
    return max(names_in(question), key=len, default="") if question else ""


def _end(text: str) -> str:
    return text.rstrip(" ?.!")


def _replace_pronouns(text: str, topic: str, answer: str) -> str:
    thing, person = topic or answer, answer or topic
    if not thing:
        return text
    text = THING.sub(lambda _: thing, text)
    text = THING_OF.sub(lambda _: f"{thing}'s", text)
    text = PERSON.sub(lambda _: person, text)
    return PERSON_OF.sub(lambda _: f"{person}'s", text)


def follow_up(text: str, asked: str, answer: str, names_in: NamesIn) -> str:
    """The question ``text`` asks after a turn that asked ``asked`` and was answered ``answer``.

    ``asked`` is the previous question as it was read (itself resolved), ``names_in`` the KB's
    names (:func:`names_in_kb`). The rules are in this module's docstring.
    """
    text, answer = text.strip(), answer.strip()
    if not asked and not answer:
        return text
    topic = topic_of(asked, names_in)
    if (m := ELLIPSIS.match(text)) and topic:
        name = m.group("name").strip()
        if [n.casefold() for n in names_in(name)] == [name.casefold()]:
            return re.sub(re.escape(topic), lambda _: name, asked, count=1, flags=re.I)
    body = LEAD.sub("", text) or text
    resolved = _replace_pronouns(body, topic, answer)
    if resolved != body:
        return resolved
    if names_in(body):
        return text
    referent = topic or answer
    if not referent or not (FOLLOW_UP_START.match(text) or len(body.split()) <= SHORT):
        return text
    body = re.sub(r"^\s*(?:what|how) about\s+", "", body, flags=re.I)
    joiner = " of " if body.lower().startswith("the ") else " "
    return f"{_end(body)}{joiner}{referent}?"


class Rewrite(BaseModel):
    """The model's reply: the follow-up as a question that stands alone."""

    question: str = Field(description="the latest message as one question understood without the chat")


def rewrites_with_llm(llm: Any) -> bool:
    """Whether a run's ``llm`` rewrites follow-ups: any chat model but a small one (SmolLM2 copies its examples)."""
    from hybridrag.agents.llm.judge import is_small_model

    return bool(llm) and not is_small_model(llm)


def rewrite_with_llm(model: Any, text: str, asked: str, answer: str, method: str) -> tuple[str, dict]:
    """The follow-up ``text`` rewritten by ``model`` ('' when it gives none), and the call's usage."""
    from hybridrag.agents.llm.structured import call_structured
    from hybridrag.prompts.chat import FOLLOW_UP, FOLLOW_UP_SYSTEM
    from hybridrag.prompts.data_block import data_block

    previous = data_block([("question", asked), ("answer", answer)], source="chat")
    messages = [("system", FOLLOW_UP_SYSTEM), ("human", FOLLOW_UP.format(previous=previous, message=text))]
    try:
        out, usage = call_structured(model, Rewrite, messages, role="follow_up", method=method)
    except LookupError:  # the model has no reply for this call (the perfect-LLM stand-in)
        return "", {}
    return (" ".join(out.question.split()) if out is not None else ""), usage

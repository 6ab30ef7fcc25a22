"""What the stand-in reads from a prompt: messages, data blocks, feedback, gold answers shown.

Nothing here depends on a template's wording. Retrieved data is read from the data blocks
every method quotes it in (:func:`prompts.data_block.parse_blocks`); when a prompt holds no
block at all (a template that quotes nothing), the last user message with the question
removed stands in for the evidence. Feedback is every user message after the first
assistant turn, i.e. what the method said after the model's first decision.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from hybridrag.evals.oracle.gold import GoldRecord, norm
from hybridrag.prompts.data_block import parse_blocks
from hybridrag.tools.text import name_pattern

_WIDTH = re.compile(r"\bat most (\d+)\b", re.IGNORECASE)


def _content(m: BaseMessage) -> str:
    return m.content if isinstance(m.content, str) else " ".join(str(c) for c in m.content)


def phrase_in(phrase: str, text: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as a whole phrase, case-insensitively (normalised)."""
    p = norm(phrase)
    return bool(p) and name_pattern(p).search(norm(text)) is not None


@dataclass
class PromptView:
    """One structured call as the stand-in sees it."""

    messages: list[BaseMessage]
    text: str = ""
    blocks: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Join the messages and parse their data blocks."""
        self.text = "\n".join(_content(m) for m in self.messages)
        self.blocks = parse_blocks(self.text)

    @property
    def human(self) -> str:
        """The last user message."""
        found = [_content(m) for m in self.messages if isinstance(m, HumanMessage)]
        return found[-1] if found else self.text

    @property
    def has_ai_turn(self) -> bool:
        """Whether an earlier reply of the model is in the conversation (a later decision)."""
        return any(isinstance(m, AIMessage) for m in self.messages)

    def feedback(self, question: str = "") -> str:
        """User messages after the first assistant turn, with the question's text removed."""
        seen_ai, parts = False, []
        for m in self.messages:
            seen_ai = seen_ai or isinstance(m, AIMessage)
            if seen_ai and isinstance(m, HumanMessage):
                parts.append(_content(m))
        text = norm("\n".join(parts))
        return text.replace(norm(question), " ") if question else text

    def numbered(self) -> list[tuple[int, dict[str, list[str]]]]:
        """Numbered blocks (``n="1"``...) as (n, {label: [values]}); a bare line has label ``""``."""
        out = []
        for b in self.blocks:
            n = b["attrs"].get("n", "")
            if n.isdigit():
                out.append((int(n), _fields(b)))
        return out

    def block_values(self) -> list[str]:
        """Every value of every data block (the retrieved data and notes written from it)."""
        return [v for b in self.blocks for _, v in b["fields"]]

    def evidence(self, question: str = "") -> list[str]:
        """The data the call shows: block values, else the last user message without the question."""
        values = self.block_values()
        if values or not question:
            return values
        return [norm(self.human).replace(norm(question), " ")]

    def width(self, default: int) -> int:
        """The ``at most N`` a selection prompt asks for (outside the data), else ``default``."""
        outside = re.sub(r"<data[^>]*>.*?</data>", " ", self.human, flags=re.DOTALL)
        m = _WIDTH.search(outside)
        return int(m.group(1)) if m else default


def _fields(block: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for label, value in block["fields"]:
        out.setdefault(label, []).append(value)
    return out


def view(messages: Sequence[BaseMessage]) -> PromptView:
    """A :class:`PromptView` of converted chat messages."""
    return PromptView(list(messages))


def golds_in(record: GoldRecord, texts: Iterable[str]) -> list[str]:
    """Gold answers named in ``texts`` (whole phrases), in the order the texts name them first."""
    hits: dict[str, tuple[int, int]] = {}
    for i, text in enumerate(texts):
        low = norm(text)
        for a in record.answers:
            if a in hits:
                continue
            m = name_pattern(norm(a)).search(low) if norm(a) else None  # both sides case-folded
            if m:
                hits[a] = (i, m.start())
    return sorted(hits, key=hits.get)


ABSTAIN = "I do not know"


def answer_text(golds: list[str]) -> str:
    """A short answer listing ``golds``, or an abstention when there is none."""
    return ", ".join(golds) if golds else ABSTAIN

"""What every text rule of the stand-in reads from a call: the record, the supported answers, the topics."""

from __future__ import annotations

import re
from typing import cast

from hybridrag.evals.oracle.call import Call
from hybridrag.evals.oracle.prompt import PromptView
from hybridrag.evals.oracle.text_gold import TextRecord, supported, topics

_TYPES = re.compile(r"entity types?:[ \t]*([^\n]*)", re.IGNORECASE)


def rec_of(call: Call) -> TextRecord:
    """The call's text gold record."""
    return cast(TextRecord, call.record)


def found_in(call: Call) -> list[str]:
    """The gold answers the call's evidence states in real text (:func:`~evals.oracle.text_gold.supported`)."""
    rec = rec_of(call)
    return supported(rec, call.view.evidence(rec.question))


def answered(call: Call) -> list[str]:
    """The supported gold answers of an answer prompt, noted per question (``GoldSet.answer_shown``)."""
    found = found_in(call)
    shown = call.gold.answer_shown
    shown[call.record.id] = shown.get(call.record.id, False) or bool(found)
    return found


def entity_type(view: PromptView) -> str:
    """The first entity type the prompt lists (``entity`` when it lists none)."""
    m = _TYPES.search(view.text)
    first = re.split(r"[,;|]", m.group(1))[0].strip(" .`'\"[]") if m else ""
    return first if first and not first.startswith("(") and first.casefold() != "none" else "entity"


def topics_of(call: Call) -> list[str]:
    """The topics the call may name (:func:`~evals.oracle.text_gold.topics`)."""
    return topics(rec_of(call), call.view)

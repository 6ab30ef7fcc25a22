"""One question per run, on a checkpointed thread that is asked many.

With a checkpointer (Studio, the Agent Server, ``builder.compile(checkpointer=...)``) a thread
keeps its state between runs: ``trace`` (``operator.add``) would keep appending the second
question's steps to the first's, and a loop counter would start where the first question's loop
stopped. :func:`per_question` gives a copy of a method's builder that starts each new question
clean: a ``start_question`` node right after START writes :data:`NEW_QUESTION` to every key but
the question, and the channels of those keys take that write as "empty again". A run resumed
from a checkpoint (an ``interrupt()`` answered, a forked thread) does not pass START, so it keeps
its state. ``graphs.get_builder`` and the Agent Server's graphs are built this way.

The reset is a node, not a channel's reaction to a finished run: LangGraph also tells channels
"finished" before the ``Send`` tasks of a fan-out run (MoR's traversals, HydraRAG's sources).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.last_value import LastValue
from langgraph.constants import START

from hybridrag.graphs.rewire import insert_after

NEW_QUESTION = "hybridrag:new-question"
"""What ``start_question`` writes to a key to empty it (a plain string: checkpoints stay JSON)."""

NODE = "start_question"


def _is_reset(value: Any) -> bool:
    return isinstance(value, str) and value == NEW_QUESTION


class ResettableValue(LastValue):
    """A last-value channel that :data:`NEW_QUESTION` empties."""

    def update(self, values: Sequence[Any]) -> bool:
        """Keep the last write, or empty the value on :data:`NEW_QUESTION`."""
        if len(values) == 1 and _is_reset(values[0]):
            was = self.is_available()
            self.value = type(self)(self.typ).value  # LangGraph's "no value"
            return was
        return super().update(values)


class ResettableAggregate(BinaryOperatorAggregate):
    """A reducer channel (``trace``, ``usage``, fan-in lists) that :data:`NEW_QUESTION` starts over."""

    def update(self, values: Sequence[Any]) -> bool:
        """Reduce the writes; a :data:`NEW_QUESTION` among them drops everything before it."""
        resets = [i for i, v in enumerate(values) if _is_reset(v)]
        if not resets:
            return super().update(values)
        self.value = type(self)(self.typ, self.operator).value
        super().update(values[resets[-1] + 1 :])
        return True


def _resettable(channel: Any) -> Any:
    kind = type(channel)
    made: ResettableValue | ResettableAggregate
    if kind is LastValue:
        made = ResettableValue(channel.typ)
    elif kind is BinaryOperatorAggregate:
        made = ResettableAggregate(channel.typ, channel.operator)
    else:
        return None  # LangGraph's other kinds (ephemeral, managed) do not outlive a run
    made.key = channel.key
    return made


def per_question(builder: Any) -> Any:
    """A copy of a method's ``StateGraph`` builder whose state starts over with each question on a thread.

    The thread is a checkpointed one; the builder given is left as it is.
    """
    inputs = set(builder.schemas[builder.input_schema])
    reset = {
        name: made
        for name, ch in builder.channels.items()
        if name not in inputs and (made := _resettable(ch)) is not None
    }

    def start_question(state: Any) -> dict:
        """A new question: every key but the question starts empty."""
        return dict.fromkeys(reset, NEW_QUESTION)

    out = insert_after(builder, START, NODE, start_question)
    out.channels.update(reset)
    return out

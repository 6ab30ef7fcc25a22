"""State that belongs to one question, on a checkpointed thread that is asked many.

With a checkpointer (Studio, the Agent Server, ``builder.compile(checkpointer=...)``) a thread
keeps its state between runs: a reducer such as ``operator.add`` would keep appending the second
question's trace steps to the first's, and a loop counter would start where the first question's
loop stopped. LangGraph tells a channel when a run finishes (``finish()``, not called when a run
pauses at an ``interrupt()``), so:

- :class:`PerQuestion` (``trace`` and ``usage``, through ``graphs.common.OutputState``) keeps the
  finished run's value for the thread to show, and starts over with the next question's first write;
- :class:`ScratchValue` / :class:`ScratchAggregate` (a method's working keys) drop their value
  when the run finishes, so the next question's nodes start from an empty state;
- :func:`per_question` gives a builder whose channels are these (``graphs.get_builder`` and the
  Agent Server's graphs use it).

The "finished" mark travels in the checkpoint as a one-key dict (``{FINISHED: value}``), so a
thread read back by another process (the Agent Server's workers) still starts over.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.last_value import LastValue

FINISHED = "hybridrag:finished_run"
"""Key of the checkpointed form of a value whose run has finished."""


class PerQuestion(BinaryOperatorAggregate):
    """A reducer channel (``operator(old, new)`` per write) that starts over after a finished run.

    Use it in a state schema as ``Annotated[list[dict], PerQuestion(list, operator.add)]``.
    """

    __slots__ = ("finished",)

    def __init__(self, typ: Any, operator: Callable[[Any, Any], Any]) -> None:
        super().__init__(typ, operator)
        self.finished = False

    def copy(self) -> PerQuestion:
        """A copy carrying the finished mark."""
        out = super().copy()
        out.finished = self.finished
        return out

    def from_checkpoint(self, checkpoint: Any) -> PerQuestion:
        """Restore the value and its finished mark."""
        finished = isinstance(checkpoint, dict) and set(checkpoint) == {FINISHED}
        out = super().from_checkpoint(checkpoint[FINISHED] if finished else checkpoint)
        out.finished = finished
        return out

    def checkpoint(self) -> Any:
        """The value, wrapped as ``{FINISHED: value}`` once its run has finished."""
        value = super().checkpoint()
        return {FINISHED: value} if self.finished and self.is_available() else value

    def update(self, values: Sequence[Any]) -> bool:
        """Reduce the writes into the value; the first write after a finished run starts it over."""
        if values and self.finished:
            self.value = type(self)(self.typ, self.operator).value
            self.finished = False
        return super().update(values)

    def finish(self) -> bool:
        """Mark the value as the finished run's (True: the checkpoint must record the mark)."""
        if self.finished or not self.is_available():
            return False
        self.finished = True
        return True


class ScratchValue(LastValue):
    """A last-value channel for a working key: emptied when the run finishes."""

    def finish(self) -> bool:
        """Drop the value (True: the checkpoint must record it)."""
        if not self.is_available():
            return False
        self.value = type(self)(self.typ).value
        return True


class ScratchAggregate(BinaryOperatorAggregate):
    """A reducer channel for a working key (e.g. results gathered from ``Send`` tasks): emptied
    when the run finishes."""

    def finish(self) -> bool:
        """Start the value over (True: the checkpoint must record it)."""
        empty = type(self)(self.typ, self.operator).value
        if not self.is_available() or self.value == empty:
            return False
        self.value = empty
        return True


def _per_question_channel(name: str, channel: Any, inputs: set[str], outputs: set[str]) -> Any:
    kind = type(channel)
    if name in inputs or kind not in (LastValue, BinaryOperatorAggregate):
        return channel  # the question itself, and channels of LangGraph's other kinds, as they are
    if kind is BinaryOperatorAggregate:
        made = (PerQuestion if name in outputs else ScratchAggregate)(channel.typ, channel.operator)
    elif name in outputs:
        return channel  # answer, ranked, evidence: the next question's nodes write them anew
    else:
        made = ScratchValue(channel.typ)
    made.key = channel.key
    return made


def per_question(builder: Any) -> Any:
    """A copy of a method's ``StateGraph`` builder whose state starts over with each question on a
    checkpointed thread (the builder given is left as it is)."""
    inputs = set(builder.schemas[builder.input_schema])
    outputs = set(builder.schemas[builder.output_schema])
    out = copy.copy(builder)
    out.channels = {name: _per_question_channel(name, ch, inputs, outputs)
                    for name, ch in builder.channels.items()}
    return out

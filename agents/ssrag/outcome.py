"""What one SSRAG step hands back to its graph node: the state update and what to trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    """One step's work.

    Attributes:
        update: the keys of the graph state the step sets.
        decision: one line saying what it decided (the trace entry's ``decision``).
        calls: the LLM usage of its calls ({} when it made none).
        note: why a fallback was taken, or None.
        facts: further details of the trace entry.
    """

    update: dict[str, Any]
    decision: str
    calls: dict = field(default_factory=dict)
    note: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)

"""Prompts as data: templates that declare their inputs, and few-shot example files.

Every template uses ``str.format`` fields (literal braces are doubled) and declares the
exact set of inputs it takes; :meth:`Prompt.format` refuses missing or unexpected values,
and a unit test checks every declared input appears in its template and nothing else does.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXAMPLES_DIR = Path(__file__).parent / "examples"


@dataclass(frozen=True)
class Prompt:
    """One prompt template with its declared input variables."""

    name: str
    template: str
    inputs: tuple[str, ...] = ()

    def fields(self) -> set[str]:
        """Return the field names actually used in the template."""
        return {f for _, f, _, _ in string.Formatter().parse(self.template) if f}

    def format(self, **values: Any) -> str:
        """Fill the template; every declared input must be given and nothing else."""
        missing = set(self.inputs) - set(values)
        extra = set(values) - set(self.inputs)
        if missing or extra:
            raise KeyError(f"prompt {self.name!r}: missing {sorted(missing)}, unexpected {sorted(extra)}")
        return self.template.format(**values)


def examples_path(name: str, override: str | Path | None = None) -> Path:
    """Return ``override`` when given, else the bundled ``prompts/examples/<name>.json``."""
    return Path(override) if override else EXAMPLES_DIR / f"{name}.json"


def load_examples(name: str, override: str | Path | None = None, limit: int | None = None) -> list[dict]:
    """Load a JSON list of few-shot examples (a missing file yields an empty list)."""
    path = examples_path(name, override)
    if not path.exists():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    items = data.get("examples", []) if isinstance(data, dict) else data
    return items[:limit] if limit is not None else items


__all__ = ["EXAMPLES_DIR", "Prompt", "examples_path", "load_examples"]

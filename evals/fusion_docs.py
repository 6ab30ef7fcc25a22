"""docs/benchmarks_fusion.md holds one section per fusion benchmark command; each rewrites its own.

A section starts at its ``## `` heading and runs to the next ``## `` heading (or the end), so
``python -m evals.bench_fusion`` (speed) and ``python -m evals.fusion_ranking`` (ranking) can
each be re-run without erasing the other's numbers.
"""

from __future__ import annotations

from pathlib import Path

DOC = Path("docs") / "benchmarks_fusion.md"


def replace_section(document: str, section: str) -> str:
    """``document`` with the section titled like ``section``'s first line replaced (or appended)."""
    heading = section.splitlines()[0] if section.strip() else ""
    if not heading.startswith("## "):
        raise ValueError(f"a section starts with a '## ' heading, got {heading[:60]!r}")
    lines = document.splitlines()
    body = section.rstrip("\n").splitlines()
    if heading not in lines:
        return "\n".join([*lines, "", *body] if lines else body) + "\n"
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tail = ["", *lines[end:]] if end < len(lines) else []
    return "\n".join([*lines[:start], *body, *tail]) + "\n"


def write_section(path: Path, section: str) -> None:
    """Rewrite one section of the markdown file at ``path``, keeping every other section."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(replace_section(old, section), encoding="utf-8")

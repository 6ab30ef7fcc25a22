"""The markdown of every report: its header (command, date, commit, machine), tables, and rewriting part of a page.

A benchmark's page starts with :func:`header`; a page several commands share is rewritten one
``## `` section at a time (:func:`write_section`), a page with hand-written text around a table
between two markers (:func:`write_between`), or above a marker line (:func:`write_above`).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commit() -> str:
    """The short commit checked out, ``-dirty`` when tracked files differ from it (``unknown`` outside git)."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("-dirty" if dirty else "")


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what :mod:`platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance() -> dict:
    """Date (UTC), commit and machine (cores, CPU) of a run."""
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
        "machine": {"cores": os.cpu_count(), "cpu": cpu_name(), "gpu": "none used"},
    }


def machine(info: dict) -> str:
    """``2 cores, AMD EPYC, no GPU`` from a :func:`provenance`."""
    m = info["machine"]
    return f"{m['cores']} cores, {m['cpu']}, no GPU"


def header(title: str, command: str, info: dict | None = None, lines: Iterable[str] = (), level: int = 1) -> list[str]:
    """The first lines of a report: its title, the command that wrote it, date, commit and machine.

    Args:
        title: The heading's text.
        command: The command that reproduces the report.
        info: A :func:`provenance` (taken now when None).
        lines: More bullet lines (without the leading ``- ``), after the machine's.
        level: 1 for a page, 2 for a section of a shared page.
    """
    info = info or provenance()
    return [
        f"{'#' * level} {title}",
        "",
        f"- Command: `{command}`",
        f"- Date: {info['date']}; commit `{info['commit']}`; machine: {machine(info)}",
        *(f"- {line}" for line in lines),
        "",
    ]


def cell(value: object) -> str:
    """``value`` as one table cell: on one line, ``|`` escaped."""
    return " ".join(str(value).split()).replace("|", "\\|")


def table(head: Sequence[str], rows: Iterable[Sequence[object] | str]) -> list[str]:
    """A markdown table: the header, its rule, one line per row (a row given as text is kept as it is)."""
    out = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    out += [r if isinstance(r, str) else "| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def replace_section(document: str, section: str) -> str:
    """``document`` with the section titled like ``section``'s first line replaced (or appended).

    A section starts at its ``## `` heading and runs to the next ``## `` heading (or the end).
    """
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


def write_between(path: Path, start: str, end: str, block: str) -> None:
    """Replace what lies between the marker lines ``start`` and ``end`` of ``path`` with ``block``."""
    text = path.read_text(encoding="utf-8")
    if start not in text or end not in text:
        raise ValueError(f"{path} has no {start} ... {end} markers")
    before, rest = text.split(start, 1)
    after = rest.split(end, 1)[1]
    path.write_text(f"{before}{start}\n{block}\n{end}{after}", encoding="utf-8")


def write_above(path: Path, text: str, marker: str) -> None:
    """Write ``text`` then ``marker`` to ``path``, keeping whatever followed ``marker`` in the old file."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    kept = old.split(marker, 1)[1] if marker in old else "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n" + marker + kept, encoding="utf-8")


def write_page(path: Path, lines: Iterable[str]) -> str:
    """Write ``lines`` as the page at ``path`` (folders created); return the text."""
    text = "\n".join(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return text

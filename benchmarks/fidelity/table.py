"""The "realistic stand-in" column of docs/architecture.md's fidelity table, from the suite's cells.

A row measured by :data:`benchmarks.fidelity.rows.ROWS` (matched by the start of its component
cell) gets its default-vs-paper figures under the realistic stand-in with a link to
docs/benchmarks_fidelity.md; a row of that list without finished cells says ``not run``;
fusion's rows ``n/a (no LLM call)``; every other row ``—`` (no default-vs-paper measurement).
Only that column's cells change; the other cells of every row are kept as they are.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.fidelity.page import ANCHOR, pairs
from benchmarks.fidelity.rows import NOT_LLM, ROWS, Row

HEADING = "## Paper fidelity: every component"
COLUMN = "realistic stand-in (SmolLM2's error rates)"
LINK = f"[docs/benchmarks_fidelity.md](benchmarks_fidelity.md#{ANCHOR})"


def figures(r: Row, runs: Path, limit: int) -> str:
    """``metaqa-hybrid-50: default 0.953, `x=y` 0.577 (hit@1, n=300)`` per dataset; ``not run`` without cells."""
    parts = []
    for d, a, b, drawn in pairs(r, runs, limit):
        if a is None or b is None:
            parts.append(f"{d}: not run")
            continue
        x, y = a["metrics"][r.metric], b["metrics"][r.metric]
        text = f"{d}: default {x:.3f}, `{r.paper}` {y:.3f} ({r.metric}, n={a['n']})"
        if not drawn:
            text += ", no error drawn at this hop count: equal to the perfect stand-in"
        if y - x >= 0.5 / a["n"] and not r.default_is_paper:
            text += ": the paper's setting is better here, reversing the default's advantage"
        elif y - x >= 0.5 / a["n"]:
            text += f": `{r.paper}` (not the default) is better here"
        parts.append(text)
    if all(p.endswith("not run") for p in parts):
        return "not run"
    return "; ".join(parts) + f" ({LINK})"


def cell_for(component: str, runs: Path, limit: int) -> str:
    """The column's cell of the row whose component cell is ``component``."""
    for r in ROWS:
        if component.startswith(r.component):
            return figures(r, runs, limit)
    return "n/a (no LLM call)" if component.startswith(NOT_LLM + ":") else "—"


def _cells(line: str) -> list[str]:
    """A table line's cells; a ``|`` inside backticks is text."""
    cells, cur, ticked = [], "", False
    for ch in line.strip().strip("|"):
        ticked ^= ch == "`"
        if ch == "|" and not ticked:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [*cells, cur.strip()]


def refresh(text: str, runs: Path, limit: int) -> str:
    """``text`` (docs/architecture.md) with the fidelity table's realistic-stand-in column set from ``runs``."""
    head, sep, rest = text.partition(HEADING)
    if not sep:
        raise ValueError(f"no {HEADING!r} in the architecture page")
    section, nxt, tail = rest.partition("\n## ")
    out, row_no = [], 0
    for line in section.split("\n"):
        if not line.startswith("|"):
            out.append(line)
            continue
        cells = _cells(line)[:4]
        if row_no == 0:
            cells.append(COLUMN)
        elif row_no == 1:
            cells = ["---"] * 5
        else:
            cells.append(cell_for(cells[0], runs, limit))
        row_no += 1
        out.append("| " + " | ".join(cells) + " |" if row_no != 2 else "|---|---|---|---|---|")
    return head + sep + "\n".join(out) + nxt + tail


def write(path: Path, runs: Path, limit: int) -> None:
    """Refresh the column in the architecture page at ``path`` (re-read just before writing)."""
    path.write_text(refresh(path.read_text(encoding="utf-8"), runs, limit), encoding="utf-8")

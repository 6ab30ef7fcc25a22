"""docs/architecture.md's "Paper fidelity: every component" table stays true to the code and the docs.

How the table is read (the conventions its rows are written in):

- code column: a backticked path (``agents/mor/plan.py``, a folder ``agents/shots/``, a sibling
  ``matching.py``) must exist; a backticked name after it (``route``, ``initial.detect`` in a
  sibling module, ``Bank.nearest`` on a class) must be an attribute of that module, found by
  importing it; a backticked name in parentheses may instead be a setting of the row's method;
- anywhere: a backticked ``name=value`` names a setting of the row's method(s); ``default
  `name=value``` quotes the default, which must equal the field's default in
  ``agents/<method>/context.py``;
- a row whose verdict starts with "ours" names the measurement that justifies it as a section of
  a doc: ``docs/x.md#anchor`` (a heading's anchor), ``docs/x.md §N`` (a heading numbered N) or
  ``docs/x.md "Heading words"``; every such reference anywhere in the table must exist;
- the fifth column is the realistic stand-in's (``python -m benchmarks fidelity-realistic``): every
  row the suite measures (:data:`benchmarks.fidelity.rows.ROWS`) shows its figures as the page
  docs/benchmarks_fidelity.md has them, linked to it, or ``not run``; fusion's rows ``n/a``; the
  others ``—``.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTEXTS = {
    "fusion": "hybridrag.agents.fusion.context:FusionContext",
    "hybgrag": "hybridrag.agents.hybgrag.context:HybGRAGContext",
    "mor": "hybridrag.agents.mor.context:MoRContext",
    "hydrarag": "hybridrag.agents.hydrarag.context:HydraRAGContext",
    "ssrag": "hybridrag.agents.ssrag.context:SSRAGContext",
}
TICK = re.compile(r"`([^`]+)`")
SETTING = re.compile(r"^(\w+)=(\S+)$")
DEFAULT = re.compile(r"\bdefaults?:? `(\w+)=([^`\s]+)`")
NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?$")
FILE = re.compile(r"(\.(py|json|jsonl|npz|md|toml|txt)|/)$")
DOC_REF = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+)| §(\d+)| \"([^\"]+)\")?")


def table_rows() -> list[list[str]]:
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    section = text.split("## Paper fidelity: every component", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")][2:]  # past the header and its rule
    return [split_row(ln) for ln in lines]


def split_row(line: str) -> list[str]:
    """Cells of a table line; a ``|`` inside backticks is text."""
    cells, cur, ticked = [], "", False
    for ch in line.strip().strip("|"):
        ticked ^= ch == "`"
        if ch == "|" and not ticked:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [*cells, cur.strip()]


def methods_of(component: str) -> list[str]:
    head = component.split(":", 1)[0]
    named = [m for m in CONTEXTS if re.search(rf"\b{m}\b", head)]
    return named or list(CONTEXTS)


def context_fields(method: str) -> dict[str, object]:
    module, cls = CONTEXTS[method].split(":")
    out = {}
    for f in dataclasses.fields(getattr(importlib.import_module(module), cls)):
        out[f.name] = f.default if f.default is not dataclasses.MISSING else None
    return out


def module_of(path: str):
    rel = path.removesuffix(".py").removesuffix("/").replace("/", ".")
    return importlib.import_module(f"hybridrag.{rel}")


def has_name(path: str, name: str) -> bool:
    """``name`` (``f``, ``Class.attr`` or ``sibling.f``) exists in the module or package at ``path``."""
    first, _, rest = name.partition(".")
    mod = module_of(path)
    if hasattr(mod, first):
        obj = getattr(mod, first)
        return not rest or hasattr(obj, rest)
    sibling = (Path(path).parent if path.endswith(".py") else Path(path)) / f"{first}.py"
    return bool(rest) and (ROOT / sibling).is_file() and hasattr(module_of(str(sibling)), rest)


def code_refs(cell: str) -> list[tuple[str, str | None, bool]]:
    """``(token, current path, in parentheses)`` for each backticked token of the code column."""
    out, path, depth, at = [], None, 0, 0
    for m in TICK.finditer(cell):
        gap = cell[at : m.start()]
        depth = max(0, depth + gap.count("(") - gap.count(")"))
        at = m.end()
        token = m.group(1)
        if FILE.search(token):
            if "/" not in token and path:  # a sibling file: `matching.py`
                token = str(Path(path).parent / token)
            path = token
        out.append((token, path, depth > 0))
    return out


ROWS = table_rows()
IDS = [r[0][:60] for r in ROWS]


def test_the_table_is_found_and_every_row_has_five_cells():
    assert len(ROWS) > 40
    assert all(len(r) == 5 for r in ROWS), [r[0] for r in ROWS if len(r) != 5]


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_every_file_and_function_the_code_column_names_exists(row):
    component, code = row[0], row[2]
    settings = {name for m in methods_of(component) for name in context_fields(m)}
    for token, path, in_parens in code_refs(code):
        if path == token:
            assert (ROOT / token).exists(), f"{component}: no file {token}"
        elif NAME.match(token) and path and path.endswith((".py", "/")) and not path.startswith("scripts/"):
            ok = has_name(path, token) or (in_parens and token in settings)
            assert ok, f"{component}: `{token}` is not in {path}" + (" nor a setting" if in_parens else "")


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_every_setting_named_exists_and_every_quoted_default_is_the_code_default(row):
    component, text = row[0], " | ".join(row)
    fields = [context_fields(m) for m in methods_of(component)]
    for token in TICK.findall(text):
        if (m := SETTING.match(token)) and not token.startswith("HYBRIDRAG_"):
            assert any(m.group(1) in f for f in fields), f"{component}: `{token}` names no setting"
    for name, value in DEFAULT.findall(text):
        for f in fields:
            if name in f:
                assert _same(f[name], value), f"{component}: default `{name}={value}`, the code says {f[name]!r}"


def _same(default: object, quoted: str) -> bool:
    if isinstance(default, bool):
        return quoted.lower() == str(default).lower()
    if isinstance(default, int | float):
        return float(quoted) == float(default)
    return str(default) == quoted


def anchors(doc: str) -> list[str]:
    """A doc's heading texts."""
    lines = (ROOT / "docs" / doc).read_text(encoding="utf-8").splitlines()
    return [ln.lstrip("#").strip() for ln in lines if ln.startswith("#")]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def section_exists(doc: str, anchor: str, number: str, words: str) -> bool:
    heads = anchors(doc)
    if anchor:
        return anchor in {slug(h) for h in heads}
    if number:
        return any(re.match(rf"{number}[.)\s]", h) for h in heads)
    return any(words.lower() in h.lower() for h in heads)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_every_doc_section_named_exists_and_every_ours_row_names_one(row):
    component, verdict = row[0], row[3]
    refs = DOC_REF.findall(" | ".join(row))
    for doc, anchor, number, words in refs:
        assert (ROOT / "docs" / doc).is_file(), f"{component}: no docs/{doc}"
        if anchor or number or words:
            assert section_exists(doc, anchor, number, words), f"{component}: no section {anchor or number or words}"
    if verdict.lower().startswith("ours"):
        assert any(a or n or w for _, a, n, w in refs), f"{component}: an 'ours' row names no benchmark section"


FIGURE = re.compile(r"([\w-]+): default ([\d.]+), `([^`]+)` ([\d.]+)")


def test_every_measured_row_shows_the_realistic_stand_ins_figures_as_its_page_has_them():
    from benchmarks.fidelity.page import ANCHOR
    from benchmarks.fidelity.rows import NOT_LLM
    from benchmarks.fidelity.rows import ROWS as MEASURED

    page = (ROOT / "docs/benchmarks_fidelity.md").read_text(encoding="utf-8").splitlines()
    assert ANCHOR in {slug(h) for h in anchors("benchmarks_fidelity.md")}
    for r in MEASURED:
        matched = [row for row in ROWS if row[0].startswith(r.component)]
        assert len(matched) == 1, f"{r.key}: {len(matched)} table rows start with {r.component!r}"
        cell = matched[0][4]
        if cell == "not run":
            continue
        assert f"(benchmarks_fidelity.md#{ANCHOR})" in cell, f"{r.key}: no link to the page"
        for dataset, x, setting, y in FIGURE.findall(cell):
            assert setting == r.paper and dataset in r.datasets, f"{r.key}: {dataset} `{setting}`"
            for shown, value in (("default", x), (f"`{setting}`", y)):
                line = next((ln for ln in page if ln.startswith(f"| {r.key} | {dataset} | {shown} |")), "")
                assert f"| {value} |" in line, f"{r.key} {dataset} {shown}: {value} is not on the page"
    keys = [r.component for r in MEASURED]
    for row in ROWS:
        if not any(row[0].startswith(k) for k in keys):
            assert row[4] == ("n/a (no LLM call)" if row[0].startswith(NOT_LLM + ":") else "—"), row[0]


def test_the_checks_catch_what_they_are_for():
    assert not has_name("tools/text_hops.py", "text_hops")  # the name the table once gave
    assert has_name("tools/text_hops.py", "text_steps") and has_name("agents/shots/", "Bank.nearest")
    assert not _same(5, "20") and _same(True, "true") and _same("kb", "kb")
    assert section_exists("benchmarks_mor.md", "", "5", "") and not section_exists("benchmarks_mor.md", "nope", "", "")
    assert split_row("| a | `x|y` | c |") == ["a", "`x|y`", "c"]
    assert DEFAULT.findall("(default `radius=0`, `k=1`); defaults: `a=b`") == [("radius", "0"), ("a", "b")]
    assert [t for t, _, p in code_refs("`a/b.py` `f`, `c.py` (`s`)") if p] == ["s"]
    assert code_refs("`a/b.py` `f`, `c.py`")[-1][0] == "a/c.py"
    assert [p for _, p, _ in code_refs("`a/b.json` `x/y.f`")] == ["a/b.json", "a/b.json"]

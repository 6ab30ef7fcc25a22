"""The benchmark runner: one table of suites, each with options, a quick form and the page it writes."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import pytest

from benchmarks.__main__ import listing, main
from benchmarks.suites import QUICK, SUITES, suite

ROOT = Path(__file__).resolve().parents[2]


def _parser(s) -> argparse.ArgumentParser:
    module = importlib.import_module(s.module)
    parser = argparse.ArgumentParser(prog=s.name)
    for flags, options in module.OPTIONS:
        parser.add_argument(*flags, **options)
    assert callable(module.run), s.name
    return parser


@pytest.mark.parametrize("s", SUITES, ids=lambda s: s.name)
def test_every_suite_parses_its_quick_form_and_names_an_existing_page(s):
    args = _parser(s).parse_args(s.quick)
    assert (ROOT / s.doc.split()[0]).is_file(), s.doc
    written = [v for v in vars(args).values() if isinstance(v, str | Path) and str(v).startswith("docs/")]
    assert not written, f"the quick form of {s.name} writes under docs/: {written}"
    assert not any(a.startswith("docs") for a in s.quick)
    if any(flag in s.quick for flag in ("--out", "--md")):
        assert all(QUICK in a for a, flag in zip(s.quick[1:], s.quick, strict=False) if flag in ("--out", "--md"))


def test_list_shows_every_suite_with_its_page(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert out == listing() + "\n"
    for s in SUITES:
        assert s.name in out and s.doc in out


def test_an_unknown_suite_is_one_clear_line(capsys):
    assert main(["no-such-suite"]) == 2
    assert "no suite 'no-such-suite'; one of quality" in capsys.readouterr().err
    with pytest.raises(KeyError):
        suite("nope")


def test_every_benchmark_page_says_which_suite_wrote_it():
    pages = sorted((ROOT / "docs").glob("benchmarks*.md")) + [ROOT / "docs" / "reliability.md"]
    silent = [
        p.name
        for p in pages
        if "python -m benchmarks" not in "\n".join(p.read_text(encoding="utf-8").splitlines()[:8])
        and "No suite" not in p.read_text(encoding="utf-8")[:600]
    ]
    assert not silent, silent

"""Prompts are data: every declared input appears in its template, and nothing else does."""

from __future__ import annotations

import json

import pytest

from prompts import EXAMPLES_DIR, Prompt, load_examples
from prompts import hybgrag as P


@pytest.mark.parametrize("prompt", P.ALL, ids=lambda p: p.name)
def test_declared_inputs_match_template(prompt: Prompt):
    assert prompt.fields() == set(prompt.inputs)


def test_format_refuses_missing_and_extra():
    with pytest.raises(KeyError):
        P.VALIDATOR.format(question="q")
    with pytest.raises(KeyError):
        P.VALIDATOR.format(question="q", references="r", extra="x")


def test_example_files_are_well_formed():
    router = load_examples("hybgrag_router")
    assert len(router) == 10
    for ex in router:
        assert set(ex) >= {"question", "entities", "relations", "module"}
        assert ex["module"] in ("hybrid", "text")
    bank = json.loads((EXAMPLES_DIR / "hybgrag_experience.json").read_text())
    for ex in bank["examples"]:
        assert set(ex) >= {"question", "module", "entities", "relations", "error_type", "feedback"}


def test_load_examples_limit_and_missing(tmp_path):
    assert load_examples("hybgrag_router", limit=3) == load_examples("hybgrag_router")[:3]
    assert load_examples("x", override=tmp_path / "missing.json") == []

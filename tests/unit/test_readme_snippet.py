"""The ```python blocks of README.md's "## Python API" section run as written.

The blocks run in order in one namespace. The one LLM call site (hybgrag with
``local:smollm2``) is answered by a scripted fake registered under that spec, as every
unit test does; the real SmolLM2 runs in tests/integration.
"""

from __future__ import annotations

import re
from pathlib import Path

from fake_chat import ScriptedChatModel

from hybridrag.agents.hybgrag.roles import RouterAction
from hybridrag.agents.llm.models import forget_model, register_model

README = Path(__file__).resolve().parents[2] / "README.md"


def python_api_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## Python API\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "README.md has no '## Python API' section"
    return re.findall(r"^```python\n(.*?)^```", section.group(1), re.S | re.M)


def test_python_api_section_covers_the_interfaces():
    code = "\n".join(python_api_blocks())
    assert 'get_graph("fusion")' in code and "context=" in code
    assert 'stream_mode="updates"' in code
    assert 'context_for("fusion", kb=' in code and 'context_for("hybgrag"' in code and "llm=" in code


def test_python_api_snippets_run(capsys):
    fake = ScriptedChatModel(
        script=[
            RouterAction(module="text"),  # the validator of a local model decides by rule (judge=auto)
        ]
    )
    register_model("local:smollm2", fake)
    namespace: dict = {"__name__": "readme"}
    try:
        for i, block in enumerate(python_api_blocks()):
            exec(compile(block, f"README.md:Python API block {i + 1}", "exec"), namespace)
    finally:
        forget_model("local:smollm2")
    assert not fake.script, "the hybgrag snippet did not make the expected LLM calls"
    printed = capsys.readouterr().out
    assert "fusion" in printed and "retrieve_vectors" in printed
    assert namespace["out"]["usage"]["llm_calls"] == 1
    assert set(namespace["out"]) >= {"answer", "ranked", "evidence", "trace", "usage"}
    # the KB switch took effect: fusion answered from the two-triple KB built in the snippet
    assert "\nPenny Marshall\n" in printed

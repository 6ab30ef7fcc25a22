"""The code shown in docs/retrievers.md and README.md's retriever snippets runs as shown."""

from __future__ import annotations

import re
from pathlib import Path

from hybridrag.app.cli import main

ROOT = Path(__file__).resolve().parents[2]

README_PYTHON = """\
from hybridrag.app.retriever import as_tool, get_retriever

docs = get_retriever("fusion", top_k=3).invoke("who directed Forrest Gump")
print(docs[0].page_content, docs[0].metadata["source"], round(docs[0].metadata["score"], 3))
tool = as_tool("fusion")  # hand it to your agent's ToolNode / create_react_agent
"""

README_CLI = 'hybridrag ask "who directed Forrest Gump" --set mode=vector --set top_k=3'


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def test_readme_shows_these_snippets():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert README_PYTHON in readme and README_CLI in readme


def test_readme_python_snippet(capsys):
    exec(compile(README_PYTHON, "README", "exec"), {})
    assert capsys.readouterr().out.startswith("Forrest Gump → directed by → Robert Zemeckis kg ")


def test_readme_cli_snippet(capsys):
    import shlex

    argv = shlex.split(README_CLI)
    assert argv[0] == "hybridrag" and main(argv[1:]) == 0
    lines = capsys.readouterr().out.splitlines()
    items = [x for x in lines if x[:4].strip().rstrip(".").isdigit()]  # numbered items; evidence lines below each
    assert lines[0].startswith("answer:") and len(items) == 3 and all("[doc " in x for x in items)


def test_docs_retrievers_examples_run(capsys):
    blocks = python_blocks(ROOT / "docs" / "retrievers.md")
    retriever_block, tool_block = blocks[0], next(b for b in blocks if "as_tool(" in b and "import" in b)
    exec(compile(retriever_block, "docs/retrievers.md", "exec"), {})
    assert "1 kg " in capsys.readouterr().out
    scope: dict = {}
    exec(compile(tool_block, "docs/retrievers.md", "exec"), scope)
    assert scope["tool"].invoke({"query": "who directed Forrest Gump"}).startswith("[kg ")


def readme_block(containing: str) -> str:
    """The README's ```python block that contains ``containing`` (exactly one)."""
    found = [b for b in python_blocks(ROOT / "README.md") if containing in b]
    assert len(found) == 1, f"README.md: {len(found)} python blocks contain {containing!r}"
    return found[0]


def test_readme_human_in_the_loop_snippet(capsys):
    """The approval snippet runs as written; the one LLM it names is a scripted fake here."""
    from fake_chat import ScriptedChatModel

    from hybridrag.agents.hybgrag.roles import RouterAction, TopicEntity
    from hybridrag.agents.llm.models import forget_model, register_model

    hybrid = RouterAction(module="hybrid", entities=[TopicEntity(name="Big", type="movie")], relations=["directed_by"])
    fake = ScriptedChatModel(script=[hybrid])  # the validator of a local model decides by rule (judge=auto)
    register_model("local:smollm2", fake)
    try:
        exec(compile(readme_block("approve=True"), "README:human in the loop", "exec"), {})
    finally:
        forget_model("local:smollm2")
    assert not fake.script, "the snippet did not reach the router"
    proposed, answered = capsys.readouterr().out.splitlines()
    assert proposed == "hybrid", "the pause shows the router's action"
    nodes = ["route_question", "approve_action", "retrieve_hybrid", "validate_retrieval"]
    assert answered == f"Penny Marshall {nodes}", "approved, the router's relation path answers"


def test_readme_swap_a_retriever_snippet(capsys):
    """The snippet replacing HybGRAG's dense_search with a user's retriever runs as written; the route
    (the text module) comes from a scripted fake standing for the default local model."""
    from fake_chat import ScriptedChatModel

    from hybridrag.agents.hybgrag.roles import RouterAction
    from hybridrag.agents.llm.models import forget_model, register_model

    text = RouterAction(module="text", entities=[], relations=[])
    fake = ScriptedChatModel(script=[text] * 4)
    register_model("local:smollm2", fake)
    try:
        exec(compile(readme_block("class MyRetriever"), "README:swap a retriever", "exec"), {})
    finally:
        forget_model("local:smollm2")
    assert capsys.readouterr().out.strip() == "Big doc"

"""What an image build or a `langgraph dev` run must not drag into the project (issue 14)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lines(name: str) -> set[str]:
    return {line.strip() for line in (ROOT / name).read_text(encoding="utf-8").splitlines() if line.strip()}


def test_an_image_build_leaves_out_the_venv_runs_and_server_state():
    ignored = _lines(".dockerignore")
    assert {".venv/", ".git/", ".langgraph_api/", "eval-runs/"} <= ignored


def test_git_ignores_what_the_agent_server_and_evals_write():
    ignored = _lines(".gitignore")
    assert ".langgraph_api/" in ignored and any(p.strip("/") == "eval-runs" for p in ignored)

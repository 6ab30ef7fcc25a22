"""Imports point down the layers, and a method's package never imports another method's package."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["kb", "tools", "prompts", "agents", "graphs", "evals", "app"]  # lowest first
METHODS = {"fusion", "hybgrag", "mor", "hydrarag", "ssrag"}


def imports(path: Path) -> list[str]:
    """Every module a file imports (top level and inside functions), absolute names."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def project_files():
    for layer in LAYERS:
        yield from (p for p in (ROOT / layer).rglob("*.py") if ".venv" not in p.parts)


def test_no_layer_imports_a_layer_above_it():
    bad = []
    for path in project_files():
        own = LAYERS.index(path.relative_to(ROOT).parts[0])
        for name in imports(path):
            top = name.split(".")[0]
            if top in LAYERS and LAYERS.index(top) > own:
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_method_packages_import_no_other_method():
    bad = []
    for method in METHODS:
        for path in (ROOT / "agents" / method).rglob("*.py"):
            for name in imports(path):
                parts = name.split(".")
                if parts[0] == "agents" and len(parts) > 1 and parts[1] in METHODS - {method}:
                    bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_the_rule_catches_an_upward_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from graphs import get_graph\n    from agents.mor import plan\n")
    assert {"hybridrag.graphs.get_graph", "hybridrag.agents.mor.plan"} <= set(imports(probe))

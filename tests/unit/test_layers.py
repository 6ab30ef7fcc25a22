"""The package's shape: imports point down the layers, one home per method, no import cycle."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "hybridrag"
LAYERS = ["kb", "tools", "prompts", "agents", "graphs", "evals", "app"]  # lowest first
METHODS = {"fusion", "hybgrag", "mor", "hydrarag", "ssrag"}
GRAPHS_MODULES = {"__init__", "runtime", "approval", "threads", "rewire", "chat", *METHODS}


def imports(path: Path) -> list[str]:
    """Every module a file imports (top level and inside functions), absolute names."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def own(name: str) -> list[str] | None:
    """The parts of a first-party module name after ``hybridrag.``; None for any other module."""
    parts = name.split(".")
    return parts[1:] if parts[0] == PACKAGE and len(parts) > 1 else None


def project_files():
    for layer in LAYERS:
        yield from (p for p in (ROOT / layer).rglob("*.py") if ".venv" not in p.parts)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def test_no_layer_imports_a_layer_above_it():
    bad = []
    for path in project_files():
        layer = LAYERS.index(path.relative_to(ROOT).parts[0])
        for name in imports(path):
            parts = own(name)
            if parts and parts[0] in LAYERS and LAYERS.index(parts[0]) > layer:
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_every_first_party_import_goes_through_the_namespace():
    """``from graphs import ...`` would import a second copy (or a user's own ``graphs``)."""
    bad = []
    for path in [*project_files(), *(ROOT / "tests").rglob("*.py")]:
        bad += [f"{path.relative_to(ROOT)} imports {n}" for n in imports(path) if n.split(".")[0] in LAYERS]
    assert not bad, "\n".join(bad)


def test_method_packages_import_no_other_method():
    bad = []
    for method in METHODS:
        for path in (ROOT / "agents" / method).rglob("*.py"):
            for name in imports(path):
                parts = own(name) or []
                if parts[:1] == ["agents"] and len(parts) > 1 and parts[1] in METHODS - {method}:
                    bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_each_method_has_one_home():
    """``agents/<method>/`` holds its settings (context.py) and its retrieval steps as tools (tools.py)."""
    missing = [
        f"agents/{m}/{f}"
        for m in sorted(METHODS)
        for f in ("context.py", "tools.py")
        if not (ROOT / "agents" / m / f).is_file()
    ]
    assert not missing, missing


def test_graphs_holds_wiring_only():
    extra = {p.stem for p in (ROOT / "graphs").glob("*.py")} - GRAPHS_MODULES
    assert not extra, f"graphs/ holds only {sorted(GRAPHS_MODULES)}; move {sorted(extra)} to agents/ or app/"


def test_graphs_import_nothing_from_app():
    bad = [
        f"{p.relative_to(ROOT)} imports {n}"
        for p in (ROOT / "graphs").rglob("*.py")
        for n in imports(p)
        if (own(n) or [""])[0] == "app"
    ]
    assert not bad, "\n".join(bad)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the first-party modules it imports (a ``from m import name`` counts as ``m``,
    or as ``m.name`` when that is a module)."""
    modules = {module_name(p): p for p in project_files()}
    graph: dict[str, set[str]] = {}
    for mod, path in modules.items():
        deps = set()
        for name in imports(path):
            if name in modules:
                deps.add(name)
            elif name.rpartition(".")[0] in modules:
                deps.add(name.rpartition(".")[0])
        graph[mod] = deps - {mod}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle (as a list of modules), or [] when there is none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return stack[stack.index(dep) :] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_import_cycle_in_the_package():
    """Imports inside functions count too: a cycle hidden in a function is still a cycle.

    A package's ``__init__`` importing its own submodules is not a cycle of the design, so
    a module's import of its own package ``__init__`` is left out.
    """
    graph = _import_graph()
    graph = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}
    cycle = _cycle(graph)
    assert not cycle, " -> ".join(cycle)


def test_the_rules_catch_an_upward_import_and_a_cycle(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f():\n    from hybridrag.graphs import get_graph\n    from hybridrag.agents.mor import plan\n"
    )
    assert {"hybridrag.graphs.get_graph", "hybridrag.agents.mor.plan"} <= set(imports(probe))
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_the_wheel_lists_every_package():
    """pyproject lists the subpackages by hand (the root is the package): a new folder must be added there."""
    import re

    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("packages = [", 1)[1].split("]", 1)[0]
    listed = set(re.findall(r'"(hybridrag[\w.]*)"', text))
    found = {PACKAGE} | {
        module_name(p) for layer in LAYERS for p in (ROOT / layer).rglob("__init__.py") if ".venv" not in p.parts
    }
    assert listed == found, f"missing: {sorted(found - listed)}; not a package: {sorted(listed - found)}"

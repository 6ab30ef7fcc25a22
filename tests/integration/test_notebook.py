"""notebooks/quickstart.ipynb is in sync with its generator and runs top to bottom."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbclient  # noqa: E402,F401
import nbformat  # noqa: E402
import pytest

pytestmark = pytest.mark.integration

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOK = NOTEBOOKS / "quickstart.ipynb"


def load_generator():
    spec = importlib.util.spec_from_file_location("make_quickstart", NOTEBOOKS / "make_quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_notebook_matches_its_generator():
    committed = nbformat.read(str(NOTEBOOK), as_version=4)
    built = load_generator().build()
    assert [(c.cell_type, c.source) for c in committed.cells] == [(c.cell_type, c.source) for c in built.cells], (
        "run: python notebooks/make_quickstart.py"
    )
    assert all(not c.get("outputs") for c in committed.cells if c.cell_type == "code"), "commit it without outputs"


def test_quickstart_notebook_executes(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    if importlib.util.find_spec("ipykernel") is None:
        pytest.skip("needs ipykernel (pip install 'hybridrag[test]')")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebook's working folder lands here
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    # kernel "python3" resolves to this interpreter (jupyter_client swaps "python" for sys.executable)
    NotebookClient(nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.write(nb, str(tmp_path / "quickstart.executed.ipynb"))

    text, images = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"{out.get('ename')}: {out.get('evalue')}"
            if out.output_type == "stream" and out.name == "stdout":
                text.append(out.text)
            images += "image/png" in out.get("data", {})
    printed = "".join(text)
    assert "'entities': 15" in printed and "'triples': 15" in printed
    assert "fusion answer:" in printed and "hybgrag answer:" in printed
    assert "route_question:" in printed and "retrieve_vectors:" in printed  # both traces read
    assert "expand_seeds ->" in printed  # streamed node updates
    assert "fusion: Hit@5" in printed and "vector baseline: Hit@5" in printed and "errors 0" in printed
    assert images >= 1, "the summary plot was not displayed"

"""The wheel installs one top-level package, ``hybridrag``, that works beside a user's own packages.

A user's project often has its own ``tools/``, ``app/`` or ``kb/``: an install that added such
generic names would shadow them or be shadowed (``from graphs import get_graph`` then failing on
``tools.dice``). The wheel is built from this checkout and installed into a fresh virtual
environment, whose dependencies come from this environment's site-packages (a plain path in a
``.pth`` file: the checkout's editable install stays invisible there).
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
USER_PACKAGES = ("tools", "app", "kb", "graphs")

QUERY = """
import app, kb, tools, graphs
assert (app.WHOSE, kb.WHOSE, tools.WHOSE, graphs.WHOSE) == ("user",) * 4
import hybridrag
from hybridrag.graphs import get_graph
assert "site-packages" in hybridrag.__file__, hybridrag.__file__
out = get_graph("fusion").invoke({"question": "who directed Forrest Gump"})
print(out["answer"])
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools never deletes stale files there: build clean
    try:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "-w",
                str(out),
                str(ROOT),
            ],
            check=True,
            timeout=600,
            capture_output=True,
        )
    finally:
        shutil.rmtree(ROOT / "build", ignore_errors=True)
    return next(out.glob("hybridrag-*.whl"))


def test_the_wheel_holds_one_top_level_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"hybridrag"}
    assert "hybridrag/graphs/fusion.py" in names and "hybridrag/kb/sample/triples.txt" in names
    assert not any(n.startswith(("hybridrag/tests/", "hybridrag/benchmarks/", "hybridrag/docs/")) for n in names)


def test_the_installed_wheel_answers_beside_a_project_with_its_own_tools_app_kb(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site_dir = next((env_dir / "lib").glob("python3*/site-packages"))
    (site_dir / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    project = tmp_path / "project"
    for name in USER_PACKAGES:
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text('WHOSE = "user"\n')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    run = subprocess.run([str(python), "-c", QUERY], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "Robert Zemeckis"

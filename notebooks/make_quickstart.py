"""Write notebooks/quickstart.ipynb (without outputs) from the cells below.

Run ``python notebooks/make_quickstart.py`` after editing; tests/integration/test_notebook.py
checks the notebook is in sync with this script and executes it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOK = Path(__file__).with_name("quickstart.ipynb")

CELLS: list[tuple[str, str]] = [
    (
        "md",
        """\
# hybridrag quickstart

Build a small knowledge base (a few movie triples and passages), ask the same question
with two methods (`fusion`, training-free KG + text fusion, and `hybgrag`, an LLM router
with a critic loop, here on the bundled offline SmolLM2), read their traces, then
evaluate a method on a handful of questions and plot the summary.

Everything runs offline: the embedding model and SmolLM2 ship as Python packages.""",
    ),
    (
        "code",
        """\
import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

work = Path(tempfile.mkdtemp(prefix="hybridrag-quickstart-"))
print("working folder:", work)""",
    ),
    (
        "md",
        """\
## 1. Ingest a small KB

Triples as `head|relation|tail` (the MetaQA format), passages as JSONL, and a map from
relation to entity types. `hybridrag ingest` does the same from the command line.""",
    ),
    (
        "code",
        """\
from hybridrag.kb.ingest import ingest
from hybridrag.kb.sample import TYPE_MAP

triples = \"\"\"\\
Big|directed_by|Penny Marshall
Big|starred_actors|Tom Hanks
Big|release_year|1988
A League of Their Own|directed_by|Penny Marshall
A League of Their Own|starred_actors|Tom Hanks
A League of Their Own|starred_actors|Geena Davis
Apollo 13|directed_by|Ron Howard
Apollo 13|starred_actors|Tom Hanks
Apollo 13|starred_actors|Kevin Bacon
Apollo 13|release_year|1995
Splash|directed_by|Ron Howard
Splash|starred_actors|Tom Hanks
Tremors|starred_actors|Kevin Bacon
Amelie|directed_by|Jean-Pierre Jeunet
Amelie|in_language|French
\"\"\"
passages = [
    {"id": "p:Big", "entity_id": "Big", "text": "Big is a comedy about a boy who wakes up as an adult."},
    {"id": "p:Apollo 13", "entity_id": "Apollo 13",
     "text": "Apollo 13 follows three astronauts on a failing moon mission."},
    {"id": "p:Tremors", "entity_id": "Tremors",
     "text": "Tremors is a monster comedy about giant worms in Nevada."},
    {"id": "p:note", "text": "Critics often rank baseball movies among the most sentimental genres."},
]
(work / "kb.txt").write_text(triples, encoding="utf-8")
(work / "passages.jsonl").write_text("\\n".join(json.dumps(p) for p in passages), encoding="utf-8")

kb_dir = work / "movies-kb"
report = ingest(kb_dir, [work / "kb.txt"], passages=work / "passages.jsonl", type_map=TYPE_MAP,
                progress=False)
print(report.counts)""",
    ),
    (
        "md",
        """\
## 2. Ask with two methods

Each method is a compiled LangGraph graph; its settings (which KB, which model, top-k,
...) go in `context=`.""",
    ),
    (
        "code",
        """\
from hybridrag.graphs import context_for, get_graph, list_graphs

print("methods:", list_graphs())
question = "which movies did Ron Howard direct"

fusion_ctx = context_for("fusion", kb=str(kb_dir), top_k=5)
fusion = get_graph("fusion").invoke({"question": question}, context=fusion_ctx)
print("fusion answer:", fusion["answer"])
for item in fusion["ranked"]:
    print(f"  {item['score']:.3f}  {item['source']:<6} {item['name']}")""",
    ),
    (
        "code",
        """\
# hybgrag with the bundled SmolLM2-135M: tiny and offline, so expect weak routing;
# llm="openai:gpt-4o-mini" (with OPENAI_API_KEY) or llm_base_url=... switch the model.
hyb_ctx = context_for("hybgrag", kb=str(kb_dir), llm="local:smollm2", max_iterations=1,
                      num_few_shot=3, top_k=5)
hybgrag = get_graph("hybgrag").invoke({"question": question}, context=hyb_ctx)
print("hybgrag answer:", hybgrag["answer"])
print("LLM calls:", hybgrag["usage"]["llm_calls"], "| tokens in/out:",
      hybgrag["usage"].get("input_tokens"), "/", hybgrag["usage"].get("output_tokens"))""",
    ),
    (
        "md",
        """\
## 3. Read the trace

Every method returns the same shape: `answer`, `ranked`, `evidence`, `trace` (one entry
per node step, with the node's decision) and `usage` (LLM calls, tokens, seconds per stage).""",
    ),
    (
        "code",
        """\
for name, out in [("fusion", fusion), ("hybgrag", hybgrag)]:
    print(f"--- {name}")
    for step in out["trace"]:
        print(f"{step['node']:>20}: {step['decision']}")
    print("seconds per stage:", {k: round(v, 3) for k, v in out["usage"]["stages"].items()})

print("--- fusion evidence (graph facts carry their path)")
for ev in fusion["evidence"][:3]:
    print(f"  [{ev['source']}] {ev['text'][:90]}")""",
    ),
    (
        "code",
        """\
# the same steps as they happen: one chunk per finished node
for chunk in get_graph("fusion").stream({"question": "who starred in Tremors"},
                                        context=context_for("fusion", kb=str(kb_dir)), stream_mode="updates"):
    for node, update in chunk.items():
        print(node, "->", [s["decision"] for s in update.get("trace", [])])""",
    ),
    (
        "md",
        """\
## 4. Evaluate and plot the summary

A few questions with gold answers as JSONL, evaluated with `hybridrag eval` for the fusion
method and its vector-only baseline (`--set mode=vector`). Each run writes
`records.jsonl`, `summary.json`, `summary.md` and `summary.png` into its folder.""",
    ),
    (
        "code",
        """\
from hybridrag.app.cli import main as hybridrag

questions = [
    {"id": "q1", "question": "who directed Big", "answers": ["Penny Marshall"]},
    {"id": "q2", "question": "which movies did Ron Howard direct", "answers": ["Apollo 13", "Splash"]},
    {"id": "q3", "question": "who starred in Tremors", "answers": ["Kevin Bacon"]},
    {"id": "q4", "question": "what language is Amelie in", "answers": ["French"]},
    {"id": "q5", "question": "when was Apollo 13 released", "answers": ["1995"]},
]
qfile = work / "questions.jsonl"
qfile.write_text("\\n".join(json.dumps(q) for q in questions), encoding="utf-8")

runs = {}
for label, extra in [("fusion", []), ("vector baseline", ["--set", "mode=vector"])]:
    out_dir = work / "eval" / label.replace(" ", "-")
    code = hybridrag(["eval", "--method", "fusion", "--questions", str(qfile), "--kb", str(kb_dir),
                      "--out", str(out_dir), "--no-progress", *extra])
    assert code == 0, f"eval failed for {label}"
    runs[label] = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))""",
    ),
    (
        "code",
        """\
%matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

from hybridrag.evals.summary import LABELS

metrics = list(runs["fusion"]["metrics"])
y = np.arange(len(metrics))
fig, ax = plt.subplots(figsize=(8, 4.5))
for i, (label, summary) in enumerate(runs.items()):
    ax.barh(y + i * 0.4, [summary["metrics"][m] for m in metrics], height=0.4, label=label)
ax.set_yticks(y + 0.2, [LABELS.get(m, m) for m in metrics])
ax.invert_yaxis()
ax.set_xlim(0, 1)
ax.set_title(f"fusion vs. its vector baseline on {runs['fusion']['n']} questions")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()

for label, summary in runs.items():
    m = summary["metrics"]
    print(f"{label}: Hit@5 {m['hit@5']:.2f}, MRR {m['mrr']:.2f}, answer EM {m['answer_em']:.2f}, "
          f"errors {summary['errors']}")""",
    ),
    (
        "md",
        """\
Next: the same graphs over HTTP with `hybridrag serve` (LangServe) or `langgraph dev`
(LangGraph Studio), and the benchmarks in `docs/benchmarks.md`.""",
    ),
]


def build() -> nbformat.NotebookNode:
    """The notebook object for CELLS."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in CELLS]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"  # stable ids: regenerating gives the same file
    return nb


def main(path: Path = NOTEBOOK) -> Path:
    """Write the notebook to ``path``."""
    nb = build()
    nbformat.validate(nb)
    nbformat.write(nb, str(path))
    return path


if __name__ == "__main__":
    print(f"wrote {main(Path(sys.argv[1]) if len(sys.argv) > 1 else NOTEBOOK)}")  # noqa: T201

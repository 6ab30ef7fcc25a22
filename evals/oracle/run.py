"""``hybridrag eval --llm oracle[:p=...]``: set the stand-in up for a run and label what it produced.

- The gold records are built from the questions the run asks; where the dataset keeps its
  facts (``sources``) follows from the MetaQA-hybrid completeness (graph only at 100 %,
  graph and passages in between, passages only at 0 %).
- The model is registered under the run's ``--llm`` spec, so every role loads it.
- Results are labelled as perfect-LLM ceilings: ``label`` in ``summary.json``, the titles of
  ``summary.md`` and ``summary.png``, the default output folder name; ``oracle_noise.json`` holds the noise
  setting, every drawn error (by question id) and the repair counts
  (:func:`evals.oracle.noise.summarise`). A resumed run merges its entries into the file.
- Questions over documents: ``oracle_answer_shown.json`` says, per question id, whether an answer
  prompt (answerer, answer check, final answer) showed a supported gold answer: the bound the
  answer role works under.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from hybridrag.evals.datasets import Question
from hybridrag.evals.oracle.gold import GoldSet
from hybridrag.evals.oracle.model import OracleChatModel, parse_spec, register_oracle
from hybridrag.evals.oracle.noise import summarise
from hybridrag.evals.oracle.text_gold import records_from_file

NOISE_FILE = "oracle_noise.json"
ANSWER_SHOWN_FILE = "oracle_answer_shown.json"  # question id -> an answer prompt showed a supported gold answer


def fact_sources(completeness: float | None) -> tuple[str, ...]:
    """Where a MetaQA(-hybrid) dataset keeps its facts."""
    if completeness is None or completeness >= 1.0:
        return ("kg",)
    return ("docs",) if completeness <= 0.0 else ("kg", "docs")


def setup(
    spec: str, questions: Sequence[Question], notes: dict, base_url: str = "", relation_types: Mapping | None = None
) -> OracleChatModel:
    """Build the stand-in for ``questions`` (types as the KB's schema names them) and register it under ``spec``."""
    if notes.get("documents_file"):  # questions over documents: text gold records from the dataset file
        if parse_spec(spec).active:
            raise ValueError("oracle noise (p>0, rates) is defined for MetaQA-style questions only; use --llm oracle")
        asked = {q.id for q in questions}
        gold = GoldSet(r for r in records_from_file(notes["documents_file"]) if r.id in asked)
    else:
        gold = GoldSet.from_questions(questions, fact_sources(notes.get("completeness")), relation_types)
    return register_oracle(spec, gold, base_url)


def label(method: str, spec: str) -> str:
    """The run's label: the method with the oracle LLM, a perfect-LLM ceiling (with its noise)."""
    noise = parse_spec(spec)
    if noise.rates is not None:
        return f"{method} + oracle LLM (realistic stand-in, {noise.describe()})"
    extra = f", noise p={noise.p:g} seed={noise.seed}" if noise.p else ""
    extra += f" types={'+'.join(noise.types)}" if noise.p and noise.types else ""
    return f"{method} + oracle LLM (perfect-LLM ceiling{extra})"


def out_suffix(spec: str) -> str:
    """Suffix of the default output folder (``-oracle``, ``-oracle_p_0.3``...)."""
    return "-" + re.sub(r"[^\w.-]+", "_", spec)


def write_noise(model: OracleChatModel, out: Path) -> dict:
    """Merge this run's noise entries into ``out/oracle_noise.json``; return the file's content."""
    path = out / NOISE_FILE
    report = model.noise_report()
    entries = {e["id"]: e for e in (json.loads(path.read_text(encoding="utf-8"))["entries"] if path.exists() else [])}
    entries.update({e["id"]: e for e in report["entries"]})
    report["entries"] = list(entries.values())
    report["summary"] = summarise(report["entries"])
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return report


def finish(model: OracleChatModel, summary: dict, out: Path) -> str:
    """Write the noise file and the labelled ``summary.md`` / ``summary.png``; return the markdown to print."""
    from hybridrag.evals.summary import plot, to_markdown

    labelled = {**summary, "method": summary.get("label") or summary.get("method")}
    text = to_markdown(labelled)
    plot(labelled, out / "summary.png")
    noise = write_noise(model, out)
    if model.gold.has_text:  # questions over documents: did an answer prompt show the gold answer?
        path = out / ANSWER_SHOWN_FILE
        shown = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        shown.update(model.gold.answer_shown)
        path.write_text(json.dumps(shown, indent=1), encoding="utf-8")
    s = noise["summary"]
    if noise["p"] or noise.get("rates"):
        share = "n/a" if s["repair_share"] is None else f"{s['repair_share']:.2f}"
        looped = "n/a" if s["repair_share_when_looped"] is None else f"{s['repair_share_when_looped']:.2f}"
        text += (
            f"\nOracle noise {noise.get('rates') or 'p=' + format(noise['p'], 'g')}: {s['applied']} decisions "
            f"made wrong, {s['looped']} followed by "
            f"a later decision, {s['repaired']} repaired (share {share}; {looped} of those looped); "
            f"details in {NOISE_FILE}\n"
        )
    (out / "summary.md").write_text(text, encoding="utf-8")
    return text

"""The papers' own headline numbers, for the *published* column of the report.

Each entry names the dataset and the model the paper used, so that nobody reads it as a
number measured here. Values are copied from the papers' result tables (file names in
``../shared/papers/README.md``); none of them was reproduced on MetaQA.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    """A paper's headline result: metric → value, on ``dataset`` with ``model``."""

    metrics: tuple[tuple[str, float], ...]
    dataset: str
    model: str

    def cell(self) -> str:
        """One markdown table cell, e.g. ``Hit@1 0.654, MRR 0.698 (STaRK-MAG test; Claude 3 Sonnet)``."""
        values = ", ".join(f"{name} {value:.3f}" for name, value in self.metrics)
        return f"{values} ({self.dataset}; {self.model})"


PUBLISHED: dict[str, Published] = {
    # Fusion paper, Table 1 (WebQSP), every row with all-MiniLM-L6-v2 and no LLM.
    "fusion (hybrid)": Published(
        (("R@10", 0.611), ("MRR", 0.281), ("nDCG@10", 0.352)), "WebQSP", "all-MiniLM-L6-v2, no LLM"
    ),
    "vector-only": Published(
        (("R@10", 0.580), ("MRR", 0.250), ("nDCG@10", 0.279)), "WebQSP", "all-MiniLM-L6-v2, no LLM"
    ),
    "graph-only": Published(
        (("R@10", 0.260), ("MRR", 0.247), ("nDCG@10", 0.313)), "WebQSP", "all-MiniLM-L6-v2, no LLM"
    ),
    "BM25": Published((("R@10", 0.336), ("MRR", 0.136), ("nDCG@10", 0.136)), "WebQSP", "no LLM"),
    # HybGRAG, main results table: STaRK-MAG test split.
    "hybgrag": Published(
        (("Hit@1", 0.654), ("Hit@5", 0.753), ("Recall@20", 0.657), ("MRR", 0.698)), "STaRK-MAG test", "Claude 3 Sonnet"
    ),
    # MoR, main results table: STaRK-MAG test split (Hit@1, Hit@5, Recall@20, MRR).
    "mor": Published(
        (("Hit@1", 0.5819), ("Hit@5", 0.7834), ("Recall@20", 0.7501), ("MRR", 0.6714)),
        "STaRK-MAG test",
        "fine-tuned Llama-3.2-3B planner",
    ),
    # HydraRAG, main results table: exact-match accuracy (Hits@1) on AdvHotpotQA and WebQSP.
    "hydrarag": Published(
        (("Answer Hits@1 AdvHotpotQA", 0.589), ("Answer Hits@1 WebQSP", 0.961)), "AdvHotpotQA / WebQSP", "GPT-3.5-Turbo"
    ),
    # SSRAG: share of true answers by GPT-judge on TruthfulQA (plain RAG 57 %, graph RAG 67 %).
    "ssrag": Published((("% true (GPT-judge)", 0.87),), "TruthfulQA", "GPT-4"),
}


def published_cell(label: str) -> str:
    """The report cell for ``label`` (a dash when the paper has no comparable number)."""
    entry = PUBLISHED.get(label)
    return entry.cell() if entry else "–"

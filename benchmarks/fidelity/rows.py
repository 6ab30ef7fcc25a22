"""The fidelity table's measured default-vs-paper rows, as cells of the realistic-stand-in suite.

Each :class:`Row` names the table row it measures (the start of its component cell in
docs/architecture.md "Paper fidelity: every component"), the method, the dataset(s) of the
row's existing stand-in figure, and the one setting that gives the paper's choice. The default
cell of a method on a dataset is shared by its rows. Rows are listed in the order they run:
rows whose default differs from the paper first.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One fidelity-table row: the default against the paper's setting, one setting changed."""

    key: str
    component: str
    method: str
    datasets: tuple[str, ...]
    paper: str  # the --set that gives the paper's (or the other) choice
    metric: str = "hit@1"
    note: str = ""
    default_is_paper: bool = False


ROWS: tuple[Row, ...] = (
    Row(
        "hybgrag-router_calls",
        "hybgrag: router (entities, relations, then module)",
        "hybgrag",
        ("metaqa-hybrid-50",),
        "router_calls=2",
    ),
    Row("hybgrag-text_hops", "hybgrag: text hops", "hybgrag", ("metaqa-hybrid-50",), "text_hops=false"),
    Row("mor-ranking", "mor: candidate pool", "mor", ("metaqa-1hop", "metaqa-hybrid-50"), "ranking=paper"),
    Row("mor-text_edges", "mor: textual edges", "mor", ("metaqa-hybrid-50",), "text_edges=false"),
    Row("mor-max_iterations", "mor: corrective loop", "mor", ("metaqa-hybrid-50",), "max_iterations=1"),
    Row(
        "ssrag-graph_hops",
        "ssrag: graph retrieval (relevant nodes, relations)",
        "ssrag",
        ("metaqa-3hop",),
        "graph_hops=1",
        metric="answer_hits@1",
    ),
    Row("ssrag-llm_nodes", "ssrag: graph to text", "ssrag", ("metaqa-3hop",), "llm_nodes=20", metric="answer_hits@1"),
    Row(
        "ssrag-max_iterations",
        "ssrag: corrective loop",
        "ssrag",
        ("metaqa-3hop",),
        "max_iterations=1",
        metric="answer_hits@1",
    ),
    Row("hybgrag-radius", "hybgrag: hybrid retrieval module", "hybgrag", ("metaqa-2hop",), "radius=2"),
    Row(
        "hydrarag-num_sentences",
        "hydrarag: document / web exploration",
        "hydrarag",
        ("metaqa-hybrid-0",),
        "num_sentences=3",
        metric="answer_hits@1",
    ),
    Row(
        "hydrarag-audit",
        "hydrarag: audit of the analysis against the paths",
        "hydrarag",
        ("metaqa-hybrid-50",),
        "audit=false",
        metric="answer_hits@1",
    ),
    Row(
        "hydrarag-follow_up_topics",
        "hydrarag: refined exploration",
        "hydrarag",
        ("metaqa-hybrid-50",),
        "follow_up_topics=true",
        metric="answer_hits@1",
        default_is_paper=True,
    ),
    Row(
        "hydrarag-beam_text",
        "hydrarag: tree path retrieval, bidirectional join, path-length bounds",
        "hydrarag",
        ("metaqa-hybrid-50",),
        "beam_text=path",
        metric="answer_hits@1",
    ),
)
NOT_LLM = "fusion"  # fusion's rows call no LLM: the stand-in plays no role in them


def row(key: str) -> Row:
    """The row called ``key`` (SystemExit naming every row otherwise)."""
    for r in ROWS:
        if r.key == key:
            return r
    raise SystemExit(f"no fidelity row {key!r}; one of {', '.join(r.key for r in ROWS)}")

"""The table of suites: name, module, one-line description, the docs page it writes, and its quick form.

A suite's module defines ``OPTIONS`` (its command-line options, :func:`benchmarks.common.arg`)
and ``run(args) -> int``; ``args.suite`` and ``args.argv`` hold its name and arguments. ``--quick``
puts the suite's quick arguments first: the smallest run that shows it works, writing under
``eval-runs/quick/`` instead of the docs page.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

QUICK = "eval-runs/quick"


@dataclass(frozen=True)
class Suite:
    """One benchmark: where it lives, what it measures, which page it writes, its quick arguments."""

    name: str
    module: str
    description: str
    doc: str
    quick_args: str = ""

    @property
    def quick(self) -> list[str]:
        """The quick form's arguments (``{quick}`` is the folder of quick runs)."""
        return shlex.split(self.quick_args.format(quick=QUICK))


SUITES: tuple[Suite, ...] = (
    Suite(
        "quality",
        "benchmarks.quality.report",
        "every method and fusion's baselines on MetaQA 1/2/3-hop and MetaQA-hybrid: metrics, usage, published",
        "docs/benchmarks_eval.md",
        "--limit 3 --llm-limit 1 --datasets metaqa-1hop --methods 'fusion (hybrid)' BM25 --runs"
        " {quick}/quality --out {quick}/benchmarks_eval.md",
    ),
    Suite(
        "fusion-ranking",
        "benchmarks.quality.fusion_ranking",
        "fusion's scoring choices against the paper's scoring and its baselines, tuned and held out on MetaQA dev",
        "docs/benchmarks_fusion.md (its ranking section)",
        "--limit 2 --tune-limit 2 --datasets hybrid-100 --runs {quick}/fusion-ranking --out"
        " {quick}/benchmarks_fusion.md",
    ),
    Suite(
        "oracle",
        "benchmarks.quality.oracle_matrix",
        "the LLM methods with the perfect-LLM stand-in: ceiling, and the corrective loops under noise",
        "docs/benchmarks_oracle_matrix.md",
        "--limit 2 --noise-limit 2 --methods hybgrag --datasets metaqa-1hop --noise-datasets"
        " metaqa-1hop --runs {quick}/oracle --out {quick}/benchmarks_oracle_matrix.md",
    ),
    Suite(
        "oracle-router",
        "benchmarks.quality.oracle_router",
        "HybGRAG's hybrid retrieval module with a perfect router (gold topic and relation path)",
        "docs/benchmarks_oracle.md (rows pasted from its table)",
        "--hops 1 --limit 5 --out {quick}/benchmarks_oracle.md",
    ),
    Suite(
        "smollm",
        "benchmarks.smollm.matrix",
        "the LLM methods with SmolLM2-135M, examples from the bank, the schema, fixed files or none",
        "docs/benchmarks_smollm.md",
        "--limit 1 --cells hybgrag:none:1hop --runs {quick}/smollm --out {quick}/benchmarks_smollm.md",
    ),
    Suite(
        "smollm-speed",
        "benchmarks.smollm.speed",
        "where a SmolLM2 router or planner call spends its time (llama.cpp's counters)",
        "docs/benchmarks_smollm.md (medians quoted in its sections)",
        "--method hybgrag --n 1",
    ),
    Suite(
        "smollm-hops",
        "benchmarks.smollm.speed_hops",
        "SmolLM2 seconds per question at 1/2/3 hops on held-out MetaQA, current settings against the baseline",
        "docs/benchmarks_smollm_speed.md",
        "--per-hop 1 --hops 1 --methods ssrag --runs {quick}/smollm-hops --out {quick}/benchmarks_smollm_speed.md",
    ),
    Suite(
        "smollm-draft",
        "benchmarks.smollm.draft",
        "SmolLM2 role calls with prompt-lookup speculative decoding against plain decoding: same text, time, drafts",
        "docs/benchmarks_smollm_draft.md",
        "--per-hop 1 --hops 1 --methods mor --repeats 2 --out {quick}/benchmarks_smollm_draft.md",
    ),
    Suite(
        "shots",
        "benchmarks.quality.shots",
        "whether the nearest solved example carries the question's relation path, raw and entity-masked",
        "docs/bank.md (the table between its markers)",
        "--bank 30 --n 10 --no-doc",
    ),
    Suite(
        "spelling",
        "benchmarks.quality.spelling",
        "what the graph entry's respelling of names changes",
        "docs/benchmarks_spelling.md",
    ),
    Suite(
        "bank-paths",
        "benchmarks.quality.bank_paths",
        "whether the nearest bank examples follow the asked relation path on free wording, cues off / on",
        "docs/benchmarks_bank_paths.md",
        "--limit 3 --out {quick}/benchmarks_bank_paths.md",
    ),
    Suite(
        "bank-consensus",
        "benchmarks.quality.bank_consensus",
        "how right the look-alike vote of the SmolLM2 matrix's bank builds was",
        "docs/bank.md (counts quoted there)",
    ),
    Suite(
        "fusion-speed",
        "benchmarks.speed.fusion",
        "fusion on the full MetaQA KB: graph ingest, KB load, per-question latency against its baselines",
        "docs/benchmarks_fusion.md (its speed section)",
        "--questions 5 --out {quick}/benchmarks_fusion.md",
    ),
    Suite(
        "dispatch",
        "benchmarks.speed.dispatch",
        "fusion against its floor, and what LangGraph dispatch costs a fusion query",
        "docs/benchmarks_dispatch.md (its measured section)",
        "--questions 5 --out {quick}/benchmarks_dispatch.md",
    ),
    Suite(
        "speed",
        "benchmarks.speed.modules",
        "per-module retrieval latency of every LLM method on MetaQA, idle and under load",
        "docs/benchmarks_modules.md (tables from its --md file)",
        "--questions 1 --methods hybgrag --datasets metaqa-1hop --conditions as-is --md {quick}/benchmarks_modules.md",
    ),
    Suite(
        "ego",
        "benchmarks.speed.ego",
        "HybGRAG's ego graph: the former node-at-a-time BFS against the vectorised frontier",
        "docs/benchmarks_ego.md",
        "--limit 3 --out {quick}/benchmarks_ego.md",
    ),
    Suite(
        "embed",
        "benchmarks.speed.embed",
        "query-embedding latency of three encoders, and a fresh process's cold start",
        "docs/benchmarks_embed.md",
        "--rounds 1 --cold-runs 1 --out {quick}/benchmarks_embed.md",
    ),
    Suite(
        "prompt-cache",
        "benchmarks.speed.prompt_cache",
        "llama.cpp's prompt cache with two roles taking turns, off and on",
        "docs/benchmarks_prompt_cache.md",
        "--repeats 1 --out {quick}/benchmarks_prompt_cache.md",
    ),
    Suite(
        "load",
        "benchmarks.speed.load",
        "the LangServe app under concurrent clients against the same questions in-process",
        "docs/benchmarks_load.md",
        "--clients 2 --requests 8 --rounds 2 --out {quick}/benchmarks_load.md",
    ),
    Suite(
        "scale",
        "benchmarks.scale.main",
        "synthetic 1x / 4x / 16x MetaQA: ingest, load, dense index, per-module latency, graph server",
        "docs/benchmarks_scale.md",
        "--factors 1 --embed-factors 1 --questions 1 --only graph --work {quick}/scale",
    ),
    Suite(
        "scale-ef",
        "benchmarks.scale.ef_sweep",
        "HNSW efSearch on the scale suite's built KBs: recall@10 against exact search, search p50",
        "docs/benchmarks_scale.md (its efSearch section)",
    ),
    Suite(
        "mor-growth",
        "benchmarks.scale.mor_growth",
        "MoR traversal at MetaQA 1x/4x/16x and on the Prime-sized graph, a baseline commit beside today's",
        "docs/benchmarks_mor_scale.md",
        "--factors 1 --questions 1 --prime-questions 0 --out {quick}/benchmarks_mor_scale.md",
    ),
    Suite(
        "prime",
        "benchmarks.scale.prime",
        "a STaRK-Prime-sized synthetic graph: ingest, load and per-module latency beside MetaQA 1x",
        "docs/benchmarks_prime.md",
        "--entities 2000 --edges 20000 --only synth --work {quick}/prime",
    ),
    Suite(
        "linking",
        "benchmarks.quality.linking",
        "fusion's topic linking and answers on MetaQA 1-hop dev, topics inside other titles: before/after exact titles",
        "docs/benchmarks_linking.md",
        "--limit 5 --all-limit 5 --out {quick}/benchmarks_linking.md",
    ),
    Suite(
        "realdata",
        "benchmarks.realdata.main",
        "AdvHotpotQA dev (every method x stand-in / SmolLM2 / no LLM), untyped vs typed MetaQA, the paraphrase set",
        "docs/benchmarks_realdata.md",
        "--limit 3 --smollm-limit 1 --metaqa-limit 2 --para-limit 1 --sections adv --runs {quick}/realdata"
        " --out {quick}/benchmarks_realdata.md",
    ),
    Suite(
        "list-answers",
        "benchmarks.quality.list_answers",
        "fusion's answer to MetaQA 1-hop dev list questions: the whole gold list, before/after the list rule",
        "docs/benchmarks_list_answers.md",
        "--limit 3 --out {quick}/benchmarks_list_answers.md",
    ),
    Suite(
        "reliability",
        "benchmarks.reliability.page",
        "fault and abuse probes of the server, ingest, graph servers and eval folders",
        "docs/reliability.md",
        "--only evalrun --out {quick}/reliability.md",
    ),
    Suite(
        "realistic-rates",
        "benchmarks.fidelity.rates",
        "SmolLM2's first-decision errors per LLM method and noise type on MetaQA dev (the realistic stand-in's rates)",
        "evals/oracle/rates/smollm2.json",
        "--per-hop 1 --hops 1 --methods hybgrag --runs {quick}/realistic-rates --out {quick}/smollm2.json",
    ),
    Suite(
        "fidelity-realistic",
        "benchmarks.fidelity.main",
        "the fidelity table's measured default-vs-paper rows under the realistic stand-in (SmolLM2's error rates)",
        "docs/benchmarks_fidelity.md",
        "--limit 2 --rows hybgrag-router_calls --runs {quick}/fidelity --out {quick}/benchmarks_fidelity.md",
    ),
)


def suite(name: str) -> Suite:
    """The suite called ``name``; a :class:`KeyError` naming every suite otherwise."""
    for s in SUITES:
        if s.name == name:
            return s
    raise KeyError(f"no suite {name!r}; one of {', '.join(s.name for s in SUITES)}")

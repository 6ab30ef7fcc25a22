"""Evaluation library: datasets, relevance, metrics, a resumable runner, summaries and the perfect-LLM stand-in.

``hybridrag eval`` (:mod:`hybridrag.evals.cli`) drives any method graph like a user would and writes
per-question records plus a summary. The benchmarks (``python -m benchmarks``, beside ``tests/``)
build on this library: :mod:`hybridrag.evals.timing` for latency statistics and
:mod:`hybridrag.evals.markdown` for their pages.
"""

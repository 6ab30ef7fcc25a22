"""Evaluation harness: datasets, relevance, metrics, a resumable runner and benchmark reports.

``hybridrag eval`` (see :mod:`evals.cli`) drives any method graph like a user would and
writes per-question records plus a summary; :mod:`evals.report` runs the benchmark matrix.
"""

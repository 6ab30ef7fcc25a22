"""Suites of the LLM methods on SmolLM2-135M: the matrix, its bank KBs and report, the call timer."""

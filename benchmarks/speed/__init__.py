"""Speed suites: fusion, dispatch, per-module latency, ego graphs, embedding, prompt cache, HTTP load."""

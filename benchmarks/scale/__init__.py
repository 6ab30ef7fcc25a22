"""Scale benchmark (``python -m evals.scale``): synthetic k× MetaQA, ingest, load, latency, graph server."""

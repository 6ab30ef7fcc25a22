"""``python -m benchmarks realdata``: the real-data page (AdvHotpotQA, untyped MetaQA, free wording)."""

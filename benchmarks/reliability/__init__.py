"""The reliability suite: its page (:mod:`benchmarks.reliability.page`) and one module per probe."""

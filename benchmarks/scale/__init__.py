"""The scale suites: synthetic k× MetaQA, its efSearch sweep, and a STaRK-Prime-sized graph."""

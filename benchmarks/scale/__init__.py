"""The scale suites: synthetic k× MetaQA (``scale``), its efSearch sweep (``scale-ef``) and a Prime-sized graph (``prime``)."""

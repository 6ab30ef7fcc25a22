"""HydraRAG: question analysis, source selection, KG / document / web exploration, pruning and refinement."""

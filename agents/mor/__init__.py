"""MoR: planning graph, mixed structural / textual traversal and the trajectory reranker."""

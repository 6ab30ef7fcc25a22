"""SSRAG: query augmentation, routing, vector + graph retrieval and context unification."""

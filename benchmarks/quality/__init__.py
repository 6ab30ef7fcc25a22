"""Suites of retrieval and answer quality: the method matrix, fusion's ranking, the oracle, the bank."""

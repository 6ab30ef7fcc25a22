"""HybGRAG: router, retriever bank (text and hybrid modules), validator and commentor."""

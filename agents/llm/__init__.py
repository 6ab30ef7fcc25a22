"""Shared LLM plumbing: chat-model loading (:mod:`agents.llm.models`) and schema-checked calls
with retry, fallback and usage counts (:mod:`agents.llm.structured`).
"""

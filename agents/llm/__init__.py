"""Shared LLM plumbing: chat-model loading and schema-checked calls.

Models are loaded by :mod:`agents.llm.models`; :mod:`agents.llm.structured` makes the calls with
retry, fallback and usage counts.
"""

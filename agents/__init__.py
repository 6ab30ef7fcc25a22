"""LLM roles of the methods (routers, critics, planners, answerers) and chat-model loading.

- :mod:`agents.models`: ``"provider:model"`` strings → LangChain chat models, cached.
- :mod:`agents.structured`: pydantic-schema calls with one retry, a None fallback and usage counts.
- ``agents.<method>_*``: one module per method's roles and helpers.
"""

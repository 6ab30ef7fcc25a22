"""What the graphs' nodes compute, one package per method, over the shared LLM plumbing.

- :mod:`agents.llm`: ``"provider:model"`` strings → LangChain chat models (``models``), and
  pydantic-schema calls with one retry, a None fallback and usage counts (``structured``).
- :mod:`agents.fusion`, :mod:`agents.hybgrag`, :mod:`agents.mor`, :mod:`agents.hydrarag`,
  :mod:`agents.ssrag`: each method's roles and scoring. A method package imports only
  ``agents.llm``, ``prompts``, ``tools`` and ``kb``, never another method's package.
"""

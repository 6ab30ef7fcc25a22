"""User-facing entry points: CLI, LangServe app."""

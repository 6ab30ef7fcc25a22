"""Who judges a retrieval or an answer: the LLM, or a rule over what retrieval produced.

Small models cannot do the yes/no roles (HybGRAG's validator, HydraRAG's answer check):
SmolLM2-135M as a validator agreed with the gold verdict on 0.65 of 20 pairs, about a coin.
Each method that has such a role takes a ``judge`` setting:

- ``"llm"``: the model judges (the papers);
- ``"rules"``: a rule over the retrieval decides, with no LLM call (each method documents its
  rule beside the role: :func:`agents.hybgrag.validator.rule_verdict`,
  :func:`agents.hydrarag.answering.rule_check`);
- ``"auto"`` (default): the rules when the model is known to be small (:func:`is_small_model`),
  else the LLM, and the rules again for any single reply of the LLM that is unusable
  (unparseable), instead of the role's fixed fallback.

A model is *small* when its spec runs in process through llama.cpp (``local:*``: the bundled
models are SmolLM2-135M class) or its model name states a size of at most
:data:`SMALL_MAX_BILLIONS` billion parameters (``135m``, ``360M``, ``0.5b``, ``1.5B``, ``3b``:
the usual tag of Ollama, vLLM and Hugging Face names, e.g. ``openai:qwen2.5:1.5b-instruct``).
A name without a size (``openai:gpt-4o-mini``) or a stand-in registered for tests is not small.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

Judge = Literal["auto", "llm", "rules"]
SMALL_MAX_BILLIONS = 3.0
_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([mb])(?![a-z])", re.IGNORECASE)


def model_billions(spec: str) -> float | None:
    """The parameter count a model spec's name states, in billions (None when it states none).

    The last size tag counts (``llama3.2:3b`` → 3.0, ``SmolLM2-135M-Instruct`` → 0.135); a
    mixture tag such as ``8x7b`` states no single size and is read as its expert size.
    """
    name = spec.split(":", 1)[1] if ":" in spec else spec
    found = _SIZE.findall(name.replace("_", "-"))
    if not found:
        return None
    value, unit = found[-1]
    return float(value) / (1000.0 if unit.lower() == "m" else 1.0)


def is_small_model(spec) -> bool:
    """Whether the model behind ``spec`` is known to be too small for a yes/no judging role.

    ``spec`` is a ``provider:model`` string or a chat model object from Python: an object running
    through llama.cpp counts as local; any other object by the size its model name states.
    """
    if not isinstance(spec, str):
        if any("LlamaCpp" in c.__name__ for c in type(spec).__mro__):
            return True
        name = getattr(spec, "model_name", None) or getattr(spec, "model", None)
        return isinstance(name, str) and (size := model_billions(name)) is not None and size <= SMALL_MAX_BILLIONS
    spec = spec.strip()
    if spec.lower().startswith("local:"):
        return True
    size = model_billions(spec)
    return size is not None and size <= SMALL_MAX_BILLIONS


def check_judge(value: str) -> str:
    """``value`` when it is a judge setting, else a one-line error naming the choices."""
    if value not in get_args(Judge):
        raise ValueError(f"judge must be one of {', '.join(get_args(Judge))}, not {value!r}")
    return value


def few_shot_count(n: int, small_n: int, spec) -> int:
    """Examples to show: ``n``, at most ``small_n`` when the model behind ``spec`` is known to be small.

    A model is small by :func:`is_small_model`.
    """
    return min(n, small_n) if is_small_model(spec) else n


def use_rules(judge: str, spec: str) -> bool:
    """Whether the rule decides before any LLM call: ``rules``, or ``auto`` with a small model."""
    check_judge(judge)
    return judge == "rules" or (judge == "auto" and is_small_model(spec))


def rules_on_unusable(judge: str) -> bool:
    """Whether an unusable LLM reply is replaced by the rule's decision.

    Only ``auto`` does; ``llm`` keeps the role's own fallback, as the papers.
    """
    return check_judge(judge) == "auto"

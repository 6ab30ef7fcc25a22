"""The oracle chat model: a LangChain chat model that plays every structured role perfectly.

For measurement only. ``with_structured_output(schema)`` returns a runnable that looks the
schema up in the role rules of the four LLM methods (:mod:`evals.oracle.hybgrag`,
:mod:`~evals.oracle.mor`, :mod:`~evals.oracle.hydrarag`, :mod:`~evals.oracle.ssrag`),
finds the question's gold record from the prompt, and returns what a perfect model would.
A schema without a rule, a prompt naming no known question, a failing rule and a plain
(unstructured) call raise :class:`OracleError` (never a parse error, so the method does not
quietly take its fallback: an oracle run has no unparseable replies).

Every reply is checked before it leaves: a gold answer one of its names or texts (any field
but fixed wording and enumerated choices, :data:`NOT_NAMES`) names must occur in the
question or in the prompt's data blocks, so the stand-in never brings a gold answer into
retrieval, or into an answer, that the method had not retrieved already
(:class:`GoldLeakError` otherwise).

Specs: ``oracle`` (no noise), ``oracle:p=0.3``, ``oracle:p=0.3,seed=1``,
``oracle:p=1,types=wrong_entity+wrong_module`` (only those error types); the realistic stand-in
``oracle:realistic`` (= ``oracle:rates=smollm2``, optionally ``,seed=S``) draws each error type with
the rate SmolLM2 showed on MetaQA dev for the method and hop count (:mod:`evals.oracle.rates`).
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel, ConfigDict, Field

from hybridrag.agents.llm.structured import estimate_tokens
from hybridrag.evals.oracle import hybgrag, hydrarag, mor, rates, ssrag
from hybridrag.evals.oracle.call import Call, Rule
from hybridrag.evals.oracle.gold import GoldSet
from hybridrag.evals.oracle.noise import DRAWABLE, ERROR_TYPES, Noise, NoiseLog, summarise
from hybridrag.evals.oracle.prompt import ABSTAIN, golds_in, view
from hybridrag.evals.oracle.text_gold import TextRecord
from hybridrag.evals.oracle.text_roles import rule_for

RULES: dict[type, Rule] = {**hybgrag.ROLES, **mor.ROLES, **hydrarag.ROLES, **ssrag.ROLES}
PREFIX = "oracle"


class OracleError(LookupError):
    """The oracle cannot answer this call (no rule for the schema, no gold record, plain text)."""


class GoldLeakError(AssertionError):
    """A reply named a gold answer the prompt does not show (a bug in a role rule)."""


def is_oracle_spec(spec: str | None) -> bool:
    """Whether a ``--llm`` spec names the oracle."""
    return bool(spec) and (spec == PREFIX or spec.startswith(PREFIX + ":"))


SPEC_HELP = "use oracle[:p=0.3][,seed=N][,types=a+b] or oracle:realistic / oracle:rates=NAME[,seed=N]"


def _setting(values: dict[str, Any], item: str, spec: str) -> None:
    """Parse one ``key=value`` (or ``realistic``) of an oracle spec into ``values``."""
    key, sep, raw = item.partition("=")
    try:
        if key == "p" and sep:
            values["p"] = float(raw)
        elif key == "seed" and sep:
            values["seed"] = int(raw)
        elif key == "types" and sep:
            values["types"] = tuple(t for t in raw.split("+") if t)
        elif (key == "rates" and sep and raw) or (key == "realistic" and not sep):
            values["rates"] = raw or rates.DEFAULT
        else:
            raise ValueError
    except ValueError:
        raise ValueError(
            f"bad oracle setting {item!r} in {spec!r}; {SPEC_HELP}, types from {', '.join(ERROR_TYPES)}"
        ) from None


def parse_spec(spec: str) -> Noise:
    """``oracle[:p=P][,seed=S][,types=a+b]`` or ``oracle:realistic[,seed=S]`` → the noise (ValueError if bad)."""
    if not is_oracle_spec(spec):
        raise ValueError(f"not an oracle spec: {spec!r}")
    values: dict[str, Any] = {}
    for item in filter(None, spec.removeprefix(PREFIX).removeprefix(":").split(",")):
        _setting(values, item, spec)
    if "rates" in values:
        if "p" in values or "types" in values:
            raise ValueError(f"oracle spec {spec!r}: measured rates replace p and types; give one or the other")
        values["rates"] = rates.load(values["rates"], DRAWABLE)
    noise = Noise(**values)
    if not 0.0 <= noise.p <= 1.0:
        raise ValueError(f"oracle noise p must lie in [0, 1], got {noise.p}")
    unknown = sorted(set(noise.types) - set(ERROR_TYPES))
    if unknown:
        raise ValueError(f"unknown oracle error type(s) {unknown}; choose from {', '.join(ERROR_TYPES)}")
    return noise


# Fields that carry no name into retrieval or answers: fixed wording and enumerated choices.
NOT_NAMES = frozenset(
    {"reasoning", "missing", "verdict", "sufficient", "label", "module", "error_type", "intent", "type"}
)


def _names(value: Any, key: str = "") -> list[str]:
    """The free-text values of a reply (what could bring a name into retrieval or an answer)."""
    if isinstance(value, dict):
        return [t for k, v in value.items() if k not in NOT_NAMES for t in _names(v, k)]
    if isinstance(value, list):
        return [t for v in value for t in _names(v, key)]
    return [value] if isinstance(value, str) and value != ABSTAIN else []


class OracleChatModel(BaseChatModel):
    """Perfect-LLM stand-in built on gold records (measurement only; see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    gold: GoldSet
    noise: Noise = Field(default_factory=Noise)
    log: NoiseLog = Field(default_factory=NoiseLog)

    @property
    def _llm_type(self) -> str:
        return "oracle"

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        raise OracleError("the oracle LLM answers structured calls only (with_structured_output)")

    def answer(self, schema: type[BaseModel], messages: list[BaseMessage]) -> BaseModel:
        """The perfect reply to one structured call."""
        call = Call(view(messages), self.gold, self.noise, self.log)
        rule = RULES.get(schema)
        if self.gold.has_text and rule_for(schema) is not None:  # a question over documents: the text rules
            rec = self.gold.find(call.view.text)
            if isinstance(rec, TextRecord):
                call._record, rule = rec, rule_for(schema)
        if rule is None:
            raise OracleError(f"the oracle LLM has no rule for {schema.__module__}.{schema.__qualname__}")
        try:
            reply = rule(call)
        except ValueError as exc:  # incl. pydantic's ValidationError: a rule bug, never a "parse failure"
            raise OracleError(f"the oracle's rule for {schema.__qualname__} failed: {exc}") from exc
        rec = call.looked_up or self.gold.find(call.view.text)
        if rec is not None:
            shown = golds_in(rec, [rec.question, *call.view.block_values()])
            leaked = sorted(set(golds_in(rec, list(_names(reply.model_dump())))) - set(shown))
            if leaked:
                raise GoldLeakError(
                    f"{schema.__qualname__} reply names gold answers the prompt does not show: {leaked}"
                )
        return reply

    def _structured(self, schema: type[BaseModel], include_raw: bool, value: Any) -> Any:
        messages = self._convert_input(value).to_messages()
        reply = self.answer(schema, messages)
        text = reply.model_dump_json()
        n_in = estimate_tokens("\n".join(str(m.content) for m in messages))
        meta = {
            "input_tokens": n_in,
            "output_tokens": estimate_tokens(text),
            "total_tokens": n_in + estimate_tokens(text),
        }
        raw = AIMessage(content=text, usage_metadata=meta)
        return {"raw": raw, "parsed": reply, "parsing_error": None} if include_raw else reply

    def with_structured_output(
        self, schema: Any, *, include_raw: bool = False, method: str = "function_calling", **kwargs: Any
    ) -> RunnableLambda:
        """A runnable returning the perfect ``schema`` object for the messages it gets."""
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise OracleError("the oracle LLM supports pydantic schemas only")
        return RunnableLambda(lambda value: self._structured(schema, include_raw, value))

    def noise_report(self) -> dict:
        """The noise setting, every drawn error and the repair counts."""
        entries = self.log.entries()
        return {
            "p": self.noise.p,
            "rates": self.noise.rates.name if self.noise.rates else None,
            "seed": self.noise.seed,
            "types": list(self.noise.types),
            "summary": summarise(entries),
            "entries": entries,
        }


def build_oracle(spec: str, gold: GoldSet) -> OracleChatModel:
    """An oracle model for ``spec`` over ``gold``."""
    return OracleChatModel(gold=gold, noise=parse_spec(spec))


def register_oracle(spec: str, gold: GoldSet, base_url: str = "") -> OracleChatModel:
    """Build the oracle and register it under ``spec`` (what ``load_chat_model(spec)`` then returns)."""
    from hybridrag.agents.llm.models import register_model

    model = build_oracle(spec, gold)
    register_model(spec, model, base_url)
    return model

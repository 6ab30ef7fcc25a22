"""A perfect-LLM stand-in for measuring the LLM methods' machinery (``--llm oracle[:p=0.3]``).

``hybridrag eval --method M --llm oracle`` replaces the chat model of every role of
hybgrag, mor, hydrarag and ssrag with :class:`OracleChatModel`, built per run from the gold
annotations of the questions being asked (:mod:`evals.oracle.gold`). Each structured role
returns what a perfect model would, derived only from the prompt it receives and the
question's gold record, by the rules documented in the role modules
(:mod:`evals.oracle.hybgrag`, :mod:`evals.oracle.mor`, :mod:`evals.oracle.hydrarag`,
:mod:`evals.oracle.ssrag`); it never names a gold answer the prompt does not already show.
Scores measured with it are ceilings of the machinery (retrieval, loops, ranking), not of
any model, and are labelled "oracle".

``oracle:p=0.3`` makes the first routing / planning / analysis decision of about 30 % of the
questions wrong in one of the papers' typed ways (:mod:`evals.oracle.noise`); later
decisions repair an error only when the method's own feedback names it, and the run folder
gets ``oracle_noise.json`` with every drawn error and the repair shares.
"""

from hybridrag.evals.oracle.gold import GoldRecord, GoldSet, NoGoldAnnotationError, UnknownQuestionError
from hybridrag.evals.oracle.model import (
    GoldLeakError,
    OracleChatModel,
    OracleError,
    build_oracle,
    is_oracle_spec,
    parse_spec,
    register_oracle,
)
from hybridrag.evals.oracle.noise import Noise, NoiseLog

__all__ = [
    "GoldLeakError",
    "GoldRecord",
    "GoldSet",
    "NoGoldAnnotationError",
    "Noise",
    "NoiseLog",
    "OracleChatModel",
    "OracleError",
    "UnknownQuestionError",
    "build_oracle",
    "is_oracle_spec",
    "parse_spec",
    "register_oracle",
]

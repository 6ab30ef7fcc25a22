"""HydraRAG prompts: one template pair (system, human) per LLM role of the method.

Written for this project after the roles of the HydraRAG paper (§4, App. E); the wording
and the examples are ours. Paths are shown as ``{A} → relation → {B, C}`` (KG, entity
sets after clustering) or ``A → relation → B`` (paths built from document or web text).
Everything taken from a source, or written by a model from it (topic names, skyline,
sub-questions, paths, paragraphs, results, summaries), is filled in as data blocks
(:mod:`prompts.data_block`); only the question is plain text.

One module per stage: :mod:`.initial` (§4.1), :mod:`.exploration` (§4.2), :mod:`.evidence`
(§4.3-4.4 path selection and refinement), :mod:`.answering` (§4.4), and the bundled examples
(:mod:`.bundled`); every template is importable from here.
"""

from __future__ import annotations

from hybridrag.prompts.hydrarag.answering import CHECK as CHECK
from hybridrag.prompts.hydrarag.answering import CHECK_SYSTEM as CHECK_SYSTEM
from hybridrag.prompts.hydrarag.answering import GENERATE as GENERATE
from hybridrag.prompts.hydrarag.answering import GENERATE_SYSTEM as GENERATE_SYSTEM
from hybridrag.prompts.hydrarag.bundled import BUNDLED as BUNDLED
from hybridrag.prompts.hydrarag.evidence import REFINE as REFINE
from hybridrag.prompts.hydrarag.evidence import REFINE_SYSTEM as REFINE_SYSTEM
from hybridrag.prompts.hydrarag.evidence import SELECT_PATHS as SELECT_PATHS
from hybridrag.prompts.hydrarag.evidence import SELECT_PATHS_SYSTEM as SELECT_PATHS_SYSTEM
from hybridrag.prompts.hydrarag.exploration import FOLLOW_UP as FOLLOW_UP
from hybridrag.prompts.hydrarag.exploration import FOLLOW_UP_SYSTEM as FOLLOW_UP_SYSTEM
from hybridrag.prompts.hydrarag.exploration import PATH_SUMMARY as PATH_SUMMARY
from hybridrag.prompts.hydrarag.exploration import PATH_SUMMARY_SYSTEM as PATH_SUMMARY_SYSTEM
from hybridrag.prompts.hydrarag.exploration import PREDICT as PREDICT
from hybridrag.prompts.hydrarag.exploration import PREDICT_SYSTEM as PREDICT_SYSTEM
from hybridrag.prompts.hydrarag.exploration import TEXT_PATHS as TEXT_PATHS
from hybridrag.prompts.hydrarag.exploration import TEXT_PATHS_SYSTEM as TEXT_PATHS_SYSTEM
from hybridrag.prompts.hydrarag.exploration import WEB_SELECT as WEB_SELECT
from hybridrag.prompts.hydrarag.exploration import WEB_SELECT_SYSTEM as WEB_SELECT_SYSTEM
from hybridrag.prompts.hydrarag.initial import ANALYSIS as ANALYSIS
from hybridrag.prompts.hydrarag.initial import ANALYSIS_SYSTEM as ANALYSIS_SYSTEM
from hybridrag.prompts.hydrarag.initial import PLAN as PLAN
from hybridrag.prompts.hydrarag.initial import PLAN_SYSTEM as PLAN_SYSTEM
from hybridrag.prompts.hydrarag.initial import SELECTOR as SELECTOR
from hybridrag.prompts.hydrarag.initial import SELECTOR_SYSTEM as SELECTOR_SYSTEM
from hybridrag.prompts.hydrarag.initial import TOPICS as TOPICS
from hybridrag.prompts.hydrarag.initial import TOPICS_SYSTEM as TOPICS_SYSTEM

ALL = [
    TOPICS_SYSTEM,
    TOPICS,
    ANALYSIS_SYSTEM,
    ANALYSIS,
    PLAN_SYSTEM,
    PLAN,
    SELECTOR_SYSTEM,
    SELECTOR,
    TEXT_PATHS_SYSTEM,
    TEXT_PATHS,
    WEB_SELECT_SYSTEM,
    WEB_SELECT,
    FOLLOW_UP_SYSTEM,
    FOLLOW_UP,
    PREDICT_SYSTEM,
    PREDICT,
    PATH_SUMMARY_SYSTEM,
    PATH_SUMMARY,
    SELECT_PATHS_SYSTEM,
    SELECT_PATHS,
    REFINE_SYSTEM,
    REFINE,
    CHECK_SYSTEM,
    CHECK,
    GENERATE_SYSTEM,
    GENERATE,
]

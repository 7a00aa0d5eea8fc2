"""LLM frontend: a model at any OpenAI-compatible endpoint writes Affine Loop IR text for what the
tracers cannot read (whole programs, single ops without a lowering); solar parses it with the IR
parser (never executes it), checks it against the original run on random inputs at two or more
shape bindings, and caches what it accepts. See README "LLM frontend"."""

from solar.frontends.llm.config import LLMConfig, config_from, default_cache_dir
from solar.frontends.llm.ops import LLMOpRules
from solar.frontends.llm.program import lower_file
from solar.frontends.loaded import Provenance

__all__ = [
    "LLMConfig",
    "LLMOpRules",
    "Provenance",
    "config_from",
    "default_cache_dir",
    "lower_file",
]

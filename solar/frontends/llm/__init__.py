"""LLM frontend: a model at any OpenAI-compatible endpoint writes Affine Loop IR text for what the
tracers cannot read (whole programs, single ops without a lowering); solar parses it with the IR
parser (never executes it), checks it against the original run on random inputs at two or more
shape bindings, and caches what it accepts. See docs/MANUAL.md, "LLM frontend".

The configuration is imported with the package; the rule writer, the program writer (with the
parser and the checker behind them) on first use, so `solar --help` and `solar llm-cache` do not
pay for them."""

from __future__ import annotations

from typing import Any

from solar.frontends.llm.config import LLMConfig, config_from, default_cache_dir

__all__ = ["LLMConfig", "LLMOpRules", "Provenance", "config_from", "default_cache_dir", "lower_file"]


def __getattr__(name: str) -> Any:
    if name == "LLMOpRules":
        from solar.frontends.llm.ops import LLMOpRules

        return LLMOpRules
    if name == "lower_file":
        from solar.frontends.llm.program import lower_file

        return lower_file
    if name == "Provenance":
        from solar.frontends.loaded import Provenance

        return Provenance
    raise AttributeError(f"module 'solar.frontends.llm' has no attribute {name!r}")

"""PyTorch frontend: torch.export on fake tensors -> core ATen -> the lowering table -> IR."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from solar.frontends.torch.libraries import prepare_torchvision
from solar.frontends.torch.convert import FallbackRules, convert_with_bindings
from solar.frontends.torch.loader import trace_file, trace_module
from solar.frontends.torch.traced import Decomposition, TraceOptions, Traced

prepare_torchvision()  # before any user code imports torchvision (see libraries.py)
from solar.ir.nodes import Program


def lower_traced(traced: Traced, fallback: FallbackRules | None = None) -> Program:
    """`fallback`: rules for ops without a lowering, e.g. the LLM's."""
    return convert_with_bindings(traced, fallback=fallback)[0]


def lower_file(path: str | Path) -> tuple[Program, Traced]:
    traced = trace_file(path)
    return lower_traced(traced), traced


def lower_module(model: Any, inputs: Sequence[Any], name: str | None = None) -> tuple[Program, Traced]:
    traced = trace_module(model, inputs, name)
    return lower_traced(traced), traced


__all__ = [
    "Decomposition", "TraceOptions", "Traced", "lower_file", "lower_module", "lower_traced", "trace_file",
    "trace_module",
]

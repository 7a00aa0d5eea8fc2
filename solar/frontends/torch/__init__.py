"""PyTorch frontend: torch.export on fake tensors -> core ATen -> the lowering table -> IR."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from solar.frontends.torch.libraries import prepare_torchvision
from solar.frontends.torch.loader import Traced, trace_file, trace_module

prepare_torchvision()  # before any user code imports torchvision (see libraries.py)
from solar.ir.nodes import Program


def lower_traced(traced: Traced, fallback: Any = None) -> Program:
    """`fallback`: rules for ops without a lowering (a convert.FallbackRules), e.g. the LLM's."""
    from solar.frontends.torch.convert import convert

    return convert(traced, fallback=fallback)


def lower_file(path: str | Path) -> tuple[Program, Traced]:
    traced = trace_file(path)
    return lower_traced(traced), traced


def lower_module(model: Any, inputs: Sequence[Any], name: str | None = None) -> tuple[Program, Traced]:
    traced = trace_module(model, inputs, name)
    return lower_traced(traced), traced


__all__ = ["Traced", "lower_file", "lower_module", "lower_traced", "trace_file", "trace_module"]

"""Known structure of a traced model's constants and inputs (`KnownStructure`): position-dependent
values (a causal mask's band) read from buffers and tensor attributes built from constants (their
values recomputed from the construction's recipes, solar.frontends.torch.loader.Recorder), from an
in-memory module's real buffers, and from sampled inputs (--infer-structure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily

from solar.frontends.torch.fake import tensor_attributes
from solar.frontends.views import Band, detect_band

aten = torch.ops.aten
REPLAY_LIMIT = 1 << 25  # elements: larger constants are neither recomputed nor read for structure


@dataclass(frozen=True)
class KnownStructure:
    """Position-dependent values of a program input: kind "param" (a buffer or tensor constant,
    by its state-dict name) or "input" (by position among the tensor inputs)."""

    kind: str
    key: str | int
    band: Band
    why: str

    def describe(self) -> str:
        what = f"buffer {self.key!r}" if self.kind == "param" else f"input {self.key}"
        return f"{what} is {self.band.describe()} ({self.why})"


def _constant_structure(name: str, values: torch.Tensor | None, why: str) -> KnownStructure | None:
    if values is None or values.dim() < 2 or values.is_complex():
        return None
    with unset_fake_temporarily():  # a real tensor, read while the fake mode may be active
        band = detect_band(as_numpy(values), constant_inside=True)
    return None if band is None else KnownStructure("param", name, band, why)


# Factories whose every element is one value (int8 weight buffers made with torch.zeros): nothing to
# replay (a 4096 x 4096 buffer each) or look for a band in.
_FILLS = frozenset({aten.zeros.default, aten.ones.default, aten.full.default, aten.zeros_like.default,
                    aten.ones_like.default, aten.full_like.default, aten.new_zeros.default,
                    aten.new_ones.default, aten.new_full.default})
_ONE_TO_ONE = frozenset({aten.detach.default, aten.alias.default, aten.clone.default, aten._to_copy.default})


def _filled(recipes: dict, t: torch.Tensor) -> bool:
    """`t` was made by a fill, through copies and casts (register_buffer's detach)."""
    while (recipe := recipes.get(id(t))) is not None:
        func, args = recipe[1], recipe[2]
        if func in _FILLS:
            return True
        if func not in _ONE_TO_ONE or not args or not isinstance(args[0], torch.Tensor):
            return False
        t = args[0]
    return False


def recorded_structure(model: torch.nn.Module, rec: Any, built: Any) -> list[KnownStructure]:
    """Structure of the buffers and tensor attributes built from constants while `model` was built:
    the values of small ones are known, large ones are recomputed from their recipe."""
    found: list[KnownStructure] = []
    why = "built from constants when the model is constructed; never loaded"
    named = list(model.named_buffers()) + [(n, v) for _, _, n, v in tensor_attributes(model)]
    for name, value in named:
        if id(value) not in rec.recipes:  # not derived from constants (random, mutated, loaded)
            continue
        if _filled(rec.recipes, value):  # one value everywhere: no band (it takes two)
            continue
        s = _constant_structure(name, rec.replay(value) if built.is_unknown(value) else value, why)
        if s is not None:
            found.append(s)
    return found


def real_structure(model: torch.nn.Module) -> list[KnownStructure]:
    """Structure of the real buffers and tensor attributes of an in-memory module."""
    why = "values of the module's own constant; never loaded"
    named = list(model.named_buffers()) + [(n, v) for _, _, n, v in tensor_attributes(model)]
    out = []
    for name, value in named:
        if isinstance(value, FakeTensor) or value.is_meta or value.numel() > REPLAY_LIMIT:
            continue  # a fake or meta tensor has no values to find structure in
        s = _constant_structure(name, value, why)
        if s is not None:
            out.append(s)
    return out


def input_structure(inputs: Sequence[Any], why: str) -> list[KnownStructure]:
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    out = []
    for k, t in enumerate(tensors):
        if t.dim() < 2 or isinstance(t, FakeTensor) or t.is_meta or t.is_complex():
            continue
        band = detect_band(as_numpy(t), constant_inside=False)
        if band is not None:
            out.append(KnownStructure("input", k, band, why))
    return out


def as_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach()
    return (t.float() if t.dtype in (torch.bfloat16, torch.float16) else t).cpu().numpy()

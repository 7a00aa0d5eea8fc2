"""Walks a closed jaxpr and lowers every equation through the one lowering table
(solar.frontends.jax.lowerings.LOWERINGS, keyed by primitive objects) into an IR Program.

Each equation's statements carry an Origin: the primitive's name, the instance of the user-level
call it came from (consecutive equations traced from one call site of the user's code, and every
equation inlined from one jit / custom_jvp / custom_vjp / checkpoint call or one loop, share it:
they form one kernel in the unfused bound), the user's source line and whether the op may use TF32."""

from __future__ import annotations

import linecache
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from jax.extend.core import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal

from solar.errors import SolarError, UnsupportedOpError
from solar.frontends import views
from solar.frontends.builder import ProgramBuilder, copy
from solar.frontends.jax import precision
from solar.frontends.jax.context import (
    Binding,
    Frame,
    LowerCtx,
    Lowering,
    as_view,
    constant_value,
    dtype_of,
)
from solar.frontends.jax.lowerings import LOWERINGS
from solar.frontends.jax.primitives import NEWER_BY_NAME, P
from solar.frontends.views import View
from solar.ir.dtypes import DType
from solar.ir.nodes import Origin, Program, Role
from solar.ir.verify import verify
from solar.passes import optimize as run_passes

# Directories whose frames are never the user's (libraries and solar itself).
_LIBRARY_MARKERS = (
    "site-packages",
    "dist-packages",
    "<frozen",
    str(Path(__file__).parents[2]) + os.sep,
)


# ---- where an equation came from -----------------------------------------------------------------


# Primitives bounded by another route than a lowering: what to do instead.
ELSEWHERE = {
    "shard_map": (
        "the program is sharded over a mesh: bound it per rank with --system NAME (`solar specs` lists the "
        "systems), verify its ranks with --mesh"
    ),
}

def user_frames(eqn: JaxprEqn, source_file: str | None) -> list[Frame]:
    """The user's frames of the traceback that produced `eqn`, innermost first: frames in the
    user's file when known, else every frame outside libraries and solar."""
    tb = eqn.source_info.traceback
    if tb is None:
        return []
    codes, lastis = tb.raw_frames()
    frames = [
        Frame(f.file_name, f.line_num, (code, lasti))
        for f, code, lasti in zip(tb.frames, codes, lastis)
    ]
    if source_file:
        mine = [f for f in frames if f.file == source_file]
        if mine:
            return mine
    return [f for f in frames if not any(m in f.file for m in _LIBRARY_MARKERS)]


def source_text(frame: Frame | None) -> str:
    """`file.py:LINE: code` (quotes made single: the IR text quotes sources with ")."""
    if frame is None:
        return ""
    code = linecache.getline(frame.file, frame.line).strip().replace('"', "'")
    return f"{Path(frame.file).name}:{frame.line}: {code}"


# ---- the converter -------------------------------------------------------------------------------


def avals(outvars: Sequence[Any]) -> tuple[tuple[tuple[int, ...], DType], ...]:
    return tuple((tuple(int(s) for s in v.aval.shape), dtype_of(v.aval.dtype)) for v in outvars)


def literal_value(lit: Literal) -> Any:
    arr = np.asarray(lit.val)
    if arr.ndim == 0:
        return arr.item()
    raise SolarError(f"a non-scalar literal of shape {arr.shape} is not supported yet")


def lower_jaxpr(
    state: Lowering,
    b: Any,
    jaxpr: Jaxpr,
    consts: Sequence[Any],
    args: Sequence[Any],
    instance: int | None,
    source: str = "",
) -> list[Any]:
    """Lower every equation of `jaxpr` (constvars bound to `consts`, invars to `args`) and return
    the values of its outputs. `instance=None`: the top level (instances from call sites);
    `source`: the caller's line, for equations whose own trace shows no user frame (a library
    function traced once and cached)."""
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(v: Any) -> Any:
        return literal_value(v) if isinstance(v, Literal) else env[v]

    saved = state.b.origin
    for eqn in jaxpr.eqns:
        outs = lower_eqn(state, b, eqn, [read(v) for v in eqn.invars], instance, source)
        for v, value in zip(eqn.outvars, outs):
            if not isinstance(v, DropVar):
                env[v] = value
    state.b.origin = saved
    return [read(v) for v in jaxpr.outvars]


def lower_eqn(
    state: Lowering, b: Any, eqn: JaxprEqn, args: list[Any], instance: int | None, source: str = ""
) -> list[Any]:
    frames = user_frames(eqn, state.source_file)
    src = source_text(frames[0]) if frames else source
    inst = state.instance_for(frames) if instance is None else instance
    return lower_prim(state, b, eqn.primitive, eqn.params, args, avals(eqn.outvars), inst, src)


def lower_prim(
    state: Lowering,
    b: Any,
    prim: Any,
    params: dict[str, Any],
    args: list[Any],
    out_avals: tuple[tuple[tuple[int, ...], DType], ...],
    instance: int,
    src: str,
) -> list[Any]:
    """Apply the lowering rule of `prim` (one equation) and return its output values."""
    # TF32 only matters for contractions, which are the primitives with a precision parameter
    tf32 = "precision" in params and precision.allow_tf32(params["precision"], state.tf32_default)
    state.b.origin = Origin(prim.name, instance, src, tf32)
    rule = LOWERINGS.get(prim) or LOWERINGS.get(NEWER_BY_NAME.get(prim.name))
    if rule is None:
        raise UnsupportedOpError(
            f"unsupported JAX primitive '{prim.name}'"
            + (f" at {src}" if src else "")
            + "; " + ELSEWHERE.get(prim.name, "solar has no lowering for it yet (`solar ops` lists the supported ops)")
        )
    ctx = LowerCtx(state, b, prim, out_avals, instance, src, lower_jaxpr)
    try:
        out = rule(ctx, *args, **params)
    except SolarError as exc:
        first, *rest = str(exc).split("\n", 1)
        where = f" (while lowering JAX primitive '{prim.name}' at {src or 'the program'})"
        raise type(exc)("\n".join([first + where, *rest])) from None
    return list(out) if prim.multiple_results else [out]


def convert(traced: Any) -> tuple[Program, dict[str, Binding], tuple[str, ...]]:
    """The program of a JaxTraced, for each input/param tensor where its data comes from, and the
    tensor holding each of the traced function's outputs, in order (an input's own name for an
    output that aliases it, see `materialise_outputs`)."""
    closed: ClosedJaxpr = traced.jaxpr
    jaxpr = closed.jaxpr
    b = ProgramBuilder.new(traced.name)
    state = Lowering(b, traced.source_file, precision.config_allows_tf32(traced.precision_config))
    args = []
    for k, (v, arg) in enumerate(zip(jaxpr.invars, traced.args)):
        shape, dtype = avals([v])[0]
        role = Role.PARAM if arg.kind == "param" else Role.INPUT
        name = b.declare(arg.name, shape, dtype, role)
        state.bindings[name] = Binding(arg.kind, k)
        args.append(views.tensor(name, shape, dtype))
    consts = []
    for k, (v, c) in enumerate(zip(jaxpr.constvars, closed.consts)):
        if np.ndim(c) == 0:
            consts.append(np.asarray(c).item())
            continue
        shape, dtype = avals([v])[0]
        name = b.declare(f"const{k}", shape, dtype, Role.PARAM)
        state.bindings[name] = Binding("const", k)
        consts.append(views.tensor(name, shape, dtype))
    jaxpr, consts, args = _unwrap_jit(jaxpr, consts, args)
    outs = lower_jaxpr(state, b, jaxpr, consts, args, None)
    names = materialise_outputs(b, outs, avals(jaxpr.outvars))
    program = run_passes(b.program(program_outputs(b, names)))
    verify(program)
    return program, state.bindings, tuple(names)


def _unwrap_jit(jaxpr: Jaxpr, consts: list, args: list) -> tuple[Jaxpr, list, list]:
    """A program that is one jit call (a jax.jit-decorated forward) is lowered as its body, so its
    equations get instances of their own call sites instead of one for the whole program."""
    if len(jaxpr.eqns) != 1 or jaxpr.eqns[0].primitive is not P.jit_p:
        return jaxpr, consts, args
    eqn = jaxpr.eqns[0]
    if list(eqn.outvars) != list(jaxpr.outvars):
        return jaxpr, consts, args
    env = dict(zip(jaxpr.constvars, consts)) | dict(zip(jaxpr.invars, args))
    inner = eqn.params["jaxpr"]
    inner_args = [literal_value(v) if isinstance(v, Literal) else env[v] for v in eqn.invars]
    inner_consts = [constant_value(c) for c in inner.consts]
    return inner.jaxpr, inner_consts, inner_args


def materialise_outputs(
    b: ProgramBuilder, outputs: Sequence[Any], out_avals: Sequence[tuple[tuple[int, ...], DType]]
) -> list[str]:
    """The tensor holding each output. A temporary returned as is (or a row-major reshape of it)
    becomes the output, also when returned twice; an input or parameter returned as is (or
    reshaped) is an *alias*: its own name is listed, no statement is emitted and nothing is counted
    (jit forwards an input it returns unchanged; a row-major reshape is a bitcast). Anything else
    (another view, a constant) is copied into a fresh output tensor (one zero-FLOP statement).
    `program_outputs` picks the names the program declares as outputs."""
    names: list[str] = []
    for k, (v, (shape, dtype)) in enumerate(zip(outputs, out_avals)):
        if isinstance(v, View):
            same = v.base or v.contiguous_of
            decl = b.tensors.get(same) if same else None
            if decl is not None and decl.role in (Role.TEMP, Role.INPUT, Role.PARAM, Role.OUTPUT):
                names.append(same)
                continue
        v = as_view(v, shape, dtype)
        b.origin = Origin("output_copy", -1 - k)
        names.append(copy(b, f"out{k}", v).base)
    b.origin = None
    return names


def program_outputs(b: ProgramBuilder, names: Sequence[str]) -> list[str]:
    """The distinct names among `names` that the program writes (aliases of inputs left out)."""
    return [n for n in dict.fromkeys(names) if b.tensors[n].role in (Role.TEMP, Role.OUTPUT)]


__all__ = [
    "convert",
    "lower_eqn",
    "lower_jaxpr",
    "lower_prim",
    "materialise_outputs",
    "program_outputs",
    "source_text",
    "user_frames",
]

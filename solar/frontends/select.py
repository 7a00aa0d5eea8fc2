"""Frontend selection: the one place that decides how a model file, an in-memory module or
function, an IR Program or an hf: serving step becomes a Loaded program (torch, JAX, IR text, or
the LLM frontend for what the tracers cannot do)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Sequence

from solar import passes
from solar.errors import (
    IRSyntaxError,
    IRVerifyError,
    LLMError,
    TraceError,
    UnsupportedOpError,
    UsageError,
    message_line,
)
from solar.frontends import jax as jax_frontend
from solar.frontends import usercode
from solar.frontends.detect import check_frontend_choice, file_frontend, framework_of
from solar.frontends.loaded import Loaded, Provenance, Serving
from solar.heap import settled
from solar.ir.nodes import Program, Role
from solar.ir.parser import parse_program
from solar.ir.verify import verify
from solar.userfiles import read_text

if TYPE_CHECKING:
    from solar.frontends.llm import LLMConfig

# Frontend modules imported on first use, through `_frontend` only: the tracers import torch or
# jax, and the LLM frontend (its parser and checker cost a tenth of a second) runs only with an
# endpoint. `import solar.api` pays for none of them.
DEFERRED = (
    "torch", "torch.check", "torch.distributed", "jax.sharded", "torch.hf", "torch.loader", "torch.share", "torch.stitch", "torch.train", "jax.train", "llm",
)


def _frontend(name: str) -> ModuleType:
    """solar.frontends.<name>, one of DEFERRED, imported on first use."""
    assert name in DEFERRED, name
    return importlib.import_module(f"solar.frontends.{name}")

@contextlib.contextmanager
def debug_session(on: bool) -> Iterator[None]:
    """`--debug`: within the block, what the user's code prints is shown (solar.frontends.usercode)
    and the IR is verified after every pass (solar.passes); off, the caller's settings hold."""
    if not on:
        yield
        return
    with usercode.showing(True), passes.verifying(True):
        yield


def check_file(
    path: str | Path, seed: int = 0, mode: str | None = None, infer_structure: bool = False, debug: bool = False
) -> Any:
    """`solar verify`: the model file's IR run by the interpreter against the program itself, op by
    op (solar.frontends.torch.check, solar.frontends.jax.check)."""
    framework = framework_of(path)
    if framework == "ir":
        raise UsageError(
            f"{path}: verify compares a program's IR with the program's own outputs, and IR text "
            "has no program behind it; `solar ir FILE` parses and verifies it"
        )
    with debug_session(debug):
        if framework == "jax":
            return jax_frontend.check_file(path, seed=seed)
        return _frontend("torch.check").check_file(path, seed=seed, mode=mode, infer_structure=infer_structure)


def check_sharded(
    path: str | Path, world: int | None, mesh: str | None, seed: int = 0, mode: str | None = None, debug: bool = False
) -> Any:
    """`solar verify --world-size N / --mesh AxB`: the sharded file's ranks run on the interpreter
    against its single-device original (solar.frontends.torch.distributed, solar.frontends.jax.sharded)."""
    with debug_session(debug):
        if framework_of(path) == "jax":
            return _frontend("jax.sharded").check_sharded_file(path, world, mesh, seed)
        return _frontend("torch.distributed").check_sharded_file(path, world, mesh, seed, mode)


LLM_HINT = (
    "; an LLM can write the IR instead: set SOLAR_LLM_BASE_URL and SOLAR_LLM_MODEL "
    "(or --llm-base-url/--llm-model), see docs/MANUAL.md \"LLM frontend\""
)


@settled
def load(
    model_or_path: Any,
    inputs: Sequence[Any] | None = None,
    mode: str | None = None,
    infer_structure: bool = False,
    train: bool = False,
    loss: str = "sum",
    optimizer: str = "adamw",
    frontend: str = "auto",
    llm: LLMConfig | None = None,
    share_layers: bool = True,
    debug: bool = False,
) -> Loaded:
    """Lower a model file path, or an in-memory torch module with example inputs, to the IR.

    train: one training step (forward, loss, backward, `optimizer` update; see
    solar.frontends.torch.train and solar.frontends.jax.train) instead of the forward pass.

    mode: "train" | "eval" puts the module in that mode before tracing (None: as constructed).
    infer_structure: sample the inputs once and use the structure found (see trace_file).
    frontend: "auto" (the tracer; for a model file, the LLM frontend for what the tracer cannot do
    when `llm`, a solar.frontends.llm.LLMConfig, is given), "torch", "jax" or "llm" (model files).
    share_layers: a PyTorch forward with a stack of identical layers is traced with 4 of them and
    stitched (solar.frontends.torch.share; False: every layer traced).
    debug: show what the program prints and verify the IR after every pass (`debug_session`)."""
    with debug_session(debug):
        return _choose(model_or_path, inputs, mode, infer_structure, train, loss, optimizer, frontend, llm, share_layers)


def _choose(
    model_or_path: Any, inputs: Sequence[Any] | None, mode: str | None, infer_structure: bool, train: bool,
    loss: str, optimizer: str, frontend: str, llm: LLMConfig | None, share_layers: bool,
) -> Loaded:
    if train:
        return _load_train(model_or_path, inputs, mode, loss, optimizer)
    check_frontend_choice(frontend, llm is not None)
    if isinstance(model_or_path, (str, Path)):
        if inputs is not None:
            raise UsageError("inputs are taken from the file's get_inputs(); pass inputs=None with a path")
        if str(model_or_path).startswith("hf:"):
            raise UsageError("an hf: model is one serving step: solar.api.load_hf(spec, Scenario(...)), or `solar analyze hf:... --scenario`")
        loader = file_frontend(model_or_path, frontend, mode, infer_structure)
        if loader == "ir":
            provenance = (Provenance("the whole program", "ir"),)
            return Loaded(
                load_ir_file(model_or_path), (), str(Path(model_or_path).resolve()), None,
                (provenance[0].describe(),), provenance,
            )
        if loader == "torch":
            return _load_torch_or_llm(model_or_path, mode, infer_structure, frontend, llm, share_layers)
        return _load_jax_file(model_or_path, frontend, llm)
    if frontend == "llm":
        raise UsageError("the LLM frontend reads model files; pass a path")
    if isinstance(model_or_path, Program):
        if mode is not None or infer_structure:
            raise UsageError("mode and infer_structure apply to PyTorch programs, not to an IR Program")
        return Loaded(model_or_path, (), None)
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        torch = None
    if torch is not None and isinstance(model_or_path, torch.nn.Module):
        if inputs is None:
            raise UsageError("an in-memory module needs example inputs: solar.analyze(model, inputs, arch=...)")
        return load_module(model_or_path, inputs, mode, infer_structure, share_layers)
    if jax_frontend.is_jax_object(model_or_path):
        if inputs is None:
            raise UsageError("a JAX function or Flax module needs example inputs: solar.analyze(fn, inputs, arch=...)")
        program, traced = jax_frontend.lower_callable(model_or_path, inputs)
        return Loaded(program, traced.flags, traced.source_file, traced)
    raise UsageError(
        f"cannot analyse a {type(model_or_path).__name__}; pass a model file path, a torch.nn.Module "
        "or a JAX function / Flax module with inputs, or a solar IR Program"
    )


@settled
def load_hf(spec: str, step: Any, debug: bool = False) -> Loaded:
    """`hf:<model id or config.json>`: one serving step (solar.frontends.torch.hf.Scenario) of the
    causal LM built from its config, traced as an in-memory module. Identical layers: traced with
    TRACED of them and stitched to N (the per-layer bound is the TRACED + 1 minus TRACED difference);
    otherwise traced whole, and the step built with 0 and 1 decoder layers gives the per-layer bound.
    debug: as `load`."""
    with debug_session(debug):
        return _load_hf(spec, step)


def _load_hf(spec: str, step: Any) -> Loaded:
    hf, stitch = _frontend("torch.hf"), _frontend("torch.stitch")
    layers_traced = stitch.TRACED
    spec = spec[3:] if spec.startswith("hf:") else spec
    built = hf.outline(spec, step) or hf.build(spec, step)  # the full model is traced only if not shared
    why = f"{built.layers} layers (sharing needs {layers_traced})"
    if built.layers >= layers_traced:
        small = hf.build(spec, step, layers=layers_traced)
        why = hf.unshared(built, small)
        if why is not None and built.outline:  # the model built for real decides
            built = hf.build(spec, step)
            why = hf.unshared(built, small)
        if why is None:
            try:
                return _load_hf_shared(built, small)
            except stitch.NotShareable as exc:
                why = str(exc)
    if built.outline:
        built = hf.build(spec, step)
    loaded = load_module(built.module, built.inputs, "eval", False)
    zero, one = (hf.build(spec, step, layers=n) for n in (0, 1))
    parts = (load_module(zero.module, zero.inputs, "eval", False), load_module(one.module, one.inputs, "eval", False))
    line = "per-layer bound: one decoder layer's share (the step built with 0 and with 1 layer; layers identical)"
    notes = (*loaded.notes, *built.notes(), f"layers not shared: {why}")
    return Loaded(loaded.program, loaded.flags, None, loaded.traced, notes, serving=Serving(built, parts, line))


def _load_hf_shared(built: Any, small: Any) -> Loaded:
    """The step of `built` stitched from a trace of `small` (solar.frontends.torch.stitch); the
    per-layer bound is the difference of the programs of TRACED and TRACED + 1 layers."""
    torch_frontend, hf, stitch = _frontend("torch"), _frontend("torch.hf"), _frontend("torch.stitch")
    layers_traced = stitch.TRACED
    traced = torch_frontend.trace_module(small.module, small.inputs, mode="eval")
    shared = stitch.lower_shared(traced, hf.layer_list(small)[0])
    program, stitched = shared.at(built.layers)
    parts = []
    for n in (layers_traced, layers_traced + 1):
        p, t = (program, stitched) if n == built.layers else shared.at(n)
        parts.append(Loaded(p, traced.flags, None, t, tuple(t.notes())))
    line = (
        f"per-layer bound: one decoder layer's share (the step with {layers_traced} and with {layers_traced + 1} "
        "layers; layers identical)"
    )
    sharing = (
        f"layers shared: layers 2..{built.layers - 2} are copies of layer 1 (identical modules, traced "
        f"{layers_traced} of {built.layers} layers)"
    )
    notes = (*stitched.notes(), *built.notes(), sharing)
    serving = Serving(built, (parts[0], parts[1]), line)
    return Loaded(program, traced.flags, None, stitched, notes, serving=serving)


def load_ir_file(path: str | Path) -> Program:
    """An IR text file (as `solar ir` prints it), parsed and verified; a problem is one
    IRSyntaxError / IRVerifyError line starting with the file name."""
    name = Path(path).name
    text = read_text(path, "an IR text file", IRSyntaxError)
    try:
        program = parse_program(text)
    except IRSyntaxError as exc:
        raise IRSyntaxError(f"{name}: {exc}") from None
    try:
        verify(program)
    except IRVerifyError as exc:
        raise IRVerifyError(f"{name}: {message_line(exc)}") from None
    if not any(t.role is Role.OUTPUT for t in program.tensors):
        raise IRVerifyError(
            f"{name}: program {program.name!r} declares no output, so there is nothing to bound; "
            "declare what it computes, e.g. `output y: f32[8]`"
        )
    return program


def load_module(
    model: Any, inputs: Sequence[Any], mode: str | None, infer_structure: bool, share_layers: bool = False
) -> Loaded:
    """An in-memory module traced and lowered (`share_layers`: see solar.frontends.torch.share; off
    by default: the `hf:` steps decide sharing themselves and call this for a full trace)."""
    torch_frontend, share = _frontend("torch"), _frontend("torch.share")
    if share_layers:
        return _shared_loaded(share.trace_module(model, inputs, mode=mode, infer_structure=infer_structure))
    traced = torch_frontend.trace_module(model, inputs, mode=mode, infer_structure=infer_structure)
    return Loaded(
        torch_frontend.lower_traced(traced), traced.flags, None, traced, tuple(traced.notes()),
        notices=tuple(traced.notices()),
    )


# ---- model files: the tracer first, the LLM frontend for what it cannot do ------------------------


def _load_torch_file(
    path: str | Path, mode: str | None, infer_structure: bool, llm: Any = None, share_layers: bool = False
) -> Loaded:
    """Trace and lower; with `llm`, ops without a lowering are synthesised by the model (and every
    layer is traced: the model's rules are asked per traced op)."""
    torch_frontend, share = _frontend("torch"), _frontend("torch.share")
    if share_layers and llm is None:
        return _shared_loaded(share.trace_file(path, mode, infer_structure))
    traced = torch_frontend.trace_file(path, mode, infer_structure)
    fallback = None if llm is None else _frontend("llm").LLMOpRules(llm)
    program = torch_frontend.lower_traced(traced, fallback)
    synthesised = tuple(fallback.provenance) if fallback is not None else ()
    part = "the rest of the program" if synthesised else "the whole program"
    provenance = (Provenance(part, "traced"), *synthesised)
    notes = (*traced.notes(), *(p.describe() for p in provenance))
    notices = tuple(traced.notices())
    return Loaded(program, traced.flags, traced.source_file, traced, notes, provenance, notices=notices)


def _load_jax_file(path: str | Path, frontend: str, llm: Any) -> Loaded:
    """jax.make_jaxpr first; in "auto" mode with an endpoint, a program it cannot trace goes to
    the LLM frontend."""
    try:
        program, traced = jax_frontend.lower_file(path)
    except (TraceError, UnsupportedOpError) as exc:
        if frontend == "auto" and llm is None:
            raise type(exc)(f"{exc}{LLM_HINT}") from None
        if frontend != "auto":
            raise
        program, provenance = _frontend("llm").lower_file(path, llm, str(exc))
        return Loaded(program, (), str(Path(path).resolve()), None, (provenance.describe(),), (provenance,))
    provenance = (Provenance("the whole program", "traced"),)
    return Loaded(program, traced.flags, traced.source_file, traced, (provenance[0].describe(),), provenance)


def _load_torch_or_llm(
    path: str | Path, mode: str | None, infer_structure: bool, frontend: str, llm: Any, share_layers: bool = True
) -> Loaded:
    """The torch tracer first (unless frontend is "llm"); in "auto" mode with an endpoint, what it
    cannot do goes to the LLM frontend: a missing op alone, a program it cannot trace whole."""
    error = "(not traced: --frontend llm)"
    if frontend != "llm":
        try:
            return _load_torch_file(path, mode, infer_structure, llm if frontend == "auto" else None, share_layers)
        except (TraceError, UnsupportedOpError) as exc:
            if frontend == "auto" and llm is None:
                raise type(exc)(f"{exc}{LLM_HINT}") from None
            if frontend != "auto":
                raise
            error = str(exc)
        except LLMError as exc:  # a missing op the model could not write: try the whole program
            error = str(exc)
    if mode is not None or infer_structure:
        raise UsageError("--mode and --infer-structure apply to traced programs, not to the LLM frontend")
    program, provenance = _frontend("llm").lower_file(path, llm, error)
    notes = (provenance.describe(),)
    return Loaded(program, _frontend("torch.loader").framework_flags(), str(Path(path).resolve()), None, notes, (provenance,))


def _shared_loaded(outcome: Any) -> Loaded:
    """The Loaded of a share.Outcome: its stitched program, or its full trace lowered; the note on
    sharing after the trace's own (and the provenance line of a model file, as _load_torch_file)."""
    traced = outcome.traced
    program = outcome.program if outcome.program is not None else _frontend("torch").lower_traced(traced)
    provenance = (Provenance("the whole program", "traced"),) if traced.source_file else ()
    notes = (*traced.notes(), *(p.describe() for p in provenance), *([outcome.note] if outcome.note else []))
    notices = tuple(traced.notices())
    return Loaded(program, traced.flags, traced.source_file, traced, notes, provenance, notices=notices)


def _load_train(model_or_path: Any, inputs: Sequence[Any] | None, mode: str | None, loss: str,
                optimizer: str) -> Loaded:
    """One training step of a PyTorch file or module, or of a JAX file or function."""
    if isinstance(model_or_path, (str, Path)):
        if framework_of(model_or_path) == "jax":
            program, traced, notes = _frontend("jax.train").lower_train_file(model_or_path, loss, optimizer)
            return Loaded(program, traced.flags, traced.source_file, traced, tuple(notes))
        if inputs is not None:
            raise UsageError("inputs are taken from the file's get_inputs(); pass inputs=None with a path")
        train = _frontend("torch.train")
        tt = train.trace_train_file(model_or_path, loss, optimizer, mode or "train")
    else:
        import torch

        if not isinstance(model_or_path, torch.nn.Module) or inputs is None:
            raise UsageError("train=True takes a model file, or a torch.nn.Module with example inputs")
        train = _frontend("torch.train")
        tt = train.trace_train_module(model_or_path, inputs, loss, optimizer, mode or "train")
    tp = train.lower_train(tt)
    mode = f"module mode: {tt.traced.mode} (model.{tt.traced.mode}()), with gradients"
    notes = [mode, *tt.traced.notes()[1:], *tp.notes(tt)]
    return Loaded(tp.program, tt.flags, tt.source_file, tt, tuple(notes))

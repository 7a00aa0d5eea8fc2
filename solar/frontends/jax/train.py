"""Training steps of JAX programs: `jax.value_and_grad` of a loss built from the file's forward (a
Flax Model, or forward(params, *inputs) with get_params()), then an optax update (optax.adamw or
optax.sgd with momentum), traced as ONE jaxpr on abstract values: step(params, opt_state, *inputs)
-> (loss, new params, new optimizer state). Gradients are temps of the step (a jitted JAX step
keeps none); parameters and optimizer state are read once and written once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

from solar.errors import ModelFileError, UsageError
from solar.frontends.detect import LOSSES, loss_spec
from solar.frontends.jax import loader
from solar.frontends.jax.convert import convert
from solar.frontends.jax.loader import Arg, JaxTraced

OPTIMIZERS = ("sgd", "adamw", "none")


def _transform(kind: str) -> Any:
    import optax

    if kind == "adamw":
        return (
            optax.adamw(1e-3),
            "optimizer: optax.adamw(learning_rate=1e-3) (defaults: b1=0.9 b2=0.999 eps=1e-8 weight_decay=1e-4)",
        )
    if kind == "sgd":
        return optax.sgd(
            1e-2, momentum=0.9
        ), "optimizer: optax.sgd(learning_rate=1e-2, momentum=0.9)"
    if kind == "none":
        return None, "optimizer: none (forward + backward only; gradients are the step's outputs)"
    raise UsageError(f"unknown optimizer {kind!r}; use one of {', '.join(OPTIMIZERS)}")


def _loss(spec: str, module: Any) -> Callable[..., Any]:
    if spec in LOSSES:
        reduce = jnp.sum if spec == "sum" else jnp.mean

        def loss(out: Any, *inputs: Any) -> Any:
            leaves = [
                x for x in jax.tree_util.tree_leaves(out) if jnp.issubdtype(x.dtype, jnp.floating)
            ]
            if not leaves:
                raise ModelFileError(
                    "the model returns no floating-point array to build a loss from"
                )
            return sum(reduce(x) for x in leaves)

        return loss
    path, name = loss_spec(spec)  # not None: the named losses returned above
    fn = getattr(loader.import_model_file(path) if path else module, name, None)
    if not callable(fn):
        raise UsageError(f"{path} defines no function {name!r} (the --loss FILE:function form)")
    return fn


def _apply_and_params(module: Any, path: str) -> tuple[Callable, Any, tuple, str | None]:
    """(apply(params, *inputs), abstract params, abstract inputs, source) of a JAX model file."""
    spath = str(Path(path).resolve())
    inputs = loader.abstract(
        loader._as_tuple(loader._call_user(module.get_inputs, "get_inputs()", spath)),
        Path(path).name,
    )
    if hasattr(module, "Model"):
        from flax import linen, nnx

        init = loader._as_tuple(
            loader._call_user(
                getattr(module, "get_init_inputs", lambda: ()), "get_init_inputs()", spath
            )
        )
        model = loader._build_model(module.Model, init, spath)
        if isinstance(model, nnx.Module):
            return (*_nnx_apply(model), inputs, spath)
        if not isinstance(model, linen.Module):
            raise UsageError(
                f"{Path(path).name}: --train supports flax.linen and flax.nnx Models and "
                "forward(params, ...) files"
            )
        variables = loader._trace_step(
            lambda: jax.eval_shape(
                lambda *xs: model.init({"params": jax.random.key(0)}, *xs), *inputs
            ),
            "initialising the Flax model",
            spath,
        )
        return (lambda p, *xs: model.apply(p, *xs)), variables, inputs, spath
    if hasattr(module, "forward") and hasattr(module, "get_params"):
        params = loader.abstract(
            loader._call_user(module.get_params, "get_params()", spath), Path(path).name
        )
        return module.forward, params, inputs, spath
    raise ModelFileError(
        f"{Path(path).name}: --train needs parameters: a Flax class Model, or forward(params, *inputs) with get_params()"
    )


def _nnx_apply(model: Any) -> tuple[Callable, Any]:
    """apply(params, *inputs) of an (abstract) nnx Module: its nnx.Param leaves are what is
    trained; every other variable (batch statistics, RNG state) enters as a constant of the step."""
    from flax import nnx

    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    return (lambda p, *xs: nnx.merge(graphdef, p, rest)(*xs)), params


@dataclass(frozen=True)
class TrainStep:
    """step(state, *inputs) of a JAX model file, with abstract state and inputs."""

    step: Callable[..., Any]
    state: Any  # (params,) or (params, optimizer state), as ShapeDtypeStructs
    inputs: tuple
    arg_names: list[str]
    source_file: str | None
    notes: list[str]


def train_step(path: str | Path, loss: str = "sum", optimizer: str = "adamw") -> TrainStep:
    """The training step of a JAX model file (see the module docstring)."""
    module = loader.import_model_file(path)
    if not hasattr(module, "get_inputs"):
        raise ModelFileError(f"{Path(path).name}: defines no get_inputs()")
    apply, params, inputs, spath = _apply_and_params(module, str(path))
    loss_fn = _loss(loss, module)
    tx, describe = _transform(optimizer)

    def objective(p: Any, *xs: Any) -> Any:
        return loss_fn(apply(p, *xs), *xs)

    if tx is None:

        def step(state: Any, *xs: Any) -> Any:
            return jax.value_and_grad(objective)(state[0], *xs)

        state = (params,)
    else:
        import optax

        def step(state: Any, *xs: Any) -> Any:
            p, opt_state = state
            value, grads = jax.value_and_grad(objective)(p, *xs)
            updates, opt_state = tx.update(grads, opt_state, p)
            return value, optax.apply_updates(p, updates), opt_state

        state = (
            params,
            loader._trace_step(lambda: jax.eval_shape(tx.init, params), "optax init", spath),
        )
    notes = [f"training step: jax.value_and_grad of loss={loss} of the model's output", describe]
    return TrainStep(step, state, inputs, loader._signature_names(apply)[1:], spath, notes)


def trace_train_file(
    path: str | Path, loss: str = "sum", optimizer: str = "adamw"
) -> tuple[JaxTraced, list[str]]:
    ts = train_step(path, loss, optimizer)
    traced = loader._trace(
        ts.step, ts.inputs, ts.state, Path(path).stem, ts.source_file, ts.arg_names
    )
    # state leaves are named 0_<param> (parameters) and 1_<...> (optimizer state)
    args = tuple(
        Arg(a.kind, "opt_" + a.name[2:] if a.name.startswith("1_") else a.name.removeprefix("0_"))
        for a in traced.args
    )
    traced = JaxTraced(
        traced.jaxpr, traced.name, traced.source_file, traced.flags, traced.precision_config, args
    )
    return traced, ts.notes


def lower_train_file(
    path: str | Path, loss: str = "sum", optimizer: str = "adamw"
) -> tuple[Any, JaxTraced, list[str]]:
    traced, notes = trace_train_file(path, loss, optimizer)
    return convert(traced)[0], traced, notes


__all__ = [
    "LOSSES",
    "OPTIMIZERS",
    "TrainStep",
    "lower_train_file",
    "trace_train_file",
    "train_step",
]

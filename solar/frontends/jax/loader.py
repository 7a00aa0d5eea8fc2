"""Loading JAX programs without allocating them: a model file (get_inputs() plus forward(*inputs)
or a Flax Model class) or an in-memory function / Flax module, traced with jax.make_jaxpr on
abstract inputs (jax.ShapeDtypeStruct). Flax parameters are shapes only: linen through
jax.eval_shape(model.init, ...), nnx through nnx.eval_shape and an abstract state."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
from jax.extend.core import ClosedJaxpr

from solar.errors import ModelFileError, SolarError, TraceError
from solar.frontends import usercode
from solar.frontends.jax import precision


@dataclass(frozen=True)
class Arg:
    """One flat argument of the traced function: a user input or a parameter, and its name."""

    kind: str  # "input" | "param"
    name: str


@dataclass(frozen=True)
class JaxTraced:
    """A closed jaxpr plus what the analysis must know about how it was traced."""

    jaxpr: ClosedJaxpr
    name: str
    source_file: str | None
    flags: tuple[tuple[str, bool], ...]
    precision_config: str | None  # jax_default_matmul_precision at trace time
    args: tuple[Arg, ...]  # one per invar of the jaxpr


# ---- files ---------------------------------------------------------------------------------------


from solar.frontends.files import import_model_file  # noqa: E402  (shared by every frontend)
from solar.frontends.files import one_line as _one_line  # noqa: E402
from solar.frontends.files import user_frame as _user_frame  # noqa: E402


def _call_user(fn: Callable, what: str, path: str | None, *args: Any) -> Any:
    """fn(*args) as user code (solar.frontends.usercode: one-line errors naming the user's line)."""
    return usercode.call(fn, what, path, *args)


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def trace_file(path: str | Path) -> JaxTraced:
    """Trace a JAX model file: get_inputs() and either forward(*inputs) or a Flax Model class
    built from get_init_inputs() (see solar.frontends.jax for the convention)."""
    return trace_module(import_model_file(path), path)


def trace_module(module: Any, path: str | Path) -> JaxTraced:
    """Trace an imported model file (`path` names it in messages and source lines)."""
    spath = str(Path(path).resolve())
    stem = Path(path).stem
    if not hasattr(module, "get_inputs"):
        raise ModelFileError(
            f"{Path(path).name}: defines no get_inputs(); a JAX model file defines get_inputs() and "
            "either forward(*inputs) or a Flax class Model (with optional get_init_inputs())"
        )
    inputs = abstract(
        _as_tuple(_call_user(module.get_inputs, "get_inputs()", spath)), Path(path).name
    )
    if hasattr(module, "Model"):
        init = _as_tuple(
            _call_user(getattr(module, "get_init_inputs", lambda: ()), "get_init_inputs()", spath)
        )
        model = _build_model(module.Model, init, spath)
        return trace_callable(model, inputs, stem, spath)
    if hasattr(module, "forward"):
        params = None
        if hasattr(module, "get_params"):
            params = abstract(_call_user(module.get_params, "get_params()", spath), Path(path).name)
        names = _signature_names(module.forward)
        return _trace(
            module.forward, inputs, params, stem, spath, names[1:] if params is not None else names
        )
    raise ModelFileError(
        f"{Path(path).name}: defines neither forward(*inputs) nor a Flax class Model; define one of them"
    )


def _build_model(cls: Any, init: tuple, path: str) -> Any:
    from flax import linen, nnx

    if isinstance(cls, type) and issubclass(cls, nnx.Module):
        takes_rngs = "rngs" in inspect.signature(cls.__init__).parameters

        def make() -> Any:
            return cls(*init, rngs=nnx.Rngs(0)) if takes_rngs else cls(*init)

        return _call_user(lambda: nnx.eval_shape(make), "building Model(*get_init_inputs())", path)
    model = _call_user(cls, "building Model(*get_init_inputs())", path, *init)
    if not isinstance(model, (linen.Module, nnx.Module)):
        raise ModelFileError(
            f"{Path(path).name}: Model(...) is a {type(model).__name__}, not a Flax module; define "
            "a flax.linen or flax.nnx Module, or a function forward(*inputs)"
        )
    return model


# ---- callables -----------------------------------------------------------------------------------


def abstract(tree: Any, where: str = "the inputs") -> Any:
    """Every array leaf replaced by a jax.ShapeDtypeStruct of its shape and dtype (the data is not
    kept); ShapeDtypeStructs and Python scalars pass through."""

    def leaf(x: Any) -> Any:
        if isinstance(x, (jax.ShapeDtypeStruct, bool, int, float)):
            return x
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            try:
                return jax.ShapeDtypeStruct(tuple(int(s) for s in x.shape), x.dtype)
            except TypeError:
                pass
        raise ModelFileError(
            f"{where}: an input of type {type(x).__name__} is not an array; give jax/numpy arrays "
            "or jax.ShapeDtypeStruct"
        )

    return jax.tree_util.tree_map(leaf, tree)


def _source_file(obj: Any) -> str | None:
    """The file defining a function (through jax.jit and functools wrappers) or a module's class."""
    if hasattr(obj, "__wrapped__"):
        obj = inspect.unwrap(obj)
    while hasattr(obj, "func") and not inspect.isfunction(obj):  # functools.partial
        obj = obj.func
    target = obj if inspect.isfunction(obj) or inspect.ismethod(obj) else type(obj)
    try:
        return str(Path(inspect.getsourcefile(target)).resolve())
    except (TypeError, OSError):
        return None


def _signature_names(fn: Any) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def trace_callable(
    obj: Any, inputs: Sequence[Any], name: str | None = None, source_file: str | None = None
) -> JaxTraced:
    """Trace a function or a Flax (linen or nnx) module on abstract versions of `inputs`."""
    from flax import linen, nnx

    inputs = abstract(_as_tuple(inputs))
    source_file = source_file or _source_file(obj)
    name = name or getattr(obj, "__name__", None) or type(obj).__name__
    if isinstance(obj, linen.Module):

        def init(*xs: Any) -> Any:  # keys made inside the trace: nothing runs, nothing compiles
            return obj.init({"params": jax.random.key(0), "dropout": jax.random.key(1)}, *xs)

        variables = _trace_step(
            lambda: jax.eval_shape(init, *inputs),
            "initialising the Flax model",
            source_file,
        )
        names = _signature_names(obj.__call__)
        return _trace(
            lambda v, *xs: obj.apply(v, *xs),
            inputs,
            variables,
            name,
            source_file,
            names,
            linen=True,
        )
    if isinstance(obj, nnx.Module):
        graphdef, state = nnx.split(obj)
        names = _signature_names(obj.__call__)
        return _trace(
            lambda s, *xs: nnx.merge(graphdef, s)(*xs),
            inputs,
            abstract(state),
            name,
            source_file,
            names,
        )
    if not callable(obj):
        raise ModelFileError(f"expected a function or a Flax module, got {type(obj).__name__}")
    return _trace(obj, inputs, None, name, source_file, _signature_names(obj))


def _trace_step(fn: Callable[[], Any], what: str, source_file: str | None) -> Any:
    try:
        return usercode.call(fn, what, source_file)
    except TraceError:
        raise
    except ModelFileError as exc:  # anything the user's code raised while it was traced
        raise TraceError(str(exc)) from None


def _trace(
    fn: Callable,
    inputs: tuple,
    params: Any,
    name: str,
    source_file: str | None,
    arg_names: list[str],
    linen: bool = False,
) -> JaxTraced:
    """make_jaxpr of fn(*inputs), or of fn(params, *inputs); `arg_names` names the inputs."""
    flags = precision.flags()
    config = precision.config_value()
    where = Path(source_file).name if source_file else name
    _check_inputs(inputs, where)
    if params is None:
        closed = _trace_step(
            lambda: jax.make_jaxpr(fn)(*inputs), "tracing with jax.make_jaxpr", source_file
        )
        args = _arg_names(inputs, arg_names, "input")
    else:
        closed = _trace_step(
            lambda: jax.make_jaxpr(fn)(params, *inputs), "tracing with jax.make_jaxpr", source_file
        )
        args = param_names(params, linen) + _arg_names(inputs, arg_names, "input")
    _check_outputs(closed, where)
    if len(args) != len(
        closed.jaxpr.invars
    ):  # pragma: no cover - jax flattens as tree_flatten does
        raise SolarError(
            f"{name}: {len(args)} argument leaves but {len(closed.jaxpr.invars)} jaxpr inputs"
        )
    return JaxTraced(closed, name, source_file, flags, config, tuple(args))


def _check_inputs(inputs: tuple, where: str) -> None:
    """The inputs hold at least one array (Python numbers alone are not a program's data)."""
    leaves = jax.tree_util.tree_leaves(inputs)
    if leaves and not any(isinstance(x, jax.ShapeDtypeStruct) for x in leaves):
        kinds = ", ".join(sorted({type(x).__name__ for x in leaves}))
        raise ModelFileError(
            f"{where}: get_inputs() returned no array (only {kinds}); return a list of arrays or "
            "jax.ShapeDtypeStruct, e.g. [jax.ShapeDtypeStruct((16, 1024), jnp.float32)]"
        )


def _check_outputs(closed: ClosedJaxpr, where: str) -> None:
    """The function returns at least one array; one that takes arrays returns at least one computed
    from them or from its constants (a program of no inputs, an iota say, may make its outputs)."""
    from jax.extend.core import Literal

    outs = closed.jaxpr.outvars
    made = {v: e for e in closed.jaxpr.eqns for v in e.outvars}  # each variable's equation

    def created(v: Any) -> bool:  # a constant, or an array made from constants only (jnp.ones)
        return isinstance(v, Literal) or v in made and all(isinstance(a, Literal) for a in made[v].invars)

    if not outs or (closed.jaxpr.invars and all(created(v) for v in outs)):
        got = "nothing (None)" if not outs else "only constants (arrays it created, such as jnp.ones(...))"
        raise ModelFileError(
            f"{where}: the program returned {got}; forward() (or the Flax module) must return "
            "the output array(s)"
        )


def _key_text(key: Any) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(key)


def param_names(params: Any, linen: bool) -> list[Arg]:
    out = []
    for path, _ in jax.tree_util.tree_flatten_with_path(params)[0]:
        parts = [_key_text(k) for k in path]
        if linen and parts and parts[0] == "params":
            parts = parts[1:]
        if parts and parts[-1] == "value":  # nnx variables flatten through their .value
            parts = parts[:-1]
        out.append(Arg("param", "_".join(parts) or "param"))
    return out


def _arg_names(inputs: tuple, names: list[str], kind: str) -> list[Arg]:
    out = []
    for k, x in enumerate(inputs):
        base = names[k] if k < len(names) else f"x{k}"
        leaves = jax.tree_util.tree_flatten_with_path(x)[0]
        for path, _ in leaves:
            suffix = "_".join(_key_text(p) for p in path)
            out.append(Arg(kind, f"{base}_{suffix}" if suffix else base))
    return out


__all__ = [
    "Arg",
    "JaxTraced",
    "abstract",
    "import_model_file",
    "trace_callable",
    "trace_file",
    "trace_module",
]

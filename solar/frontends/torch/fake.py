"""Fake copies of a model and its inputs for tracing (apart from solar.frontends.torch.loader, which
uses them): real parameters, buffers, tensor attributes and tensors held by plain Python objects
(solar.frontends.torch.held) become fake tensors of the same shape, dtype and strides, so that
tracing allocates nothing the size of the model."""

from __future__ import annotations

import copy
import inspect
from typing import Any, Sequence

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

from solar.errors import ModelFileError
from solar.frontends.torch.held import (
    Binding,
    Place,
    Walk,
    argument_roots,
    children,
    held_names,
    is_state_object,
    module_roots,
    walk,
)
from solar.frontends.usercode import one_line

# Held objects solar refuses, with why and what to do: (what, test of the object's class and
# instance __dict__, reason).
REFUSED_STATE = (
    (
        "a transformers cache with offloading=True",
        lambda cls, own: cls.__module__.startswith("transformers.") and own.get("offloading") is True,
        (
            "it moves each layer's keys and values between host and GPU on CUDA streams, which solar "
            "does not model; build the cache with offloading=False (the bound then reads it from "
            "device memory)"
        ),
    ),
)


def tensor_attributes(model: torch.nn.Module) -> list[tuple[torch.nn.Module, str, str, torch.Tensor]]:
    """Tensors held as plain attributes (neither parameters nor buffers): (module, attribute,
    qualified name, tensor)."""
    out = []
    for prefix, mod in model.named_modules():
        for attr, value in vars(mod).items():
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                out.append((mod, attr, f"{prefix}.{attr}" if prefix else attr, value))
    return out


def fakeify(x: Any, mode: FakeTensorMode) -> Any:
    if isinstance(x, torch.Tensor) and not isinstance(x, FakeTensor):
        return mode.from_tensor(x)
    return x


def fakeify_module(model: torch.nn.Module, mode: FakeTensorMode) -> torch.nn.Module:
    """The fake copy of a model called with tensors only (see `fakeify_program`)."""
    return fakeify_program(model, (), mode)[0]


def fakeify_program(
    model: torch.nn.Module, inputs: Sequence[Any], mode: FakeTensorMode, where: str | None = None
) -> tuple[torch.nn.Module, tuple]:
    """A copy of the model whose real parameters, buffers and tensor attributes are fake tensors
    of the same shape, dtype and strides (no data is copied, tied weights stay tied), and its
    inputs made fake.

    Tensor attributes become non-persistent buffers of the copy, so that forward may update them
    as it may update buffers (torch.export refuses a mutated constant). Tensors held by plain
    objects (a cache kept as an attribute, or passed as an argument of forward: `inputs` may hold
    such objects beside tensors) are faked too and registered as non-persistent buffers, which
    the copy's forward puts back in the objects at each call, so that torch.export tracks them as
    state; the objects passed as arguments are held by the copy, whose forward takes the other
    inputs. Tensors in lists, tuples and dicts of a module alone stay shared (torchvision's
    AnchorGenerator: a real tensor cannot be copied under the fake mode; export reads them as
    constants). Objects with no storage to read (a lock, a stream) are shared, not copied."""
    where = where or type(model).__name__
    positions = tuple(k for k, x in enumerate(inputs) if is_state_object(x))
    holder = [x if k in positions else None for k, x in enumerate(inputs)]
    skip = {id(m) for m in model.modules()}
    roots = module_roots(model) + argument_roots(holder)
    found = walk(roots, skip)
    _refuse(found, where)
    attributes = tensor_attributes(model)
    tensors = list(model.parameters(recurse=True)) + list(model.buffers(recurse=True))
    tensors += [t for _, _, _, t in attributes]
    memo = {id(t): _fake_like(t, mode, where) for t in tensors if not isinstance(t, FakeTensor)}
    for place, t in found.tensors:
        if not place.plain and id(t) not in memo and not isinstance(t, FakeTensor):
            memo[id(t)] = _fake_like(t, mode, where, place.path)
    memo.update((id(t), t) for place, t in found.tensors if place.plain and id(t) not in memo)
    fake_inputs = tuple(fakeify(x, mode) for k, x in enumerate(inputs) if k not in positions)
    if not memo and not attributes and not positions:  # nothing to fake: the model as it is
        return model, fake_inputs
    memo.update((id(o), o) for o in found.opaque)  # shared by the copy, not copied
    model, holder = _copy((model, holder), memo, roots, where)
    for mod, attr, _, value in tensor_attributes(model):
        delattr(mod, attr)
        mod.register_buffer(attr, value, persistent=False)
    _bind_held(model, holder, positions)
    return model, fake_inputs


def _refuse(found: Walk, where: str) -> None:
    for place in found.origin.values():
        value = place.step.get(place.parent)
        own = getattr(value, "__dict__", None)
        for what, test, why in REFUSED_STATE:
            if isinstance(own, dict) and test(type(value), own):
                raise ModelFileError(f"{where}: {place.path} is {what} ({type(value).__name__}): {why}")


def _bind_held(model: torch.nn.Module, holder: list, positions: tuple[int, ...]) -> None:
    """Register the copy's held tensors as buffers and make its forward rebind them (and take
    the inputs but the objects at `positions`, which it holds)."""
    found = walk(module_roots(model) + argument_roots(holder), {id(m) for m in model.modules()})
    state = {id(t): n for n, t in model.named_buffers(remove_duplicate=False)}
    state.update((id(t), n) for n, t in model.named_parameters(remove_duplicate=False))
    for name, t in held_names(model, found, state):
        model.register_buffer(name, t, persistent=False)
        state[id(t)] = name
    places = [(p, state.get(id(t), (t.shape, t.dtype))) for p, t in found.tensors if not p.plain]
    if not places and not positions:
        return
    binding = Binding(tuple(p for p, _ in places), tuple(s for _, s in places), found.origin)
    original = model.forward

    def forward(*args: Any, **kwargs: Any) -> Any:
        rest = iter(args)
        full = [holder[k] if k in positions else next(rest) for k in range(len(holder))]
        undo = binding.bind(model)
        try:
            return original(*full, *rest, **kwargs)
        finally:
            binding.restore(undo)

    signature = inspect.signature(original)
    params = list(signature.parameters.values())
    named = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    drop = {k for k in positions if k < len(params) and params[k].kind in named}
    forward.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for k, p in enumerate(params) if k not in drop]
    )
    model.forward = forward


def held_tensors(model: torch.nn.Module, inputs: Sequence[Any] = ()) -> dict[str, torch.Tensor]:
    """The tensors of a real model (and of the objects among its inputs) that its fake copy holds
    as registered buffers, by the buffer's name (so that a program's buffer can be read back)."""
    holder = [x if is_state_object(x) else None for x in inputs]
    found = walk(module_roots(model) + argument_roots(holder), {id(m) for m in model.modules()})
    state = {id(t): n for n, t in model.named_buffers(remove_duplicate=False)}
    state.update((id(t), n) for n, t in model.named_parameters(remove_duplicate=False))
    state.update((id(t), n) for _, _, n, t in tensor_attributes(model))
    return dict(held_names(model, found, state))


def _copy(objects: tuple, memo: dict, roots: list[tuple[Place, Any]], where: str) -> Any:
    """copy.deepcopy of `objects` with `memo`; where it fails, one line naming the first place
    (from the walk's roots inwards) whose value cannot be copied."""
    before = dict(memo)  # a failed copy leaves what it had copied in the memo
    try:
        return copy.deepcopy(objects, memo)
    except Exception as exc:  # noqa: BLE001  (any failure of a user object's copy)
        seen: set[int] = set()
        place = next(filter(None, (_uncopyable(p, v, before, seen) for p, v in roots)), None)
        what = place.path if place is not None else "the model"
        raise ModelFileError(
            f"{where}: {what} cannot be copied for tracing ({one_line(exc)}); hold tensors in "
            "modules, buffers, plain objects, lists, tuples or dicts, or give the object a __deepcopy__"
        ) from None


def _uncopyable(place: Place, value: Any, memo: dict, seen: set[int]) -> Place | None:
    """The innermost place, at or under `place`, whose value fails to copy while every value it
    holds copies (None: it copies)."""
    if id(value) in seen:
        return None
    seen.add(id(value))
    try:
        copy.deepcopy(value, dict(memo))
    except Exception:  # noqa: BLE001, S110  (its copy fails: look inside)
        pass
    else:
        return None
    for step, child in children(value) or ():
        inner = _uncopyable(Place(value, step, place.path + step.text(), False), child, memo, seen)
        if inner is not None:
            return inner
    return place


def _fake_like(t: torch.Tensor, mode: FakeTensorMode, where: str, path: str | None = None) -> torch.Tensor:
    if type(t).__module__.startswith("torch.distributed.tensor"):
        # a DTensor (a parallelize_module'd weight) stays itself: torch.export's decomposition
        # unwraps it into its local shard, which it cannot do for a fake one
        return t
    if path is not None and t.is_quantized:
        raise ModelFileError(
            f"{where}: the model's tensor {path} is quantized ({t.dtype}), which solar cannot "
            "trace; hold float tensors (quantize inside forward())"
        )
    try:
        fake = mode.from_tensor(t)
    except Exception as exc:  # (a tensor subclass fake tensors cannot stand for)
        if path is None:
            raise
        raise ModelFileError(
            f"{where}: the model's tensor {path} ({type(t).__name__}) has no fake stand-in "
            f"({one_line(exc)}); hold a plain torch.Tensor there"
        ) from None
    return torch.nn.Parameter(fake, requires_grad=t.requires_grad) if isinstance(t, torch.nn.Parameter) else fake

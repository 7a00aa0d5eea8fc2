"""Building a model as on a real CPU without allocating it: small tensors are real, large ones are
*unallocated*.

A model file's constructor (and its get_inputs()) runs under `Unallocated`, a dispatch mode that
decides per op:

- An op whose inputs all hold known values and whose fresh outputs are small (each at most
  SMALL_NUMEL elements, while the real tensors alive stay under REAL_BUDGET_BYTES) runs for real:
  `torch.linspace(0, r, n).tolist()`, `.item()`, init functions on small parameters, rotary
  frequency tables, BatchNorm buffers all see real values.
- Any other op runs on the meta device to get its outputs' shapes, strides and dtypes, and each
  fresh output becomes an *unallocated* CPU tensor: an ordinary torch.Tensor whose storage is
  mapped but never written (so it costs address space, not memory), marked as holding unknown
  values. An in-place op on unknown data, or with unknown operands, touches nothing and marks what
  it writes as unknown.
- Views run for real (they only make metadata) and share their base's storage, known or not.
- Reading a value of unknown data (`.item()`, `.tolist()`, `bool(t)`, data-dependent shapes) is a
  one-line error saying which op read it.

Because every tensor is a plain CPU tensor, everything the constructor does behaves as on a real
CPU: `.half()`, `.to(torch.bfloat16)`, `.to(memory_format=torch.channels_last)`, `Module._apply`,
`register_buffer`, tied weights, `swap_tensors`. Tracing then turns every parameter and buffer
into a fake tensor of the same shape, dtype and strides (nothing is read)."""

from __future__ import annotations

import mmap
import sys
import weakref
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

# A fresh output of at most this many elements, computed from known values, is computed for real.
SMALL_NUMEL = 1 << 16
# Real tensors made while building stay under this many bytes in all (alive at once); past it,
# fresh outputs are unallocated.
REAL_BUDGET_BYTES = 256 << 20
# Unallocated tensors of at least this many bytes are mapped without reserving memory (Linux's
# MAP_NORESERVE), so a single tensor larger than RAM + swap can still exist.
NORESERVE_BYTES = 64 << 20
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000) if sys.platform.startswith("linux") else 0

aten = torch.ops.aten


class UnknownValueError(RuntimeError):
    """User code read the value of a tensor solar did not allocate (raised inside user code, so
    the loader reports it with the user's line, as any other failure of the constructor)."""


class Unallocated(TorchDispatchMode):
    """See the module docstring. `unknown` holds the storages of unallocated tensors and of every
    tensor whose values came from one."""

    def __init__(
        self, small_numel: int = SMALL_NUMEL, budget_bytes: int = REAL_BUDGET_BYTES
    ) -> None:
        super().__init__()
        self.small_numel = small_numel
        self.budget_bytes = budget_bytes
        self.unknown: weakref.WeakSet = weakref.WeakSet()
        self.real_bytes = 0  # bytes of real fresh outputs alive now

    # ---- what is known -------------------------------------------------------------------------

    def is_unknown(self, t: torch.Tensor) -> bool:
        return t.untyped_storage() in self.unknown

    def _mark_unknown(self, t: torch.Tensor) -> None:
        self.unknown.add(t.untyped_storage())

    def _count_real(self, t: torch.Tensor) -> None:
        storage = t.untyped_storage()
        nbytes = storage.nbytes()
        self.real_bytes += nbytes
        weakref.finalize(storage, self._release, nbytes)

    def _release(self, nbytes: int) -> None:
        self.real_bytes -= nbytes

    # ---- dispatch ------------------------------------------------------------------------------

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.is_view or func in _METADATA_OPS:
            return func(*args, **kwargs)  # metadata only: shares the (known or unknown) storage
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        unknown_in = any(self.is_unknown(t) for t in tensors)
        schema = func._schema
        if not unknown_in and (schema.is_mutable or func in _VALUE_OPS):
            return func(*args, **kwargs)  # writes known tensors with known values, or reads one
        if unknown_in and func is aten._local_scalar_dense.default and _in_weight_init():
            return _neutral(tensors[0].dtype)
        if unknown_in and (func in _VALUE_OPS or _returns_values(schema)):
            raise UnknownValueError(
                f"{func} reads the value of a tensor solar does not allocate (it holds more than "
                f"{self.small_numel} elements, or was computed from one); model construction may "
                "only read values of small tensors"
            )
        if unknown_in and _writes_only_itself(schema, args, kwargs):
            # an in-place op on unknown data whose only tensor is the one it writes and returns
            # (weight init's uniform_, erfinv_, clamp_, mul_ by a number): it writes nothing known,
            # and its meta run (a Python decomposition for clamp_, ~17 ms) would only repeat the shape
            return args[0]
        metas, meta_out = self._on_meta(func, args, kwargs)
        if meta_out is NotImplemented:  # no meta kernel: compute for real when that is affordable
            if unknown_in:
                raise UnknownValueError(
                    f"{func} has no shape rule and reads a tensor solar does not allocate"
                )
            return self._real(func, args, kwargs)
        if schema.is_mutable:  # unknown operands: nothing is written, what is written is unknown
            for arg, value in zip(schema.arguments, args):
                if (
                    arg.alias_info is not None
                    and arg.alias_info.is_write
                    and isinstance(value, torch.Tensor)
                ):
                    self._mark_unknown(value)
            back = {id(m): t for t, m in metas.items()}
            return tree_map(
                lambda m: back.get(id(m), m) if isinstance(m, torch.Tensor) else m, meta_out
            )
        fresh = [m for m in tree_flatten(meta_out)[0] if isinstance(m, torch.Tensor)]
        small = all(m.numel() <= self.small_numel for m in fresh)
        nbytes = sum(m.numel() * m.element_size() for m in fresh)
        if not unknown_in and small and self.real_bytes + nbytes <= self.budget_bytes:
            return self._real(func, args, kwargs)
        return tree_map(
            lambda m: self._unallocated(m) if isinstance(m, torch.Tensor) else m, meta_out
        )

    def _real(self, func, args, kwargs):
        out = func(*args, **kwargs)
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self._count_real(t)
        return out

    def _on_meta(self, func, args, kwargs) -> tuple[dict, Any]:
        """The op run on meta copies of its tensor arguments: (real tensor -> meta copy, output)."""
        metas: dict[torch.Tensor, torch.Tensor] = {}

        def to_meta(x: Any) -> Any:
            if not isinstance(x, torch.Tensor):
                return _meta_device(x)
            if x not in metas:
                metas[x] = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device="meta")
            return metas[x]

        meta_args, meta_kwargs = tree_map(to_meta, (args, kwargs))
        if any(a.name == "device" for a in func._schema.arguments):
            meta_kwargs["device"] = torch.device("meta")
        meta_kwargs.pop("pin_memory", None)
        try:
            out = func(*meta_args, **meta_kwargs)
        except NotImplementedError:
            return metas, NotImplemented
        except RuntimeError as exc:
            if "meta" in str(exc).lower() and "not implemented" in str(exc).lower():
                return metas, NotImplemented
            raise
        return metas, out

    def _unallocated(self, m: torch.Tensor) -> torch.Tensor:
        t = unallocated_like(m)
        self._mark_unknown(t)
        return t


def unallocated_like(m: torch.Tensor) -> torch.Tensor:
    """A CPU tensor with m's size, stride and dtype whose memory is mapped and never written."""
    span = 1 + sum((s - 1) * st for s, st in zip(m.size(), m.stride()) if s > 0) if m.numel() else 0
    nbytes = span * m.element_size()
    if nbytes < NORESERVE_BYTES or not _MAP_NORESERVE:
        return torch.empty_strided(m.size(), m.stride(), dtype=m.dtype)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
    buffer = mmap.mmap(-1, nbytes, flags=flags)
    raw = torch.frombuffer(buffer, dtype=torch.uint8)
    return raw.view(m.dtype).as_strided(m.size(), m.stride())


def _in_weight_init() -> bool:
    """A frame of torch.nn.init is running: its reads of values (a rejection loop's `mask.any()`)
    only decide the values it writes, never a shape, so they may get a neutral answer."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.endswith(_INIT_FILE):
            return True
        frame = frame.f_back
    return False


_INIT_FILE = str(Path("torch") / "nn" / "init.py")


def _neutral(dtype: torch.dtype) -> Any:
    """The answer to a read inside weight init: False, 0 or 0.0 by the tensor's dtype (for the
    rejection loop of trunc_normal_, "no sample was rejected")."""
    if dtype == torch.bool:
        return False
    return 0.0 if dtype.is_floating_point or dtype.is_complex else 0


def _meta_device(x: Any) -> Any:
    if isinstance(x, torch.device):
        return torch.device("meta")
    return x


def _writes_only_itself(schema: torch.FunctionSchema, args: tuple, kwargs: dict) -> bool:
    """`self.op_(numbers...)`: the op writes its first argument and returns it, and no other
    argument holds a tensor."""
    if not schema.arguments or len(schema.returns) != 1:
        return False
    first, ret = schema.arguments[0].alias_info, schema.returns[0].alias_info
    if first is None or not first.is_write or ret is None or ret.before_set != first.before_set:
        return False
    if any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments[1:]):
        return False
    rest = tree_flatten((args[1:], kwargs))[0]
    return bool(args) and isinstance(args[0], torch.Tensor) and not any(isinstance(x, torch.Tensor) for x in rest)


def _returns_values(schema: torch.FunctionSchema) -> bool:
    """The op returns a Python value (a number, a bool, a list of them), not only tensors."""
    return any("Tensor" not in str(r.type) for r in schema.returns)


# Ops that only change metadata (no data is read or written), beyond the view ops.
_METADATA_OPS = frozenset(
    {aten.set_.source_Tensor, aten.set_.source_Storage_storage_offset, aten.resize_.default}
)
# Ops that read values out of a tensor into Python.
_VALUE_OPS = frozenset(
    {
        aten._local_scalar_dense.default,
        aten.equal.default,
        aten.is_nonzero.default,
        aten.allclose.default,
        aten.nonzero.default,
        aten._unique2.default,
        aten.unique_dim.default,
        aten.unique_consecutive.default,
        aten.masked_select.default,
        aten.repeat_interleave.Tensor,
    }
)

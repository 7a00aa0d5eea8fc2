"""`solar calibrate --dispatch`: the sequential-dispatch measurements behind the `eager_host` and
`recurrence` levels (docs/BOUNDS.md §17, §18): the host's own time per eager PyTorch op (many
back-to-back calls of a tiny op, the host-side slope; per ATen op, views included) and per
nn.Module call, a cuDNN RNN call's host time per layer-step (per hidden size and batch), CUDA-graph
replay per kernel, JAX dispatch of a jitted call, a grid-wide barrier, and how far ahead of the
timed region `solar validate`'s timing loop lets the host run. Each is a minimum (the lead: a
maximum) over repeated runs; everything is written with date, host CPU and framework versions."""

from __future__ import annotations

import datetime as _dt
import platform
import time
from typing import Any, Callable

from solar.errors import message_line
from solar.validate.timing import event_seconds, time_cuda

# Calls per timed run (two lengths: the slope removes the loop's fixed cost) and runs per op. The
# longer run stays far below the CUDA launch queue's depth, so a host call never waits for the GPU.
SHORT, LONG, RUNS = 16, 96, 9


def host_cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_slope(fn: Callable[[], object], sync: Callable[[], object], runs: int = RUNS) -> float:
    """Host seconds per call of `fn`: (t(LONG) - t(SHORT)) / (LONG - SHORT), t(n) the least over
    `runs` runs of the host's wall time to issue n back-to-back calls (no synchronisation inside;
    one after each run). The least times shed the runs an interrupt slowed down."""
    best = {SHORT: float("inf"), LONG: float("inf")}
    for _ in range(runs):
        for n in (SHORT, LONG):
            sync()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best[n] = min(best[n], time.perf_counter() - t0)
            sync()
    return (best[LONG] - best[SHORT]) / (LONG - SHORT)


def warm_slope(fn: Callable[[], object], sync: Callable[[], object]) -> float:
    """host_slope of `fn` after three calls that warm its caches (kernels loaded, plans made)."""
    for _ in range(3):
        fn()
    sync()
    return host_slope(fn, sync)


def torch_op_table(torch: Any, dev: str) -> dict[str, list[Callable[[], object]]]:
    """Tiny calls of the ATen ops eager programs make, keyed as the exported graph names them before
    decomposition; several variants per op (the op's floor is the least of them)."""
    F = torch.nn.functional
    r = lambda *s, dt=torch.float32: torch.randn(*s, device=dev, dtype=dt)  # noqa: E731
    x, xh, v, m = r(2, 8, 8, 8), r(2, 8, 8, 8, dt=torch.bfloat16), r(64), r(8, 8)
    z = torch.zeros(64, device=dev)
    y = r(64)
    w3, w1, wd, b8 = r(8, 8, 3, 3), r(8, 8, 1, 1), r(8, 1, 3, 3), r(8)
    w3h = w3.to(torch.bfloat16)
    rm, rv = torch.zeros(8, device=dev), torch.ones(8, device=dev)
    s3, w1d = r(2, 8, 16), r(8, 8, 3)
    q = r(1, 2, 8, 16)
    lstm = torch.nn.LSTM(8, 8, batch_first=True).to(dev)
    gru = torch.nn.GRU(8, 8, batch_first=True).to(dev)
    seq = r(1, 1, 8)
    count = torch.zeros((), dtype=torch.long, device=dev)  # a batch norm's num_batches_tracked
    flag, m64 = torch.zeros(64, dtype=torch.bool, device=dev), r(2, 64)
    return {
        "aten.add.Tensor": [lambda: v + v, lambda: torch.add(v, v), lambda: v + 1.0, lambda: x + x],
        "aten.add_.Tensor": [lambda: y.add_(z), lambda: count.add_(1)],
        "aten.sub.Tensor": [lambda: v - v],
        "aten.mul.Tensor": [lambda: v * v, lambda: v * 2.0],
        "aten.mul_.Tensor": [lambda: y.mul_(1.0)],
        "aten.div.Tensor": [lambda: v / 2.0],
        "aten.relu.default": [lambda: torch.relu(v), lambda: F.relu(v), lambda: torch.relu(x)],
        "aten.relu_.default": [lambda: y.relu_(), lambda: F.relu(y, inplace=True)],
        "aten.hardtanh_.default": [lambda: F.relu6(y, inplace=True), lambda: F.hardtanh(y, inplace=True)],
        "aten.hardtanh.default": [lambda: F.hardtanh(v)],
        "aten.tanh.default": [lambda: torch.tanh(v)],
        "aten.sigmoid.default": [lambda: torch.sigmoid(v)],
        "aten.exp.default": [lambda: torch.exp(v)],
        "aten.gelu.default": [lambda: F.gelu(v)],
        "aten.clamp_min.default": [lambda: torch.clamp_min(v, 0.0)],
        "aten.fill_.Scalar": [lambda: y.fill_(1.0)],
        "aten.zero_.default": [lambda: y.zero_()],
        "aten.copy_.default": [lambda: y.copy_(z)],
        "aten.conv2d.default": [
            lambda: F.conv2d(x, w3, b8, padding=1), lambda: F.conv2d(x, w3, padding=1), lambda: F.conv2d(x, w1),
            lambda: F.conv2d(x, w3, stride=2),
            lambda: F.conv2d(x, wd, groups=8, padding=1), lambda: F.conv2d(xh, w3h, padding=1),
        ],
        "aten.conv1d.default": [lambda: F.conv1d(s3, w1d, padding=1)],
        "aten.batch_norm.default": [
            lambda: F.batch_norm(x, rm, rv, b8, b8, training=True),
            lambda: F.batch_norm(x, rm, rv, b8, b8, training=False),
        ],
        "aten.layer_norm.default": [lambda: F.layer_norm(m, (8,))],
        "aten.linear.default": [lambda: F.linear(m, m, b8), lambda: F.linear(m, m)],
        "aten.matmul.default": [lambda: m @ m],
        "aten.bmm.default": [lambda: torch.bmm(s3, s3.transpose(1, 2))],
        "aten.max_pool2d.default": [lambda: F.max_pool2d(x, 2), lambda: F.max_pool2d(x, 3, 2, 1)],
        "aten.avg_pool2d.default": [lambda: F.avg_pool2d(x, 2)],
        "aten.adaptive_avg_pool2d.default": [lambda: F.adaptive_avg_pool2d(x, 1)],
        "aten.mean.dim": [lambda: x.mean(dim=(2, 3))],
        "aten.sum.dim_IntList": [lambda: x.sum(dim=1)],
        "aten.softmax.int": [lambda: torch.softmax(m, -1)],
        "aten.cat.default": [lambda: torch.cat([v, v])],
        "aten.scaled_dot_product_attention.default": [lambda: F.scaled_dot_product_attention(q, q, q)],
        "aten.dropout.default": [lambda: F.dropout(v, 0.0, True), lambda: F.dropout(v, 0.5, True)],
        "solar.lstm.default": [lambda: lstm(seq)],
        "solar.gru.default": [lambda: gru(seq)],
        # ops the benchmarks call that solar may fold away (input-independent masks) or that
        # launched kernels the table lacked: measured, so they need not take the least floor
        "aten.ones.default": [lambda: torch.ones(64, device=dev)],
        "aten.zeros.default": [lambda: torch.zeros(64, device=dev)],
        "aten.zeros_like.default": [lambda: torch.zeros_like(v)],
        "aten.randn.default": [lambda: torch.randn(64, device=dev)],
        "aten.tril.default": [lambda: torch.tril(m)],
        "aten.eq.Scalar": [lambda: v == 0],
        "aten.bitwise_not.default": [lambda: ~flag],
        "aten.cumsum.default": [lambda: torch.cumsum(v, 0)],
        "aten.masked_fill.Scalar": [lambda: v.masked_fill(flag, 0.0)],
        "aten.pow.Tensor_Scalar": [lambda: v**2],
        "aten.stack.default": [lambda: torch.stack([v, v])],
        "aten.pad.default": [lambda: F.pad(v, (1, 1))],
        "aten.einsum.default": [lambda: torch.einsum("ij,jk->ik", m, m)],
        "aten.linalg_vector_norm.default": [lambda: torch.linalg.vector_norm(v)],
        "aten.conv_transpose2d.input": [lambda: F.conv_transpose2d(x, w3)],
        "aten.to.dtype_layout": [lambda: v.to(dtype=torch.float16), lambda: v.to(device=dev)],
        "aten.split.Tensor": [lambda: v.split(32)],
        "aten.expand_as.default": [lambda: v.expand_as(m64)],
        "aten.unfold.default": [lambda: v.unfold(0, 8, 8)],
        # views and other ops that launch no kernel
        "aten.view.default": [lambda: v.view(8, 8)],
        "aten.reshape.default": [lambda: v.reshape(8, 8)],
        "aten.flatten.using_ints": [lambda: x.flatten(1)],
        "aten.unflatten.int": [lambda: v.unflatten(0, (8, 8))],
        "aten.transpose.int": [lambda: m.transpose(0, 1)],
        "aten.t.default": [lambda: m.t()],
        "aten.permute.default": [lambda: x.permute(0, 2, 3, 1)],
        "aten.select.int": [lambda: m[0]],
        "aten.slice.Tensor": [lambda: m[:, :4]],
        "aten.unsqueeze.default": [lambda: v.unsqueeze(0)],
        "aten.squeeze.dim": [lambda: m[None].squeeze(0)],
        "aten.expand.default": [lambda: v.expand(2, 64)],
        "aten.contiguous.default": [lambda: v.contiguous()],
        "aten.alias.default": [lambda: torch.ops.aten.alias(v)],
        "aten.detach.default": [lambda: v.detach()],
    }


# Ops of the table that certainly launch a kernel on every call (the floor of an op solar lowers to
# work and the table lacks is the least of these); the others may launch none.
KERNEL_OPS = (
    "aten.add.Tensor", "aten.add_.Tensor", "aten.sub.Tensor", "aten.mul.Tensor", "aten.mul_.Tensor",
    "aten.div.Tensor", "aten.relu.default", "aten.relu_.default", "aten.hardtanh_.default",
    "aten.hardtanh.default", "aten.tanh.default", "aten.sigmoid.default", "aten.exp.default",
    "aten.gelu.default", "aten.clamp_min.default", "aten.fill_.Scalar", "aten.zero_.default",
    "aten.copy_.default",
)


def measure_torch_ops(torch: Any, dev: str, sync: Callable[[], object]) -> tuple[dict[str, float], dict[str, str]]:
    """{op: least host seconds per call over its variants}, minus the timing loop's own cost per
    call (an empty call), and {op: error} for variants that could not run."""
    empty = host_slope(lambda: None, sync)
    floors: dict[str, float] = {}
    errors: dict[str, str] = {}
    for op, variants in torch_op_table(torch, dev).items():
        for fn in variants:
            try:
                with torch.no_grad():
                    t = warm_slope(fn, sync) - empty
            except Exception as exc:  # an op this build cannot run is left out, and said
                errors[op] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
                continue
            if t > 0:
                floors[op] = min(floors.get(op, t), t)
    return floors, errors


def type_name(cls: type) -> str:
    """A module class as torch.export's nn_module_stack names it."""
    return f"{cls.__module__}.{cls.__qualname__}"


def module_table(torch: Any, dev: str) -> dict[str, list[Callable[[], object]]]:
    """Tiny calls of nn.Module leaves (train mode, as the benchmarks run them), keyed by type name;
    the variants of one type span its arguments (the floor is their least)."""
    nn = torch.nn
    r = lambda *s: torch.randn(*s, device=dev)  # noqa: E731
    x, x1, v, m, s3 = r(2, 8, 8, 8), r(2, 8), r(64), r(8, 8), r(2, 8, 16)
    mods: dict[type, list[tuple[Any, Any]]] = {
        nn.Identity: [(nn.Identity(), x)],
        nn.Conv2d: [(nn.Conv2d(8, 8, 3, padding=1), x), (nn.Conv2d(8, 8, 1, bias=False), x),
                    (nn.Conv2d(8, 8, 3, stride=2, groups=8, bias=False), x)],
        nn.Conv1d: [(nn.Conv1d(8, 8, 3, padding=1), s3)],
        nn.ConvTranspose2d: [(nn.ConvTranspose2d(8, 8, 2, stride=2), x)],
        nn.BatchNorm2d: [(nn.BatchNorm2d(8), x), (nn.BatchNorm2d(8).eval(), x)],
        nn.BatchNorm1d: [(nn.BatchNorm1d(8), x1), (nn.BatchNorm1d(8).eval(), x1)],
        nn.LayerNorm: [(nn.LayerNorm(8), m)],
        nn.Linear: [(nn.Linear(8, 8), m), (nn.Linear(8, 8, bias=False), m)],
        nn.ReLU: [(nn.ReLU(), v), (nn.ReLU(inplace=True), v)],
        nn.ReLU6: [(nn.ReLU6(), v), (nn.ReLU6(inplace=True), v)],
        nn.GELU: [(nn.GELU(), v)],
        nn.Tanh: [(nn.Tanh(), v)],
        nn.Sigmoid: [(nn.Sigmoid(), v)],
        nn.Softmax: [(nn.Softmax(dim=-1), m)],
        nn.Dropout: [(nn.Dropout(0.0), v), (nn.Dropout(0.5), v), (nn.Dropout(0.0).eval(), v)],
        nn.MaxPool2d: [(nn.MaxPool2d(2), x), (nn.MaxPool2d(3, 2, 1), x)],
        nn.AvgPool2d: [(nn.AvgPool2d(2), x)],
        nn.AdaptiveAvgPool2d: [(nn.AdaptiveAvgPool2d(1), x), (nn.AdaptiveAvgPool2d((1, 1)), x)],
        nn.Flatten: [(nn.Flatten(), x)],
    }
    table: dict[str, list[Callable[[], object]]] = {}
    for cls, variants in mods.items():
        table[type_name(cls)] = [_bind(mod.to(dev), arg) for mod, arg in variants]
    return table


# The eager ops of each variant of module_table, in its order, as torch.export records them before
# decomposition (tests/backends/test_eager_host_modules.py checks them): a leaf module call whose
# ops are exactly a variant's is a call of that variant (a training-mode batch norm also counts its
# batches; an in-place ReLU calls relu_).
_BN = (("aten.add_.Tensor", "aten.batch_norm.default"), ("aten.batch_norm.default",))
VARIANT_OPS: dict[str, tuple[tuple[str, ...], ...]] = {
    "torch.nn.modules.linear.Identity": ((),),
    "torch.nn.modules.conv.Conv2d": (("aten.conv2d.default",),) * 3,
    "torch.nn.modules.conv.Conv1d": (("aten.conv1d.default",),),
    "torch.nn.modules.conv.ConvTranspose2d": (("aten.conv_transpose2d.input",),),
    "torch.nn.modules.batchnorm.BatchNorm2d": _BN,
    "torch.nn.modules.batchnorm.BatchNorm1d": _BN,
    "torch.nn.modules.normalization.LayerNorm": (("aten.layer_norm.default",),),
    "torch.nn.modules.linear.Linear": (("aten.linear.default",),) * 2,
    "torch.nn.modules.activation.ReLU": (("aten.relu.default",), ("aten.relu_.default",)),
    "torch.nn.modules.activation.ReLU6": (("aten.hardtanh.default",), ("aten.hardtanh_.default",)),
    "torch.nn.modules.activation.GELU": (("aten.gelu.default",),),
    "torch.nn.modules.activation.Tanh": (("aten.tanh.default",),),
    "torch.nn.modules.activation.Sigmoid": (("aten.sigmoid.default",),),
    "torch.nn.modules.activation.Softmax": (("aten.softmax.int",),),
    "torch.nn.modules.dropout.Dropout": (("aten.dropout.default",),) * 3,
    "torch.nn.modules.pooling.MaxPool2d": (("aten.max_pool2d.default",),) * 2,
    "torch.nn.modules.pooling.AvgPool2d": (("aten.avg_pool2d.default",),),
    "torch.nn.modules.pooling.AdaptiveAvgPool2d": (("aten.adaptive_avg_pool2d.default",),) * 2,
    "torch.nn.modules.flatten.Flatten": (("aten.flatten.using_ints",),),
}


def ops_key(ops: tuple[str, ...]) -> str:
    """A leaf call's eager ops as one key of a host profile's `torch_module_ops_seconds`."""
    return " ".join(ops)


def variant_floors(variants: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per module class and op sequence (ops_key), the least time of its variants with those ops
    (module_floors' `module_variant_seconds`, in module_table's order: VARIANT_OPS); a class whose
    variants all run the same ops has its class floor only and is left out."""
    out: dict[str, dict[str, float]] = {}
    for cls, times in variants.items():
        ops = VARIANT_OPS.get(cls, ())
        if len(set(ops)) < 2 or len(ops) != len(times):
            continue
        for key, t in zip(ops, times):
            if t > 0:
                out.setdefault(cls, {})[ops_key(key)] = min(out.get(cls, {}).get(ops_key(key), t), t)
    return out


def _bind(mod: Any, arg: Any) -> Callable[[], object]:
    return lambda: mod(arg)


def module_floors(torch: Any, dev: str, sync: Callable[[], object]) -> dict[str, Any]:
    """Least host seconds per call of each module type (minus an empty lambda's), per variant too."""
    empty = host_slope(lambda: None, sync)
    floors: dict[str, float] = {}
    variants: dict[str, list[float]] = {}
    with torch.no_grad():
        for name, fns in module_table(torch, dev).items():
            for fn in fns:
                t = warm_slope(fn, sync) - empty
                variants.setdefault(name, []).append(t)
                if t > 0:
                    floors[name] = min(floors.get(name, t), t)
    return {"module_seconds": floors, "module_variant_seconds": variants, "empty_call_seconds": empty}


# RNN variants: (cell, hidden, batch, layers, bidirectional); each timed at two sequence lengths.
RNN_SHAPES = [(h, b, layers, bi) for h, b in ((8, 1), (256, 10)) for layers in (1, 2) for bi in (False, True)]
RNN_STEPS = (8, 40)  # at most 40 x 2 x 2 = 160 layer-steps per call: far below the launch queue's depth


def rnn_calls(torch: Any, dev: str, sync: Callable[[], object], runs: int = 7) -> list[dict[str, Any]]:
    """Host seconds of one nn.LSTM / nn.GRU call (initial state given) started on an idle GPU (least
    of `runs`), and its event-timed seconds, per (cell, hidden, batch, layers, bidirectional, steps)."""
    out = []
    for cell in ("LSTM", "GRU"):
        for hidden, batch, layers, bi in RNN_SHAPES:
            mod = getattr(torch.nn, cell)(hidden, hidden, layers, batch_first=True, bidirectional=bi).to(dev)
            h = torch.zeros(layers * (2 if bi else 1), batch, hidden, device=dev)
            state = (h, h.clone()) if cell == "LSTM" else h  # given, as the benchmarks give it: no zeros inside
            for steps in RNN_STEPS:
                x = torch.randn(batch, steps, hidden, device=dev)
                host, event = float("inf"), float("inf")
                with torch.no_grad():
                    for _ in range(2):
                        mod(x, state)
                    for _ in range(runs):
                        sync()
                        t0 = time.perf_counter()
                        mod(x, state)
                        host = min(host, time.perf_counter() - t0)
                        sync()
                    if dev == "cuda":
                        for _ in range(runs):
                            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                            sync()
                            s.record()
                            mod(x, state)
                            e.record()
                            sync()
                            event = min(event, s.elapsed_time(e) / 1e3)
                out.append({"cell": cell, "hidden": hidden, "batch": batch, "layers": layers,
                            "directions": 2 if bi else 1, "steps": steps, "host_seconds": host,
                            "event_seconds": event if event < float("inf") else None})
    return out


def rnn_fit(calls: list[dict[str, Any]], key: str = "host_seconds") -> dict[tuple[str, int, int], dict[str, float]]:
    """Per (cell, hidden, batch), and per cell over all shapes ((cell, 0, 0)), the host floor `call
    + step * steps * layers * directions` below every measured call of it: `step` the least slope
    of `key` (host or event-timed seconds) per layer-step over pairs of calls of one shape that
    differ in one of steps, layers or directions only, `call` the least remainder. cuDNN's host time
    per step depends on the shape (constant in steps at hidden 8, ~10 us per step at 256)."""
    keys = ("hidden", "batch", "layers", "directions", "steps")
    n = lambda c: c["steps"] * c["layers"] * c["directions"]  # noqa: E731
    fit = {}
    shapes = sorted({(c["cell"], c["hidden"], c["batch"]) for c in calls})
    for cell, hidden, batch in [*shapes, *sorted({(s[0], 0, 0) for s in shapes})]:
        rows = [c for c in calls if c["cell"] == cell and c[key] is not None
                and (hidden == 0 or (c["hidden"], c["batch"]) == (hidden, batch))]
        slopes = [
            (b[key] - a[key]) / (n(b) - n(a))
            for a in rows for b in rows if n(b) > n(a) and sum(a[k] != b[k] for k in keys) == 1
        ]
        if not rows or not slopes:
            continue
        step = max(0.0, min(slopes))
        call = min(c[key] - step * n(c) for c in rows)
        fit[(cell, hidden, batch)] = {"step_seconds": step, "call_seconds": max(0.0, call), "slopes": len(slopes)}
    return fit


# The recurrent ops of the eager op list (solar.frontends.torch.lowerings.recurrent) by cell, and
# the module whose call is every module call's floor.
RNN_OPS = {"LSTM": "solar.lstm.default", "GRU": "solar.gru.default"}
EMPTY_MODULE = "torch.nn.modules.linear.Identity"


def rnn_section(fit: dict[tuple[str, int, int], dict[str, float]]) -> dict[str, list[dict[str, float]]]:
    """The spec's `torch_rnn_seconds` from rnn_fit: per op, one floor per measured shape."""
    return {op: [{"hidden": h, "batch": b, "call_seconds": f["call_seconds"], "step_seconds": f["step_seconds"]}
                 for (c, h, b), f in fit.items() if c == cell]
            for cell, op in RNN_OPS.items()}


def tiny_kernel_graph(torch: Any, kernels: int) -> Any:
    """A CUDA graph of `kernels` back-to-back one-element kernels (warmed on a side stream first,
    as graph capture needs); its replay time / kernels is the per-kernel floor."""
    x = torch.zeros(1, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x.add_(1)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(kernels):
            x.add_(1)
    return graph


def measure_graph_replay(torch: Any, kernels: int = 1000, runs: int = 20) -> float:
    """Least seconds per kernel of back-to-back one-element kernels replayed from a CUDA graph."""
    return _least_event_seconds(tiny_kernel_graph(torch, kernels).replay, runs) / kernels


def _least_event_seconds(fn: Callable[[], object], runs: int) -> float:

    return min(event_seconds(fn, runs))


def measure_timing_lead(torch: Any, l2_bytes: int, runs: int = 30) -> dict[str, float]:
    """How far ahead of the timed region solar.validate.timing.time_cuda lets the host run: the
    L2 flush before each timed call is not waited for, so the host may dispatch while the GPU
    still flushes. `flush_max_seconds`: the longest flush seen (events around it, after an idle
    GPU). `observed_lead_seconds`: host time of 200 tiny adds minus their time_cuda minimum."""
    flush = torch.empty(max(2 * l2_bytes, 1 << 20), dtype=torch.uint8, device="cuda")
    worst = 0.0
    for k in range(runs):
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        flush.fill_(k & 0xFF)
        e.record()
        torch.cuda.synchronize()
        worst = max(worst, s.elapsed_time(e) / 1e3)
    del flush
    host, measured = adds_host_and_timed(torch, l2_bytes)
    return {"flush_max_seconds": worst, "adds200_host_seconds": host, "adds200_time_cuda_min_seconds": measured,
            "observed_lead_seconds": max(0.0, host - measured)}


def adds_host_and_timed(torch: Any, l2_bytes: int, sync_start: bool = False) -> tuple[float, float]:
    """(the host's own time to issue 200 tiny adds, least of 10; their time_cuda minimum over 30
    reps): the difference is the head start the timing loop lets the host take."""

    v, z = torch.zeros(64, device="cuda"), torch.zeros(64, device="cuda")

    def adds() -> None:
        for _ in range(200):
            v.add_(z)

    host = float("inf")
    for _ in range(10):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        adds()
        host = min(host, time.perf_counter() - t0)
        torch.cuda.synchronize()
    return host, time_cuda(adds, l2_bytes, reps=30, sync_start=sync_start).min_seconds


def grid_barrier(torch: Any, sms: int, cap: int = 20000) -> dict[str, Any]:
    """Seconds per grid-wide barrier of a persistent Triton kernel with one program per SM
    (solar.validate.barrier.counter_barrier): slope between 100 and 1100 barriers, least of 10 runs
    each, after a short probe (a barrier that cannot complete is caught before the long runs).
    {"barrier_seconds", "max_spins", "cap", "valid"}, or {"error"} where Triton is missing, the
    kernel does not build, or a spin hit its `cap` (not every program was resident)."""
    try:
        from solar.validate.barrier import counter_barrier
    except ImportError as exc:
        return {"error": f"ImportError: {exc}"}
    stuck = torch.zeros(1, dtype=torch.int32, device="cuda")

    def run(steps: int) -> Callable[[], object]:
        def go() -> None:
            count = torch.zeros(1, dtype=torch.int32, device="cuda")
            counter_barrier[(sms,)](count, steps, cap, stuck, N=sms, num_warps=1)
        return go

    try:
        run(10)()
        torch.cuda.synchronize()
        if int(stuck.item()) >= cap:
            return {"error": "spin cap reached in the probe (not every program resident?)", "cap": cap}
        short, long_ = (_least_event_seconds(run(n), 10) for n in (100, 1100))
    except Exception as exc:  # noqa: BLE001  (a kernel the installed Triton cannot build is a result)
        return {"error": f"{type(exc).__name__}: {message_line(exc)}"[:300]}
    spins = int(stuck.item())
    return {"barrier_seconds": (long_ - short) / 1000, "max_spins": spins, "cap": cap, "valid": spins < cap}


def measure_grid_barrier(torch: Any, sms: int) -> float | None:
    """Seconds per grid-wide barrier (grid_barrier); None where it was not measured."""
    got = grid_barrier(torch, sms)
    return got["barrier_seconds"] if got.get("valid") else None


def measure_jax_dispatch() -> tuple[float | None, str]:
    """Least host seconds per call of a jitted one-op function on JAX's GPU backend (None where JAX
    or its GPU backend is missing), and the JAX version."""
    import os

    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave the GPU's memory to torch
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, "not installed"
    if jax.default_backend() != "gpu":
        return None, f"{jax.__version__} (backend {jax.default_backend()}: no GPU dispatch measured)"
    f = jax.jit(lambda a: a + 1)
    state = {"x": jnp.zeros(64)}

    def call() -> None:
        state["x"] = f(state["x"])

    def sync() -> None:
        state["x"].block_until_ready()

    for _ in range(5):
        call()
    sync()
    return host_slope(call, sync), str(jax.__version__)


def measure_dispatch(l2_bytes: int, sms: int) -> dict[str, Any]:
    """Every dispatch measurement, as the calibrated spec's `dispatch` section (spec.Dispatch)."""
    import torch

    sync = torch.cuda.synchronize
    floors, errors = measure_torch_ops(torch, "cuda", sync)
    kernel = min((floors[k] for k in KERNEL_OPS if k in floors), default=min(floors.values()))
    jax_seconds, jax_version = measure_jax_dispatch()
    replay = measure_graph_replay(torch)
    barrier = measure_grid_barrier(torch, sms)
    lead = measure_timing_lead(torch, l2_bytes)
    measured_modules = module_floors(torch, "cuda", sync)
    modules = measured_modules["module_seconds"]
    rnn = rnn_section(rnn_fit(rnn_calls(torch, "cuda", sync)))
    out: dict[str, Any] = {
        "date": _dt.date.today().isoformat(),
        "host_cpu": host_cpu(),
        "torch": str(torch.__version__),
        "jax": jax_version,
        "method": (
            f"host wall time of {SHORT} and {LONG} back-to-back calls of a tiny op on the GPU, slope, "
            f"least of {RUNS} runs and of the op's variants, minus an empty call's slope; "
            "views included (solar/validate/dispatch.py)"
        ),
        "torch_eager_op_seconds": dict(sorted(floors.items())),
        "torch_eager_kernel_seconds": kernel,
        "torch_eager_any_seconds": min(floors.values()),
        "cuda_graph_kernel_seconds": replay,
        "grid_sync_seconds": min(replay, barrier) if barrier else replay,
        "grid_barrier_seconds": barrier,
        "timing_lead_seconds": max(lead["flush_max_seconds"], lead["observed_lead_seconds"]),
        "timing_lead": lead,
        "torch_empty_module_seconds": modules.pop(EMPTY_MODULE, None),
        "torch_module_seconds": modules,
        "torch_module_ops_seconds": variant_floors(measured_modules["module_variant_seconds"]),
        "torch_rnn_seconds": rnn,
        "errors": errors,
    }
    if jax_seconds is not None:
        out["jax_dispatch_seconds"] = jax_seconds
    return out


def calibration_run(cal: dict[str, Any]) -> dict[str, Any]:
    """A run of benchmarks/eager_host_calibrate.py (module calls, raw recurrent calls, op floors, a
    grid barrier) in the keys `merge` reads: the same floors under the `dispatch` section's names."""
    modules = dict(cal.get("module_seconds", {}))
    barrier = cal.get("atomic_barrier", {})
    out: dict[str, Any] = {
        "date": cal["date"], "torch": cal.get("torch", ""), "host_cpu": cal.get("host_cpu", ""),
        "torch_eager_op_seconds": dict(cal.get("torch_eager_op_seconds", {})),
        "torch_empty_module_seconds": modules.pop(EMPTY_MODULE, None),
        "torch_module_seconds": modules,
        "torch_module_ops_seconds": variant_floors(cal.get("module_variant_seconds", {})),
        "rnn_calls": list(cal.get("rnn_calls", [])),
    }
    if barrier.get("valid"):  # a barrier is one way to synchronise the grid
        out["grid_barrier_seconds"] = out["grid_sync_seconds"] = barrier["barrier_seconds"]
    return out


def merge(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One `dispatch` section from several calibrations of one host (`solar calibrate` runs, and
    module / recurrent runs through `calibration_run`): every floor the least of the runs (a floor
    is only as low as the fastest host seen), the timing lead the largest (it bounds the host's head
    start from above); dates and versions joined. Recurrent floors: where runs carry their raw
    calls, per variant the least call of those runs, fitted once (rnn_fit: a line below every one
    of them); else, over the runs' own fits, per (op, shape) the least call and the least step (a
    line below every run's line)."""
    first = runs[0]
    floors = {op: min(r["torch_eager_op_seconds"][op] for r in runs if op in r["torch_eager_op_seconds"])
              for op in sorted({op for r in runs for op in r["torch_eager_op_seconds"]})}
    values = lambda key: [r[key] for r in runs if r.get(key) is not None]  # noqa: E731
    least = lambda key: min(values(key), default=None)  # noqa: E731
    joined = lambda key: " and ".join(dict.fromkeys(str(v) for v in values(key) if v != ""))  # noqa: E731
    timed = [r for r in runs if "timing_lead_seconds" in r]
    cals = len(timed)
    out = dict(first)
    out.pop("gpu", None)
    out.pop("rnn_calls", None)
    out.update(
        date=joined("date"),
        torch=joined("torch"),
        jax=joined("jax"),
        method=f"{first['method']}; the least of {cals} calibrations (the lead: the largest)"
        + (f"; module-call and recurrent floors: benchmarks/eager_host_calibrate.py (the least of {len(runs) - cals} runs)"
           if len(runs) > cals else ""),
        torch_eager_op_seconds=floors,
        torch_eager_kernel_seconds=min(values("torch_eager_kernel_seconds") + [floors[k] for k in KERNEL_OPS if k in floors]),
        torch_eager_any_seconds=min(values("torch_eager_any_seconds") + list(floors.values())),
        cuda_graph_kernel_seconds=least("cuda_graph_kernel_seconds"),
        grid_sync_seconds=least("grid_sync_seconds"),
        timing_lead_seconds=max(r["timing_lead_seconds"] for r in timed),
        timing_lead={f"run{k + 1}.{key}": v for k, r in enumerate(timed) for key, v in r.get("timing_lead", {}).items()},
        errors={k: v for r in runs for k, v in r.get("errors", {}).items()},
    )
    mods = [r.get("torch_module_seconds") or {} for r in runs]
    out["torch_module_seconds"] = {k: min(m[k] for m in mods if k in m) for k in sorted({k for m in mods for k in m})}
    out["torch_empty_module_seconds"] = least("torch_empty_module_seconds")
    by_ops = [r.get("torch_module_ops_seconds") or {} for r in runs]  # per class and op sequence: the least
    out["torch_module_ops_seconds"] = {
        c: {k: min(m[c][k] for m in by_ops if k in m.get(c, {})) for k in sorted({k for m in by_ops for k in m.get(c, {})})}
        for c in sorted({c for m in by_ops for c in m})
    }
    calls: dict[tuple, dict[str, Any]] = {}  # per variant, the least host time over the runs
    for r in runs:
        for c in r.get("rnn_calls", []):
            key = tuple(c[k] for k in ("cell", "hidden", "batch", "layers", "directions", "steps"))
            if key not in calls or c["host_seconds"] < calls[key]["host_seconds"]:
                calls[key] = c
    fitted = [rnn_section(rnn_fit(list(calls.values())))] if calls else [r.get("torch_rnn_seconds", {}) for r in runs]
    fits: dict[tuple[str, int, int], dict[str, float]] = {}
    for section in fitted:
        for op, rows in section.items():
            for f in rows:
                key = (op, f["hidden"], f["batch"])
                old = fits.setdefault(key, dict(f))
                old.update(call_seconds=min(old["call_seconds"], f["call_seconds"]),
                           step_seconds=min(old["step_seconds"], f["step_seconds"]))
    out["torch_rnn_seconds"] = {op: [f for (o, _, _), f in fits.items() if o == op] for op in dict.fromkeys(k[0] for k in fits)}
    out["grid_barrier_seconds"] = least("grid_barrier_seconds")
    if values("jax_dispatch_seconds"):
        out["jax_dispatch_seconds"] = least("jax_dispatch_seconds")
    return out

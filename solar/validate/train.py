"""`solar validate --train`: time one real training step on the GPU (forward, loss, backward,
optimizer step), the way the training bounds assume it runs: L2 flushed before every step, gradients
set to None outside the timed region (so the backward writes them, never accumulates), optimizer
state already allocated (warm-up steps), CUDA events around the step only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from solar.api import analyze_loaded, load
from solar.errors import SolarError
from solar.frontends.detect import framework_of
from solar.validate.device import detect_spec, environment, query_device, require_cuda
from solar.validate.run import ModeTiming, ValidationResult, assemble, build_on_gpu, to_device
from solar.validate.timing import Timing, summarise, time_cuda


def torch_optimizer(params: list, opt: Any, torch: Any) -> Any:
    """The torch.optim optimizer the bound's Optimizer describes (foreach, as torch defaults to on CUDA)."""
    if opt.kind == "sgd":
        return torch.optim.SGD(params, lr=opt.lr, momentum=opt.momentum, foreach=True)
    if opt.kind == "adamw":
        return torch.optim.AdamW(
            params,
            lr=opt.lr,
            betas=opt.betas,
            eps=opt.eps,
            weight_decay=opt.weight_decay,
            foreach=True,
        )
    return None


def time_steps(
    step: Callable[[], None],
    zero: Callable[[], None],
    l2_bytes: int,
    reps: int = 20,
    warmup: int = 3,
) -> Timing:
    """Median and min of `reps` timed training steps, each after zeroing gradients (untimed) and
    flushing L2; gradients are on (a training step needs autograd)."""
    return time_cuda(step, l2_bytes, reps, warmup, before=zero, no_grad=False)


def validate_train_file(
    path: str | Path,
    arch: str | None = None,
    loss: str = "sum",
    optimizer: str = "adamw",
    reps: int = 20,
) -> ValidationResult:
    """Bound one training step of a model file, then time it for real on the GPU."""

    if framework_of(path) == "jax":
        return validate_jax_train_file(path, arch, loss, optimizer, reps)
    from solar.frontends.torch.train import loss_function, optimizer_of

    torch = require_cuda()
    info, report = _bound_step(path, arch, loss, optimizer)
    model, inputs = build_on_gpu(path)
    inputs = to_device(inputs, torch)
    model = model.cuda().train()
    loss_fn = loss_function(loss)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch_optimizer(params, optimizer_of(optimizer), torch)

    def step() -> None:
        loss_fn(model(*inputs), *inputs).backward()
        if opt is not None:
            opt.step()

    def zero() -> None:
        for p in params:
            p.grad = None

    t = time_steps(step, zero, info.l2_bytes, reps)
    return _result(path, optimizer, report, "eager", t, environment())


def _bound_step(path: str | Path, arch: str | None, loss: str, optimizer: str) -> tuple[Any, Any]:
    """(the device's description, the report of one training step bounded on its spec — or on
    `arch`): traced on fake tensors on the CPU, before anything is built on the GPU."""

    info = query_device()
    loaded = load(str(path), train=True, loss=loss, optimizer=optimizer)
    return info, analyze_loaded(loaded, arch or detect_spec(info).name)


def _result(
    path: str | Path, optimizer: str, report: Any, mode: str, t: Timing, env: dict[str, str]
) -> ValidationResult:
    """The validation result of one timed training step run in `mode`."""
    timing = ModeTiming(median_seconds=t.median_seconds, min_seconds=t.min_seconds, reps=t.reps)
    return assemble(f"{Path(path).name} (train, {optimizer})", report, {mode: timing}, env)


def _jax_gpu() -> Any:
    try:
        import jax
    except ImportError:
        raise SolarError(
            "solar validate --train of a JAX file needs jax with CUDA (pip install jax[cuda12])"
        ) from None
    if not any(d.platform == "gpu" for d in jax.devices()):
        raise SolarError(
            "no GPU visible to JAX: install jax with CUDA to validate a JAX training step"
        )
    return jax


def time_jax_steps(
    step: Callable[[Any], Any], state: Any, l2_bytes: int, reps: int = 20, warmup: int = 3
) -> Timing:
    """Median and min of `reps` jitted steps, each after a write of 2x L2; host clock around the
    step and its completion (JAX has no CUDA events: dispatch is included, never excluded)."""
    import time

    import jax
    import jax.numpy as jnp

    flush = jax.jit(lambda x: x + 1)
    buf = jnp.zeros(max(2 * l2_bytes, 1 << 20) // 4, jnp.float32)
    for _ in range(warmup):
        state = step(state)
    jax.block_until_ready(state)
    samples = []
    for _ in range(reps):
        buf = flush(buf)  # reads and writes 2x L2: evicts what the previous step left there
        jax.block_until_ready(buf)
        start = time.perf_counter()
        state = step(state)
        jax.block_until_ready(state)
        samples.append(time.perf_counter() - start)
    return summarise(samples)


def validate_jax_train_file(
    path: str | Path,
    arch: str | None = None,
    loss: str = "sum",
    optimizer: str = "adamw",
    reps: int = 20,
) -> ValidationResult:
    """Bound one JAX training step (value_and_grad + optax), then time the jitted step on the GPU
    with random parameters, optimizer state and inputs of the traced shapes."""
    import numpy as np

    from solar.frontends.jax.train import train_step

    info, report = _bound_step(path, arch, loss, optimizer)  # torch's view of the device
    jax = _jax_gpu()
    ts = train_step(path, loss, optimizer)
    rng = np.random.default_rng(0)

    def real(x: Any) -> Any:
        dtype = np.dtype(x.dtype)
        if dtype.kind in "iub":
            return jax.numpy.zeros(x.shape, x.dtype)
        return jax.numpy.asarray((rng.standard_normal(x.shape) * 0.02).astype(dtype))

    state = jax.tree_util.tree_map(real, ts.state)
    inputs = jax.tree_util.tree_map(real, ts.inputs)
    jitted = jax.jit(ts.step)

    def step(st: Any) -> Any:
        out = jitted(st, *inputs)
        return st if len(out) == 2 else (out[1], out[2])  # (loss, grads) without an optimizer

    t = time_jax_steps(step, state, info.l2_bytes, reps)
    # A jitted step is compiled (fused by XLA): the unfused level does not claim it.
    return _result(path, optimizer, report, "compile", t, dict(environment(), jax=jax.__version__))


__all__ = [
    "time_jax_steps",
    "time_steps",
    "torch_optimizer",
    "validate_jax_train_file",
    "validate_train_file",
]

"""`solar validate --train`: time one real training step on the GPU (forward, loss, backward,
optimizer step), the way the training bounds assume it runs: L2 flushed before every step, gradients
set to None outside the timed region (so the backward writes them, never accumulates), optimizer
state already allocated (warm-up steps), CUDA events around the step only."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from solar.errors import SolarError
from solar.validate.run import ModeTiming, ValidationResult, _to_device, assemble
from solar.validate.timing import Timing, summarise


def torch_optimizer(params: list, opt: Any, torch: Any) -> Any:
    """The torch.optim optimizer the bound's Optimizer describes (foreach, as torch defaults to on CUDA)."""
    if opt.kind == "sgd":
        return torch.optim.SGD(params, lr=opt.lr, momentum=opt.momentum, foreach=True)
    if opt.kind == "adamw":
        return torch.optim.AdamW(params, lr=opt.lr, betas=opt.betas, eps=opt.eps,
                                 weight_decay=opt.weight_decay, foreach=True)
    return None


def time_steps(step: Callable[[], None], zero: Callable[[], None], l2_bytes: int, reps: int = 20,
               warmup: int = 3) -> Timing:
    """Median and min of `reps` timed training steps, each after zeroing gradients and flushing L2."""
    import torch

    flush = torch.empty(max(2 * l2_bytes, 1 << 20), dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        zero()
        step()
    torch.cuda.synchronize()
    pairs = []
    for k in range(reps):
        zero()
        flush.fill_(k & 0xFF)  # writes 2x L2: evicts everything the previous step left there
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return summarise([s.elapsed_time(e) / 1e3 for s, e in pairs])


def validate_train_file(path: str | Path, arch: str | None = None, loss: str = "sum",
                        optimizer: str = "adamw", reps: int = 20) -> ValidationResult:
    """Bound one training step of a KernelBench-format file, then time it for real on the GPU."""
    from solar.api import analyze_loaded, load
    from solar.frontends.torch.loader import import_model_file
    from solar.frontends.torch.train import loss_function, optimizer_of
    from solar.validate.device import detect_spec, environment, query_device, require_cuda

    torch = require_cuda()
    info = query_device()
    spec_name = arch or detect_spec(info).name
    loaded = load(str(path), train=True, loss=loss, optimizer=optimizer)  # fake tensors, CPU
    report = analyze_loaded(loaded, spec_name)
    module = import_model_file(path)
    torch.manual_seed(0)
    try:
        with torch.device("cuda"):
            model = module.Model(*getattr(module, "get_init_inputs", lambda: [])())
            inputs = _to_device(list(module.get_inputs()), torch)
    except Exception as exc:
        raise SolarError(f"{Path(path).name}: building the model on the GPU failed: {exc}") from None
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
    measured = {"eager": ModeTiming(median_seconds=t.median_seconds, min_seconds=t.min_seconds, reps=t.reps)}
    return assemble(f"{Path(path).name} (train, {optimizer})", report, measured, environment())


__all__ = ["time_steps", "torch_optimizer", "validate_train_file"]

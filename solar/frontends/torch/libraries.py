"""Model libraries beside a CPU build of torch.

PyPI's torchvision wheels for x86-64 Linux are built against the CUDA build of torch; beside the CPU
build their C++ extension (`torchvision/_C.so`: nms, roi_align, deform_conv2d, ...) does not load.
torchvision tolerates that for every op but two: at import it registers fake (shape) rules for
`torchvision::nms` and `torchvision::qnms`, which fail when the ops were never defined
("operator torchvision::nms does not exist"), and with torchvision every library that imports it
(timm, HF transformers) fails to import too.

`prepare_torchvision()` tries to load the extension the way torchvision does; only if that fails
does it define the schemas of those two ops (solar's own registration, nothing of torchvision is
changed), so that torchvision imports with its C++ ops reported missing, as it does on a build
without them. The models (ResNet, ViT, ...) never call those ops; a program that does (a detection
head's nms) gets a one-line error naming the package to install."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

_MISSING_OPS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}
_library: torch.library.Library | None = None  # kept alive: the registrations live as long as it


def prepare_torchvision() -> bool:
    """Make `import torchvision` work beside this torch. True when torchvision is importable with
    its C++ ops, or now without them; False when it is not installed or already imported."""
    global _library
    if "torchvision" in sys.modules or _library is not None:
        return False
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return False
    if hasattr(torch.ops, "torchvision") and _defined("nms"):
        return True
    extension = next(Path(spec.submodule_search_locations[0]).glob("_C.*"), None)
    if extension is not None:
        try:
            torch.ops.load_library(str(extension))
            return True
        except (OSError, RuntimeError):
            pass
    _library = torch.library.Library("torchvision", "FRAGMENT")
    for name, schema in _MISSING_OPS.items():
        if not _defined(name):
            _library.define(schema)
            _library.impl(name, _not_built(name), "CompositeExplicitAutograd")
    return True


def _defined(name: str) -> bool:
    try:
        torch._C._dispatch_find_schema_or_throw(f"torchvision::{name}", "")
        return True
    except RuntimeError:
        return False


def _not_built(name: str):
    def run(*args, **kwargs):
        raise RuntimeError(
            f"torchvision::{name} is not available: torchvision's C++ ops did not load beside "
            f"torch {torch.__version__}; install the torchvision build made for this torch"
        )

    return run

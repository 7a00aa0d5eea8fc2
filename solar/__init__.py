"""solar: speed-of-light analysis of PyTorch programs on GPUs — provable lower bounds on runtime."""

import sys as _sys

from solar.version import __version__

if "torch" in _sys.modules:  # torchvision beside a CPU torch (solar/frontends/torch/libraries.py)
    from solar.frontends.torch.libraries import prepare_torchvision as _prepare

    _prepare()


def analyze(model_or_path, inputs=None, arch="H100-SXM", **options):
    """Analyse a model file or an in-memory module; see solar.api.analyze."""
    from solar.api import analyze as _analyze

    return _analyze(model_or_path, inputs=inputs, arch=arch, **options)


def compare(model_or_path, inputs=None, arch=("L4", "A100-SXM4-80GB", "H100-SXM", "H200-SXM", "B200"), **options):
    """One program's bounds across GPUs as one Comparison; see solar.usecases.compare.compare."""
    from solar.usecases.compare import compare as _compare

    return _compare(model_or_path, inputs=inputs, arch=arch, **options)


def provision(model_or_path, inputs=None, target_ms=1.0, like="H100-SXM", **options):
    """The least hardware with which a program could meet a target; see solar.usecases.provision."""
    from solar.usecases.provision import provision as _provision

    return _provision(model_or_path, inputs=inputs, target_ms=target_ms, like=like, **options)


__all__ = ["__version__", "analyze", "compare", "provision"]

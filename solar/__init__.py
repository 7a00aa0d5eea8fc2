"""solar: speed-of-light analysis of PyTorch programs on GPUs — provable lower bounds on runtime."""

import sys as _sys

__version__ = "0.1.0"

if "torch" in _sys.modules:  # torchvision beside a CPU torch (solar/frontends/torch/libraries.py)
    from solar.frontends.torch.libraries import prepare_torchvision as _prepare

    _prepare()


def analyze(model_or_path, inputs=None, arch="H100-SXM", **options):
    """Analyse a model file or an in-memory module; see solar.api.analyze."""
    from solar.api import analyze as _analyze

    return _analyze(model_or_path, inputs=inputs, arch=arch, **options)


__all__ = ["__version__", "analyze"]

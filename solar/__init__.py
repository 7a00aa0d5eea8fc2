"""solar: speed-of-light analysis of PyTorch programs on GPUs — provable lower bounds on runtime."""

__version__ = "0.1.0"


def analyze(model_or_path, inputs=None, arch="H100-SXM", **options):
    """Analyse a model file or an in-memory module; see solar.api.analyze."""
    from solar.api import analyze as _analyze

    return _analyze(model_or_path, inputs=inputs, arch=arch, **options)


__all__ = ["__version__", "analyze"]

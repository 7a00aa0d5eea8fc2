"""What makes two layers of a stack the same computation up to renaming (`layer_signature`): the
test solar.frontends.torch.share and .hf apply before they trace a few layers of a stack and stitch
the rest (solar.frontends.torch.stitch)."""

from __future__ import annotations

from typing import Any

_PLAIN = (int, float, str, bool, type(None), tuple)

# Attributes that change nothing a module computes in eval mode (class by module and qualified
# name): a drop probability, where eval returns the input whatever it is (torch's Dropout
# modules, torchvision's StochasticDepth `stochastic_depth(x, p, mode, training)`, timm's DropPath
# `drop_path(x, drop_prob, training)`). Stochastic-depth rates grow layer by layer (torchvision
# ConvNeXt, Swin, EfficientNet; timm with drop_path_rate > 0), so without this no such stack is a
# stack of equal layers.
INERT_IN_EVAL = frozenset({
    *((f"torch.nn.modules.dropout.{c}", "p") for c in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout")),
    ("torchvision.ops.stochastic_depth.StochasticDepth", "p"),
    ("timm.layers.drop.DropPath", "drop_prob"),
})


def layer_signature(layer: Any, config: Any = None) -> tuple:
    """What makes two layers the same computation up to renaming: per submodule (by relative
    name) its class, its parameters' and buffers' names, shapes and dtypes, and its other plain
    attributes but `layer_idx` and, in eval mode, drop probabilities (INERT_IN_EVAL): sliding
    windows, attention types, flags; lists of plain values by value, other objects by identity,
    the model's `config` as a mark (its per-layer lists are the caller's to check)."""
    import torch

    out = []
    for name, mod in layer.named_modules():
        attrs = []
        cls = f"{type(mod).__module__}.{type(mod).__qualname__}"
        for key, value in sorted(vars(mod).items()):
            if key.startswith("_") or key == "layer_idx" or isinstance(value, torch.nn.Module):
                continue
            if not mod.training and (cls, key) in INERT_IN_EVAL:
                continue
            if value is config and config is not None:
                value = ("config",)
            elif isinstance(value, torch.Tensor):
                value = ("tensor", tuple(value.shape), value.dtype)
            elif isinstance(value, list) and all(isinstance(v, _PLAIN) for v in value):
                value = ("list", tuple(value))  # torchvision's Permute(dims): equal values, not one object
            elif not isinstance(value, (*_PLAIN, torch.dtype)):
                value = ("object", id(value))  # shared objects (the config) compare by identity
            attrs.append((key, value))
        tensors = [(k, tuple(v.shape), v.dtype) for k, v in (*mod._parameters.items(), *mod._buffers.items()) if v is not None]
        out.append((name, type(mod), tuple(tensors), tuple(attrs)))
    return tuple(out)

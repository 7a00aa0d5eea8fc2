"""The real-model corpus (benchmarks/models/): listing, shrunk variants, and an independent count of
contraction FLOPs with torch.utils.flop_counter.FlopCounterMode.

Each corpus file is in KernelBench format and keeps its sizes in module-level UPPERCASE constants;
``SHRUNK = {NAME: value, ...}`` gives the sizes of its test variant (chosen per model: a ViT's image
must stay a multiple of its patch), and ``FLOP_DIFF`` names why solar's contraction FLOPs may be
below FlopCounterMode's: "none" (they must agree), "causal" (solar counts the S(S+1)/2 kept scores of
causal attention, FlopCounterMode all S^2), "padding" (solar counts only the taps of a padded
convolution that touch real input, FlopCounterMode every tap), "moe" (solar counts the top-k experts
each token uses, T·k·3·H·I multiply-adds; FlopCounterMode has no rule for aten._grouped_mm, the
traced dispatch, and counts the experts as 0: solar's count is above it), "int8" (FlopCounterMode has no
rule for torch._weight_int8pack_mm and counts 0)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "benchmarks" / "models"
DIFF_REASONS = ("none", "causal", "padding", "moe", "int8")


def list_models(root: Path = MODELS) -> list[Path]:
    return sorted(p for p in root.glob("*.py") if p.name != "__init__.py")


def _literal(tree: ast.Module, name: str) -> Any:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == [
            name
        ]:
            return ast.literal_eval(stmt.value)
    return None


def model_facts(path: Path) -> dict[str, Any]:
    """SHRUNK, FLOP_DIFF and the docstring's first line, read without executing the file."""
    tree = ast.parse(path.read_text())
    doc = (ast.get_docstring(tree) or "").strip().splitlines()
    return {
        "shrunk": _literal(tree, "SHRUNK"),
        "flop_diff": _literal(tree, "FLOP_DIFF"),
        "doc": doc[0] if doc else "",
    }


def source_with(path: Path, values: dict[str, Any]) -> str:
    """The file's source with each module-level constant named in `values` set to its value (a
    literal); a name the file does not assign is refused."""
    tree = ast.parse(path.read_text())
    assigned = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            name = getattr(stmt.targets[0], "id", None)
            if name in values:
                stmt.value = ast.Constant(values[name])
                assigned.add(name)
    missing = sorted(set(values) - assigned)
    if missing:
        raise ValueError(f"{path.name}: no module-level constant {', '.join(missing)} to set")
    return ast.unparse(tree)


def shrunk_source(path: Path) -> str:
    """The file's source with each constant named in SHRUNK set to its shrunk value."""
    return source_with(path, _literal(ast.parse(path.read_text()), "SHRUNK") or {})


def write_shrunk(path: Path, directory: Path) -> Path:
    out = Path(directory) / path.name
    out.write_text(shrunk_source(path))
    return out


def flop_counter_flops(path: Path) -> int:
    """FlopCounterMode's total for one forward of the file's model, run on fake tensors: the model is
    built as solar builds it (nothing large allocated), then every tensor is made fake."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from solar.frontends.files import import_model_file
    from solar.frontends.torch.fake import fakeify, fakeify_module
    from solar.frontends.torch.loader import as_tuple, building

    module = import_model_file(path)
    with building():
        model = module.Model(*getattr(module, "get_init_inputs", lambda: [])())
        inputs = as_tuple(module.get_inputs())
    model.requires_grad_(False)  # FlopCounterMode's module tracker wants grad_fns otherwise
    with FakeTensorMode(allow_non_fake_inputs=True) as fake:
        model = fakeify_module(model, fake)
        inputs = tuple(fakeify(x, fake) for x in inputs)
        # The math form of scaled_dot_product_attention (matmuls FlopCounterMode prices) rather than
        # the CPU flash kernel, which it has no rule for.
        # nn.MultiheadAttention's fused fast path is off for the same reason.
        fastpath = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            with (
                torch.no_grad(),
                sdpa_kernel(SDPBackend.MATH),
                FlopCounterMode(display=False) as counter,
            ):
                model(*inputs)
        finally:
            torch.backends.mha.set_fastpath_enabled(fastpath)
    return int(counter.get_total_flops())

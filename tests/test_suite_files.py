"""Every example and benchmark-suite problem runs eagerly, at shrunk sizes, on CPU in a few seconds.

Files are loaded with ``benchmarks.suite_tools.load_problem(path, shrink=SHRINK)``, which rewrites the
module's UPPERCASE int size constants before executing it. The huge problem is only imported: building
it for real would allocate ~50 GB.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from solar.frontends.detect import framework_of
from benchmarks.suite_tools import (  # noqa: E402
    SHRINK_FLOOR,
    list_problems,
    load_problem,
    shrink_value,
    size_constants,
)

SHRINK = 8
# Largest input/parameter/output size (elements) a shrunk problem may use: keeps the test fast.
MAX_SHRUNK_NUMEL = 1 << 22

SUITE = ROOT / "benchmarks" / "suite"
EXAMPLES = ROOT / "examples"
HUGE = [p for p in list_problems(SUITE) if "huge" in p.relative_to(SUITE).parts]
# PyTorch model files only: examples/jax/ holds JAX programs, run by tests/frontends/jax, the
# study scripts of examples/studies/ (which analyse model files, and are no model files themselves)
# run as scripts from docs/MANUAL.md, and the sharded programs of examples/distributed/ (rank
# programs at a real model's dimensions, whose expert or stage weights stay above the size limit
# shrunk) run on simulated ranks in tests/frontends/test_sharded_verify.py and are traced in
# tests/frontends/test_distributed_examples.py.
TORCH_EXAMPLES = [
    p for p in list_problems(EXAMPLES)
    if not {"jax", "distributed"} & set(p.relative_to(EXAMPLES).parts) and framework_of(p) == "torch"
    and "def get_inputs" in p.read_text()
]
RUNNABLE = TORCH_EXAMPLES + [p for p in list_problems(SUITE) if p not in HUGE]


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _tensors(item)


def test_files_found():
    assert len(list_problems(EXAMPLES)) >= 5
    for level in ("level1", "level2", "level3"):
        assert list_problems(SUITE / level), f"no problems in benchmarks/suite/{level}"
    assert HUGE, "no huge problem"


@pytest.mark.parametrize("path", RUNNABLE, ids=_id)
def test_runs_shrunk(path: Path):
    consts = size_constants(path, SHRINK)
    assert consts, f"{_id(path)} has no UPPERCASE int size constants to shrink"
    mod = load_problem(path, shrink=SHRINK)
    for name, (_orig, shrunk) in consts.items():
        assert getattr(mod, name) == shrunk, name
    assert mod.__doc__ and mod.__doc__.strip(), "module docstring missing"

    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs()).eval()
    inputs = mod.get_inputs()
    assert isinstance(inputs, list) and inputs
    with torch.no_grad():
        out = model(*inputs)
    outs = list(_tensors(out))
    assert outs, "forward returned no tensor"
    sizes = [t.numel() for t in [*inputs, *model.parameters(), *outs]]
    assert max(sizes) <= MAX_SHRUNK_NUMEL, f"shrunk problem too big: {max(sizes)} elements"
    for t in outs:
        assert torch.isfinite(t).all(), "non-finite output"


@pytest.mark.parametrize("path", HUGE, ids=_id)
def test_huge_importable(path: Path):
    # Import only: Model(*get_init_inputs()) or get_inputs() would allocate ~50 GB for real.
    mod = load_problem(path)
    assert isinstance(mod.Model, type) and issubclass(mod.Model, torch.nn.Module)
    assert callable(mod.get_inputs) and callable(mod.get_init_inputs)


def test_load_problem_shrinks_literals_only(tmp_path: Path):
    src = tmp_path / "toy.py"
    src.write_text(
        "HEADS = 8\nHEAD_DIM = 64\nDIM = HEADS * HEAD_DIM\nSEQ: int = 1000\n"
        "FLAG = True\nEPS = 1e-5\nlower = 4096\nPAIR = (512, 512)\n"
    )
    full = load_problem(src)
    assert (full.HEADS, full.HEAD_DIM, full.DIM, full.SEQ) == (8, 64, 512, 1000)
    mod = load_problem(src, shrink=4)
    assert (mod.HEADS, mod.HEAD_DIM, mod.DIM, mod.SEQ) == (8, 16, 128, 250)
    assert mod.FLAG is True and mod.EPS == 1e-5 and mod.lower == 4096 and mod.PAIR == (512, 512)
    assert shrink_value(SHRINK_FLOOR + 1, 1000) == SHRINK_FLOOR
    with pytest.raises(ValueError):
        load_problem(src, shrink=0)

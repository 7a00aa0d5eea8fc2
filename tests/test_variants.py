"""The batch-1 variants of benchmarks/variants.py: each written file is the program its committed
rows were measured and analysed as (its eager_host row, recomputed here, equals the committed one to
the last digit), every dispatch-bound problem of the committed rows is a file of benchmarks/dispatch/
or a variant, and a constant the file does not assign is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import solar.frontends.torch  # noqa: F401  (before torchvision: see frontends/torch/libraries.py)

pytest.importorskip("torchvision")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.eager_host_rows import row  # noqa: E402
from benchmarks.model_corpus import source_with  # noqa: E402
from benchmarks.rows import read_rows  # noqa: E402
from benchmarks.variants import VARIANTS, write  # noqa: E402

H100 = ROOT / "benchmarks" / "results" / "h100"
COMMITTED = {r["problem"]: r for r in read_rows(H100 / "dispatch_eager_host_rows.jsonl")}


def _as_program(r: dict) -> dict:
    """The row without what names the file: its problem, level, GPU, and the Python module that
    defines each nn.Module class (a file loads as solar_model_<hash of its path>)."""
    modules = [[key, cls.rsplit(".", 1)[-1]] for key, cls in r["modules"]]
    return {**{k: v for k, v in r.items() if k not in ("problem", "level", "arch")}, "modules": modules}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("variants")
    return {p.relative_to(folder).as_posix(): p for p in write(folder)}


def test_every_committed_dispatch_problem_is_a_file_or_a_variant():
    files = {f"dispatch/{p.name}" for p in (ROOT / "benchmarks" / "dispatch").glob("*.py")}
    assert files.isdisjoint(VARIANTS)
    assert {f"dispatch/{name}" for name in COMMITTED} == files | set(VARIANTS)  # rows for every program
    for timings in sorted(H100.glob("dispatch_sync_start*.jsonl")):  # each timed one is a file or a variant
        assert {r["problem"] for r in read_rows(timings)} <= files | set(VARIANTS), timings.name


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_variant_is_the_program_its_rows_were_made_of(name, written):
    path = written[name]
    assert path.read_text().startswith(f"# {VARIANTS[name][0]} with BATCH = 1")
    assert _as_program(row(path, "H100-SXM")) == _as_program(COMMITTED[path.name])


def test_a_constant_the_file_lacks_is_refused():
    with pytest.raises(ValueError, match=r"^tv_resnet18_fp32.py: no module-level constant HEIGHT, WIDTH to set$"):
        source_with(ROOT / "benchmarks" / "models" / "tv_resnet18_fp32.py", {"BATCH": 1, "WIDTH": 8, "HEIGHT": 8})

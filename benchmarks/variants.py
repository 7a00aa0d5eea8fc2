"""Programs that are another KernelBench-format file with module constants set (model_corpus.
source_with): the dispatch-bound programs that serve a corpus model or a study one request at a
time, at batch 1 (beside the files of benchmarks/dispatch/). Each is written under the name its
committed rows carry (benchmarks/results/h100/dispatch_*.jsonl), for the scripts that take files:

    python benchmarks/variants.py DIR        # writes DIR/dispatch/tv_resnet18_b1.py, ...
    python benchmarks/eager_host_measure.py benchmarks/dispatch/*.py DIR/dispatch/*.py --graphed --out ...
    python benchmarks/eager_host_rows.py benchmarks/dispatch DIR/dispatch --out ... --arch H100-SXM
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.model_corpus import source_with  # noqa: E402

# name (folder/file, as rows name it) -> (the file it is, from the repository's root; constants set)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "dispatch/tv_efficientnet_b0_b1.py": ("benchmarks/models/tv_efficientnet_b0_fp16.py", {"BATCH": 1}),
    "dispatch/tv_mobilenet_v3_b1.py": ("benchmarks/models/tv_mobilenet_v3_large_fp32.py", {"BATCH": 1, "DTYPE": "float16"}),
    "dispatch/tv_regnet_y_400mf_b1.py": ("benchmarks/models/tv_regnet_y_400mf_fp16.py", {"BATCH": 1}),
    "dispatch/tv_resnet18_b1.py": ("benchmarks/models/tv_resnet18_fp32.py", {"BATCH": 1, "DTYPE": "float16"}),
    "dispatch/llama_decode_b1.py": ("examples/studies/llama_decode_step.py", {"BATCH": 1}),
    "dispatch/timm_resnet50d_b1.py": ("benchmarks/models/timm_resnet50d_fp16.py", {"BATCH": 1}),
    "dispatch/timm_convnext_small_b1.py": ("benchmarks/models/timm_convnext_small_fp16.py", {"BATCH": 1}),
}


def write(directory: Path) -> list[Path]:
    """Every variant as directory/name, headed by a comment that says what it is; the paths written."""
    written = []
    for name, (source, values) in VARIANTS.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        settings = ", ".join(f"{k} = {v!r}" for k, v in values.items())
        path.write_text(f"# {source} with {settings} (benchmarks/variants.py)\n{source_with(ROOT / source, values)}\n")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("directory", type=Path)
    args = p.parse_args(argv)
    for path in write(args.directory):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

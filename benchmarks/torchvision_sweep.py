"""Every model torchvision lists (torchvision.models.list_models(), no weights) through solar's
Python API, as a new user would try them: one JSON line per model with the outcome, CPU seconds and,
when it analyses, the fused and unfused bounds on one GPU; a summary line at the end.

    python benchmarks/torchvision_sweep.py [--arch H200-SXM] [--out FILE.jsonl] [-k SUBSTRING]

Inputs per family: images 1x3x224x224 (Inception v3 299, quantized models the same), video clips
1x3x16x112x112 (MViT and S3D 1x3x16x224x224), optical flow two 1x3x128x128 frames, detection a list
of one 3x320x320 image. A model that does not analyse is a row with its one-line error."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

import solar  # noqa: E402,F401  (before torchvision: registers the schemas its import needs)
import torchvision  # noqa: E402
from torchvision import models  # noqa: E402

# (substring of the builder's module, input maker): the first match wins
INPUTS = (
    ("video.mvit", lambda: (torch.randn(1, 3, 16, 224, 224),)),
    ("video.s3d", lambda: (torch.randn(1, 3, 16, 224, 224),)),
    ("video", lambda: (torch.randn(1, 3, 16, 112, 112),)),
    ("optical_flow", lambda: (torch.randn(1, 3, 128, 128), torch.randn(1, 3, 128, 128))),
    ("detection", lambda: ([torch.randn(3, 320, 320)],)),
    ("inception", lambda: (torch.randn(1, 3, 299, 299),)),
    ("", lambda: (torch.randn(1, 3, 224, 224),)),
)


def build(name: str) -> torch.nn.Module:
    try:
        return models.get_model(name, weights=None, weights_backbone=None).eval()
    except TypeError:  # a builder without a backbone argument
        return models.get_model(name, weights=None).eval()


def inputs_for(name: str) -> tuple:
    module = models.get_model_builder(name).__module__
    return next(make() for key, make in INPUTS if key in module)


def one(name: str, arch: str) -> dict:
    start = time.process_time()
    row: dict = {"model": name}
    try:
        report = solar.analyze(build(name), list(inputs_for(name)), arch=arch)
        row.update(ok=True, fused_s=report.bounds["fused"].seconds, unfused_s=report.bounds["unfused"].seconds)
    except Exception as exc:  # noqa: BLE001  (a row, never a stop)
        text = str(exc).strip().splitlines()
        row.update(ok=False, error=f"{type(exc).__name__}: {text[0] if text else ''}"[:300])
    row["cpu_s"] = round(time.process_time() - start, 2)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", default="H200-SXM")
    p.add_argument("--out", type=Path)
    p.add_argument("-k", default="")
    args = p.parse_args(argv)
    rows = []
    out = args.out.open("w") if args.out else sys.stdout
    for name in (n for n in models.list_models() if args.k in n):
        rows.append(one(name, args.arch))
        print(json.dumps(rows[-1]), file=out, flush=True)
    ok = [r for r in rows if r["ok"]]
    summary = {"summary": True, "models": len(rows), "ok": len(ok), "torch": torch.__version__,
               "torchvision": torchvision.__version__, "solar_arch": args.arch,
               "median_cpu_s_ok": sorted(r["cpu_s"] for r in ok)[len(ok) // 2] if ok else None}
    print(json.dumps(summary), file=out, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Every torchvision classification model (torchvision.models.list_models(module=torchvision.models),
no weights) analysed as one training step (loss = sum of the logits, AdamW, module mode train)
through solar's Python API; the outcome per model goes to benchmarks/results/train_corpus.json and
the table of docs/MODELS.md ("Training steps of torchvision classification models") is written from it.

    python benchmarks/train_corpus.py [-k SUBSTRING] [--names A,B] [--missing] [--table-only]
                                      [--timeout S]

Inputs: two images 2x3x32x32 (the smallest most models accept; two, so that batch norm in train
mode has more than one value per channel after global pooling), larger where a model needs it
(SIZES). `--missing` runs only models without a row for their current input; `--table-only` rewrites the docs table."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

import solar  # noqa: E402,F401  (before torchvision: see frontends/torch/libraries.py)
import solar.frontends.torch  # noqa: E402,F401
import torchvision  # noqa: E402
from torchvision import models  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "train_corpus.json"
DOC = ROOT / "docs" / "MODELS.md"
BEGIN, END = "<!-- train_corpus: begin -->", "<!-- train_corpus: end -->"
ARCH = "H100-SXM"
# (model-name prefix, image side): the first match wins; the rest take DEFAULT_SIZE
SIZES = (
    ("inception", 299),  # its auxiliary head (train mode) needs the 17x17 map of 299x299
    ("googlenet", 64),
    ("alexnet", 64),  # three stride-2 pools after a stride-4 stem
    ("vit_", 224),  # a fixed position embedding for 224x224
    ("maxvit", 224),  # its attention windows tile a 224x224 image
    ("swin", 64),
)
DEFAULT_SIZE = 32
BATCH = 2


def size_of(name: str) -> int:
    return next((side for prefix, side in SIZES if name.startswith(prefix)), DEFAULT_SIZE)


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Timeout


def one(name: str, timeout: int) -> dict:
    side = size_of(name)
    row: dict = {"model": name, "input": [BATCH, 3, side, side]}
    start = time.process_time()
    signal.signal(signal.SIGPROF, _alarm)  # CPU seconds of this process: steady on a shared machine
    signal.setitimer(signal.ITIMER_PROF, timeout)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = models.get_model(name, weights=None)
            report = solar.analyze(
                model, [torch.randn(BATCH, 3, side, side)], arch=ARCH, train=True, loss="sum",
                optimizer="adamw", mode="train",
            )
        fused, unfused = report.bounds["fused"].seconds, report.bounds["unfused"].seconds
        row.update(ok=True, fused_s=fused, unfused_s=unfused)
        row["no_gradient"] = next(
            (n.split(" ")[0] for n in report.assumptions if "get no gradient" in n), "0"
        )
    except _Timeout:
        row.update(ok=False, error=f"analysis took over {timeout} CPU s (not finished)")
    except Exception as exc:  # noqa: BLE001  (a row, never a stop)
        text = str(exc).strip().splitlines()
        row.update(ok=False, error=f"{type(exc).__name__}: {text[0] if text else ''}"[:300])
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    row["cpu_s"] = round(time.process_time() - start, 1)
    return row


def load() -> dict[str, dict]:
    return json.loads(RESULTS.read_text())["models"] if RESULTS.exists() else {}


def save(rows: dict[str, dict]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    meta = {"torch": torch.__version__, "torchvision": torchvision.__version__, "arch": ARCH}
    RESULTS.write_text(json.dumps({"meta": meta, "models": rows}, indent=1, sort_keys=True) + "\n")


def table(rows: dict[str, dict], names: list[str]) -> str:
    ok = sum(1 for n in names if rows.get(n, {}).get("ok"))
    head = (
        f"{ok} of {len(names)} analyse as a training step (torchvision {torchvision.__version__}, "
        f"{ARCH}; `python benchmarks/train_corpus.py` writes this table from "
        "benchmarks/results/train_corpus.json)."
    )
    lines = [
        head,
        "",
        "| model | input | train step | fused bound (µs) | unfused bound (µs) |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        r = rows.get(name)
        if r is None:
            lines.append(f"| {name} | | not run yet | | |")
            continue
        shape = "×".join(map(str, r["input"]))
        if r["ok"]:
            lines.append(
                f"| {name} | {shape} | ok | {r['fused_s'] * 1e6:.1f} | {r['unfused_s'] * 1e6:.1f} |"
            )
        else:
            reason = r["error"].replace("|", "\\|")
            lines.append(f"| {name} | {shape} | {reason} | | |")
    return "\n".join(lines)


def write_table(rows: dict[str, dict], names: list[str]) -> None:
    text = DOC.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{BEGIN}\n{table(rows, names)}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-k", default="")
    p.add_argument("--names", default="", help="comma-separated models to run first, in order")
    p.add_argument("--missing", action="store_true")
    p.add_argument("--table-only", action="store_true")
    p.add_argument("--timeout", type=int, default=900)
    args = p.parse_args(argv)
    names = sorted(models.list_models(module=models))
    rows = load()
    if not args.table_only:
        first = [n for n in args.names.split(",") if n in names]
        for name in first + [n for n in names if n not in first]:
            done = rows.get(name, {}).get("input") == [BATCH, 3, size_of(name), size_of(name)]
            if args.k not in name or (args.missing and done):
                continue
            rows[name] = one(name, args.timeout)
            print(json.dumps(rows[name]), flush=True)
            save(rows)
    write_table(rows, names)
    return 0


if __name__ == "__main__":
    sys.exit(main())

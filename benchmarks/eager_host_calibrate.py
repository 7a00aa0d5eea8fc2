"""Device measurements behind the eager_host refinements (docs/BOUNDS.md §17): host floors of nn.Module
calls (an empty module: what every module call pays; the leaf modules the benchmarks use: each call
with its ops), host time of one nn.LSTM / nn.GRU call against its steps x layers x directions
(cuDNN launches per step), the timing head start under `time_cuda(sync_start=True)`, and a grid-wide
barrier from scalar atomics (the min-reduction formulation did not compile on Triton 3.6). One JSON
file; `--device cpu` runs the host parts on the CPU (a smoke test, not a calibration).

    python benchmarks/eager_host_calibrate.py --out benchmarks/results/<host>/eager_host_calN.json [--device cuda]

benchmarks/host_profiles.py merges the runs of a host folder with the dispatch calibrations
(solar.validate.dispatch.merge, each run through `calibration_run`), each floor the least of the
runs: the empty module's call, the leaf modules, the recurrent ops' floors fitted below every call
of every run, the op floors, the grid barrier (and the grid-sync floor, the lesser of it and the
kernel boundary), and writes the host profile.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solar.validate.dispatch import (  # noqa: E402  (the measurements live with the other floors)
    adds_host_and_timed, grid_barrier, module_floors, rnn_calls, rnn_fit,
)


def sync_start_lead(torch: Any, l2_bytes: int) -> dict[str, float]:
    """Host time of 200 tiny adds minus their time_cuda(sync_start=True) minimum (head start seen)."""
    host, t = adds_host_and_timed(torch, l2_bytes, sync_start=True)
    return {"adds200_host_seconds": host, "adds200_sync_start_min_seconds": t, "observed_lead_seconds": host - t}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = p.parse_args(argv)
    import torch

    from solar.validate.dispatch import host_cpu, measure_torch_ops

    dev = args.device
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    out: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "host_cpu": host_cpu(), "torch": str(torch.__version__),
                           "device": torch.cuda.get_device_name() if dev == "cuda" else "cpu"}
    t0 = time.time()
    out.update(module_floors(torch, dev, sync))
    print(f"modules {time.time() - t0:.1f}s", flush=True)
    out["rnn_calls"] = rnn_calls(torch, dev, sync)
    out["rnn_fit"] = {"/".join(map(str, k)): v for k, v in rnn_fit(out["rnn_calls"]).items()}
    out["rnn_fit_event"] = {"/".join(map(str, k)): v for k, v in rnn_fit(out["rnn_calls"], "event_seconds").items()}
    print(f"rnn {time.time() - t0:.1f}s", out["rnn_fit"], out["rnn_fit_event"], flush=True)
    floors, errors = measure_torch_ops(torch, dev, sync)  # a further run of the op floors (merged by least)
    out["torch_eager_op_seconds"], out["op_errors"] = dict(sorted(floors.items())), errors
    print(f"ops {time.time() - t0:.1f}s", flush=True)
    if dev == "cuda":
        from solar.validate.device import query_device

        info = query_device()
        out["sync_start_lead"] = sync_start_lead(torch, info.l2_bytes)
        out["atomic_barrier"] = grid_barrier(torch, torch.cuda.get_device_properties(0).multi_processor_count)
        print(f"lead/barrier {time.time() - t0:.1f}s", out["sync_start_lead"], out["atomic_barrier"], flush=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

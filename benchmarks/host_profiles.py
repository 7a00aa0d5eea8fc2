"""Derive the host profiles and the calibrated device floors from the raw calibrations committed under
benchmarks/results/<host>/ (docs/BOUNDS.md §17, §19): per host folder, the dispatch runs
(`dispatch*.json`: `solar calibrate --dispatch-only --raw`), the module / recurrent runs
(`eager_host_cal*.json`: benchmarks/eager_host_calibrate.py) and the kernel-span runs
(`floors*.json`: benchmarks/device_floors.py) and the argument-class sweeps (`dispatch_shapes*.jsonl`:
benchmarks/dispatch_shapes.py, one file per machine start). Writes

  hardware_specs/hosts/<host>-host.yaml  every floor HOST margin x the least measured on that host,
                                         the margin from the run-to-run spread of that host's runs,
                                         and the one-run margin `solar calibrate` applies to one run;
  hardware_specs/hosts/default.yaml      every floor below every host's least by the product of the
                                         least run-to-run factor and the host-to-host factor;
  hardware_specs/calibrated/<GPU>.yaml   its `device_floors` section (in-graph kernel interval, grid
                                         sync), from the same folders;

and prints the measured shortest kernel span per GPU with the `min_kernel_seconds` it supports. A new
host is one more folder of raw files and one run of

    python benchmarks/host_profiles.py [--results benchmarks/results] [--check]

(--check: write nothing, exit 1 if a committed file differs from what the raw files give).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solar.hardware.host import DEFAULT_HOST, HOST_DIR
from solar.hardware.spec import CALIBRATED_DIR, SPEC_DIR, calibrated_spec, get_spec
from solar.validate.argsweep import class_floors, with_classes
from solar.validate.calibrate import scaled
from solar.validate.dispatch import calibration_run, merge

RESULTS = ROOT / "benchmarks" / "results"
# The spread is read on the floors of ops that launch a kernel: a view's floor (0.06-3 us) is a few
# hundred nanoseconds of Python and moves with it, and carries little of any bound.
SPREAD_FROM_SECONDS = 3e-6
STEP = 0.05  # margins are rounded down to a multiple of this
# Margin below the least measured device floor (the in-graph kernel interval, the shortest kernel
# span): the device clock's own granularity and a faster part of the same model.
DEVICE_MARGIN = 0.9
# A host takes an argument class (solar.validate.argsweep.CLASSES) that this many machine starts swept.
CLASS_STARTS = 2
HOST_FLOOR_KEYS = ("torch_eager_op_seconds", "torch_eager_kernel_seconds", "torch_eager_any_seconds",
                   "torch_empty_module_seconds", "torch_module_seconds", "torch_module_ops_seconds", "torch_rnn_seconds",
                   "jax_dispatch_seconds")


def rel(path: Path) -> str:
    """The path from the repository root (as given where it lies outside)."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def round_down(x: float) -> float:
    return round(math.floor(x / STEP + 1e-9) * STEP, 2)


def _least_ratio(runs: list[dict[str, float]], ratio: Callable[[list[float]], float]) -> tuple[float, str]:
    """(ratio(values sorted), key) minimised over the keys at least two runs measured whose least is
    at least SPREAD_FROM_SECONDS; (1.0, "") with no such key."""
    worst = (1.0, "")
    for key in sorted({k for r in runs for k in r}):
        values = sorted(r[key] for r in runs if r.get(key))
        if len(values) >= 2 and values[0] >= SPREAD_FROM_SECONDS:
            worst = min(worst, (ratio(values), key))
    return worst


def spread(runs: list[dict[str, float]]) -> tuple[float, str]:
    """(least / next-least, key), the least over the keys: how far the fastest run fell below the next."""
    return _least_ratio(runs, lambda v: v[0] / v[1])


def one_run(runs: list[dict[str, float]]) -> tuple[float, str]:
    """(least / most, key), the least over the keys: how far above the host's least a single run's
    floor may sit."""
    return _least_ratio(runs, lambda v: v[0] / v[-1])


class Host:
    """The raw runs of one host folder and what they give: the merged least floors, the run spread,
    the device floors."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.key = folder.name
        self.dispatch_files = sorted(folder.glob("dispatch*.json"))
        self.cal_files = sorted(folder.glob("eager_host_cal*.json"))
        self.floor_files = sorted(folder.glob("floors*.json"))
        self.dispatch_runs = [json.loads(p.read_text()) for p in self.dispatch_files]
        self.cal_runs = [json.loads(p.read_text()) for p in self.cal_files]
        self.floor_runs = [json.loads(p.read_text()) for p in self.floor_files]
        self.shape_files = sorted(folder.glob("dispatch_shapes*.jsonl"))
        self.shape_rows = [[json.loads(line) for line in p.read_text().splitlines() if line.strip()] for p in self.shape_files]
        self.least = merge(self.dispatch_runs + [calibration_run(c) for c in self.cal_runs])
        op_runs = [r["torch_eager_op_seconds"] for r in self.dispatch_runs + self.cal_runs]
        module_runs = [r["module_seconds"] for r in self.cal_runs]
        self.factor, self.factor_key = min(spread(op_runs), spread(module_runs))
        self.single, self.single_key = min(one_run(op_runs), one_run(module_runs))
        self.runs = len(op_runs)

    @property
    def name(self) -> str:
        return f"{self.key}-host"

    @property
    def files(self) -> list[str]:
        return [rel(p) for p in self.dispatch_files + self.cal_files]

    def op_floor(self, op: str) -> float | None:
        """The least measured floor of `op` on this host (None: it measured none)."""
        return self.least["torch_eager_op_seconds"].get(op)

    def class_floors(self) -> dict[str, dict[str, float]]:
        """Per op and argument class swept on at least CLASS_STARTS starts: the least host seconds of
        a member call less an empty call's (the row's, else the largest the host's calibrations saw)."""
        empty = max([c.get("empty_call_seconds", 0.0) for c in self.cal_runs] or [0.0])
        return class_floors(self.shape_rows, empty, CLASS_STARTS)

    def leaf_floor(self, cls: str, ops: str) -> float | None:
        """The least measured call of a leaf module of class `cls` that runs exactly `ops` on this
        host: that variant's, else the class's, else an empty module's (None: none measured)."""
        by_ops = self.least.get("torch_module_ops_seconds", {}).get(cls, {})
        return by_ops.get(ops, self.least.get("torch_module_seconds", {}).get(cls, self.least.get("torch_empty_module_seconds")))

    def gpu(self) -> str:
        return self.dispatch_runs[0].get("gpu", "")

    def cuda(self) -> str:
        for r in self.floor_runs:
            if r.get("environment", {}).get("cuda"):
                return str(r["environment"]["cuda"])
        torch = str(self.least["torch"])
        tag = torch.split("+cu")[-1] if "+cu" in torch else ""
        return f"{tag[:-1]}.{tag[-1]}" if tag.isdigit() and len(tag) >= 2 else ""


def one_run_margin(h: Host) -> float:
    """What one calibration of this host would need: how far a single run sat above the least of
    its runs times the run-to-run factor (how far a further run may fall below that least),
    rounded down (docs/BOUNDS.md §17)."""
    return round_down(h.single * h.factor)


def host_margin(h: Host, hosts: list[Host]) -> tuple[float, str]:
    """(margin, why) of one host: its run-to-run factor rounded down; with fewer than two dispatch
    calibrations (its runs from one machine start, the floors only that run measures unrepeated)
    at most the least one-run margin of the hosts calibrated twice, as `solar calibrate` applies
    to one run (docs/BOUNDS.md §17)."""
    own = round_down(h.factor)
    twice = [o for o in hosts if len(o.dispatch_runs) >= 2]
    cap = min((one_run_margin(o) for o in twice), default=own)
    if len(h.dispatch_runs) >= 2 or own <= cap:
        return own, ""
    return cap, (
        f"; one dispatch calibration: capped at {cap:g}, the least one-run margin of the hosts calibrated twice "
        f"({', '.join(o.name for o in twice)}), as `solar calibrate` applies to one run"
    )


def host_profile(h: Host, hosts: list[Host]) -> dict[str, Any]:
    m, capped = host_margin(h, hosts)
    files = ", ".join(h.files)
    floors = {k: scaled(h.least.get(k), m) for k in HOST_FLOOR_KEYS if h.least.get(k) not in (None, {})}
    floors = with_classes(floors, scaled(h.class_floors(), m))
    classes = "torch_eager_class_seconds" in floors
    floors["timing_lead_seconds"] = h.least["timing_lead_seconds"]
    rule = f"{m:g} x the least of the runs in {files}"
    sources = {k: rule for k in floors if k != "timing_lead_seconds"}
    if classes:
        sources["torch_eager_class_seconds"] = (
            f"{m:g} x the least host time of a swept call of the class (its argument tokens include the class's) less an "
            f"empty call's, over {', '.join(rel(p) for p in h.shape_files)}; a class swept on {CLASS_STARTS} or more machine "
            "starts and above the op's own floor")
    sources["timing_lead_seconds"] = f"the largest head start seen in {', '.join(rel(p) for p in h.dispatch_files)} (not scaled: a larger head start lowers the bound)"
    return {
        "name": h.name,
        "description": f"the host of the {h.gpu() or h.key} device machine",
        "host_cpu": h.least["host_cpu"],
        "gpu": h.gpu(),
        "torch": str(h.least["torch"]),
        "cuda": h.cuda(),
        "jax": str(h.least.get("jax", "")),
        "date": str(h.least["date"]),
        "method": h.least["method"],
        "margin": m,
        "margin_source": (
            f"run-to-run spread over {h.runs} calibrations: the least floor of every op and module call measured "
            f"twice (least >= {SPREAD_FROM_SECONDS * 1e6:g} us) is at least {h.factor:.3f} x the next-least run's "
            f"({h.factor_key or 'no pair'}); rounded down to {STEP:g}: a faster rerun of this host beating the least "
            "by as much as the fastest run beat the next stays above these floors" + capped
        ),
        **({"one_run_margin": one_run_margin(h), "one_run_margin_source": (
            f"one calibration's floors sat as far as 1 / {h.single:.3f} above the least of {h.runs} ({h.single_key}); "
            f"{h.single:.3f} x the run-to-run factor {h.factor:.3f}, rounded down to {STEP:g}: "
            "what `solar calibrate --dispatch-only` applies to a host's one run")} if len(h.dispatch_runs) >= 2 else {}),
        "derived_from": h.files + [rel(p) for p in h.shape_files],
        "sources": sources,
        "floors": floors,
    }


def default_profile(hosts: list[Host]) -> dict[str, Any]:
    """Floors below every host's least: per op the least any host measured (an op only some hosts
    measured: the least of those), per module class (and per class and op sequence) the least any
    host charges (its empty-module floor where it measured none), each times the default margin
    (least run factor x host-to-host factor, the latter over the ops every pair of hosts measured)."""
    run = min(h.factor for h in hosts)
    across, key = spread([dict(h.least["torch_eager_op_seconds"]) for h in hosts])
    if len(hosts) < 2:
        across, key = run, ""
    m = round_down(run * across)
    ops = sorted({op for h in hosts for op in h.least["torch_eager_op_seconds"]})
    empty = [h.least.get("torch_empty_module_seconds") for h in hosts]
    classes = sorted({c for h in hosts for c in h.least.get("torch_module_seconds", {})})
    floors: dict[str, Any] = {
        "torch_eager_op_seconds": {op: m * min(t for h in hosts if (t := h.op_floor(op)) is not None) for op in ops},
        "torch_eager_kernel_seconds": m * min(h.least["torch_eager_kernel_seconds"] for h in hosts),
        "torch_eager_any_seconds": m * min(h.least["torch_eager_any_seconds"] for h in hosts),
    }
    if all(empty):
        floors["torch_empty_module_seconds"] = m * min(empty)
        floors["torch_module_seconds"] = {
            c: m * min(h.least.get("torch_module_seconds", {}).get(c, h.least["torch_empty_module_seconds"]) for h in hosts)
            for c in classes
        }
        variants = sorted({(c, k) for h in hosts for c, by in h.least.get("torch_module_ops_seconds", {}).items() for k in by})
        floors["torch_module_ops_seconds"] = {
            c: {k: m * min(h.leaf_floor(c, k) for h in hosts) for cc, k in variants if cc == c}
            for c in dict.fromkeys(c for c, _ in variants)
        }
    swept = [h.class_floors() for h in hosts]
    floors = with_classes(floors, {op: {c: m * min(s[op][c] for s in swept) for c in by if all(c in s.get(op, {}) for s in swept)}
                                   for op, by in swept[0].items()})
    classes = "torch_eager_class_seconds" in floors
    rnn: dict[str, list[dict[str, Any]]] = {}
    for op in sorted({op for h in hosts for op in h.least.get("torch_rnn_seconds", {})}):
        shapes = {(f["hidden"], f["batch"]) for h in hosts for f in h.least.get("torch_rnn_seconds", {}).get(op, [])}
        rows = []
        for hidden, batch in sorted(shapes):
            fits = [_fit(h, op, hidden, batch) for h in hosts]
            if all(fits):
                rows.append({"hidden": hidden, "batch": batch, "call_seconds": m * min(f[0] for f in fits),
                             "step_seconds": m * min(f[1] for f in fits)})
        if rows:
            rnn[op] = rows
    if rnn:
        floors["torch_rnn_seconds"] = rnn
    jax = [h.least.get("jax_dispatch_seconds") for h in hosts]
    if all(jax):
        floors["jax_dispatch_seconds"] = m * min(jax)
    floors["timing_lead_seconds"] = max(h.least["timing_lead_seconds"] for h in hosts)
    names = ", ".join(h.name for h in hosts)
    rule = (f"{m:g} x the least over the hosts {names} (each host's least measured; an op only some hosts measured: "
            "the least of those; a module class a host did not measure: its empty-module floor)")
    sources = {k: rule for k in floors if k != "timing_lead_seconds"}
    sources["timing_lead_seconds"] = f"the largest of the hosts {names}"
    host_rule = (
        f"host-to-host: the least host's floor of every op is at least {across:.3f} x the next host's ({key})"
        if len(hosts) >= 2 else
        f"host-to-host: one host calibrated, taken equal to the run-to-run factor {run:.3f} until a second host is"
    )
    return {
        "name": DEFAULT_HOST,
        "description": "used where no profile matches the host: floors below every calibrated host's",
        "host_cpu": "any",
        "gpu": "",
        "torch": " and ".join(dict.fromkeys(str(h.least["torch"]) for h in hosts)),
        "cuda": " and ".join(dict.fromkeys(h.cuda() for h in hosts if h.cuda())),
        "jax": " and ".join(dict.fromkeys(str(h.least.get("jax", "")) for h in hosts if h.least.get("jax"))),
        "date": " and ".join(dict.fromkeys(str(h.least["date"]) for h in hosts)),
        "method": f"derived from the calibrated hosts {names} by benchmarks/host_profiles.py",
        "margin": m,
        "margin_source": (
            f"run-to-run factor {run:.3f} (the least over the hosts, see each host's margin_source) x "
            f"{host_rule}; the product rounded down to {STEP:g}"
        ),
        "derived_from": [f for h in hosts for f in h.files + ([rel(p) for p in h.shape_files] if classes else [])],
        "sources": sources,
        "floors": floors,
    }


def _fit(h: Host, op: str, hidden: int, batch: int) -> tuple[float, float] | None:
    rows = h.least.get("torch_rnn_seconds", {}).get(op, [])
    exact = [r for r in rows if (r["hidden"], r["batch"]) == (hidden, batch)]
    anyshape = [r for r in rows if (r["hidden"], r["batch"]) == (0, 0)]
    pick = (exact or anyshape or [None])[0]
    return None if pick is None else (pick["call_seconds"], pick["step_seconds"])


def device_floors(hosts: list[Host]) -> dict[str, dict[str, Any]]:
    """Per GPU spec name, its `device_floors` section from every host folder that ran on it."""
    out: dict[str, dict[str, Any]] = {}
    for gpu in sorted({h.gpu() for h in hosts if h.gpu()}):
        on = [h for h in hosts if h.gpu() == gpu]
        graph = [(r["cuda_graph_kernel_seconds"], rel(p)) for h in on for r, p in zip(h.dispatch_runs, h.dispatch_files)]
        graph += [(r[k]["graph"][stat]["min_seconds"], rel(p)) for h in on
                  for r, p in zip(h.floor_runs, h.floor_files) for k in ("empty", "one_element_add") if k in r
                  for stat in ("start_to_start", "events_per_kernel") if stat in r[k]["graph"]]
        spec = calibrated_spec(get_spec(gpu).name)
        earlier = spec.calibrated.get("min_kernel_seconds") if spec is not None else None
        if earlier is not None and "CUDA graph" in earlier.source:  # `solar calibrate`'s own replay / kernels
            graph.append((earlier.value, f"hardware_specs/calibrated/{spec.name}.yaml calibrated.min_kernel_seconds"))
        sync = min(h.least["grid_sync_seconds"] for h in on)
        barrier = [h.least["grid_barrier_seconds"] for h in on if h.least.get("grid_barrier_seconds")]
        files = ", ".join(sorted({f for _, f in graph}))
        section: dict[str, Any] = {
            "cuda_graph_kernel_seconds": {
                "value": min(t for t, _ in graph),
                "source": f"least measured interval per kernel of a CUDA-graph replay of back-to-back tiny kernels "
                          f"(replay time / kernels; kernel start to start where profiled) over {files}",
            },
            "grid_sync_seconds": {
                "value": sync,
                "source": "least of one kernel boundary in a CUDA-graph replay and a grid-wide barrier, over "
                          + ", ".join(f for h in on for f in h.files),
            },
        }
        if barrier:
            section["grid_barrier_seconds"] = {
                "value": min(barrier),
                "source": "least seconds per grid-wide atomic barrier over " + ", ".join(f for h in on for f in h.files),
            }
        out[get_spec(gpu).name] = section
    return out


def kernel_spans(hosts: list[Host]) -> dict[str, tuple[float, str]]:
    """Per GPU spec name, the shortest kernel duration any floors*.json shows (and where)."""
    out: dict[str, tuple[float, str]] = {}
    for h in hosts:
        for r, p in zip(h.floor_runs, h.floor_files):
            gpu = get_spec(r["environment"]["gpu"]).name
            for kernel in ("empty", "one_element_add"):
                for how in ("alone", "back_to_back", "graph"):
                    block = r.get(kernel, {}).get(how, {})
                    t = (block.get("duration") or block).get("min_seconds")
                    if t and (gpu not in out or t < out[gpu][0]):
                        out[gpu] = (t, f"{kernel} {how}, {rel(p)}")
    return out


def dump(data: dict[str, Any], header: str) -> str:
    import yaml

    return header + yaml.safe_dump(data, sort_keys=False, width=120)


PROFILE_HEADER = (
    "# Host dispatch floors (docs/BOUNDS.md §17): written by benchmarks/host_profiles.py from the raw\n"
    "# calibrations named in derived_from; edit those and rerun it rather than this file.\n"
)
SPEC_HEADER = (
    "# {name} datasheet spec plus ceilings measured by `solar calibrate` (dates in each source).\n"
    "# The calibrated values are achievable ceilings, shown as context; bounds use the datasheet peaks.\n"
    "# `device_floors`: floors measured on this GPU model (recurrence and graphed levels, docs/BOUNDS.md);\n"
    "# written by benchmarks/host_profiles.py. Host dispatch floors live in hardware_specs/hosts/.\n"
)


# The sections of a calibrated spec that are its own measurements (`solar calibrate`'s achievable
# ceilings); everything else is the base spec's, so an edit there reaches the calibrated file.
MEASURED_SECTIONS = ("calibrated",)


def calibrated_data(base: dict[str, Any], calibrated: dict[str, Any], section: dict[str, Any]) -> dict[str, Any]:
    """A calibrated spec's data: the base spec, the calibrated file's own measurements
    (MEASURED_SECTIONS) where it has them, and `section` as its device floors."""
    data = dict(base)
    data.update({k: calibrated[k] for k in MEASURED_SECTIONS if calibrated.get(k)})
    data["device_floors"] = section
    return data


def outputs(results: Path) -> dict[Path, str]:
    """Every file the raw data under `results` gives, with its text."""
    import yaml

    hosts = [Host(d) for d in sorted(results.iterdir()) if d.is_dir() and any(d.glob("dispatch*.json"))]
    if not hosts:
        raise SystemExit(f"no host folder with dispatch*.json under {results}")
    files = {HOST_DIR / f"{h.name}.yaml": dump(host_profile(h, hosts), PROFILE_HEADER) for h in hosts}
    files[HOST_DIR / f"{DEFAULT_HOST}.yaml"] = dump(default_profile(hosts), PROFILE_HEADER)
    for name, section in device_floors(hosts).items():
        path = CALIBRATED_DIR / f"{name}.yaml"
        data = calibrated_data(yaml.safe_load((SPEC_DIR / f"{name}.yaml").read_text()),
                               yaml.safe_load(path.read_text()) if path.is_file() else {}, section)
        files[path] = dump(data, SPEC_HEADER.format(name=name))
    for gpu, (t, where) in kernel_spans(hosts).items():
        print(f"{gpu}: shortest kernel span {t * 1e6:.3f} us ({where}); min_kernel_seconds at "
              f"{DEVICE_MARGIN:g} x: {DEVICE_MARGIN * t:.4g} s (edit hardware_specs/{gpu}.yaml)")
    for h in hosts:
        print(f"{h.name}: {h.runs} runs, run-to-run factor {h.factor:.3f} ({h.factor_key}), margin {host_margin(h, hosts)[0]:g}; "
              f"one run at least {h.single:.3f} x the least ({h.single_key}), one-run margin {one_run_margin(h):g}")
    return files


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--check", action="store_true")
    args = p.parse_args(argv)
    stale = []
    for path, text in outputs(args.results).items():
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(rel(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {rel(path)}")
    for path in stale:
        print(f"stale: {path} (run python benchmarks/host_profiles.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Time JAX order statistics (top_k, sort, argsort) and examples/jax/moe_router.py on the GPU and
compare each with its solar bounds: the jitted call after a write of 2x L2 (host clock around the
call and its completion, as `solar validate --train` times JAX), one JSON line per case on stdout.
A measured time below the fused bound would be a soundness violation.

    python benchmarks/jax_sort_h200.py --measure-only [--reps 30] > $OUT/jax_sort_times.jsonl   # on the GPU
    python benchmarks/jax_sort_h200.py --join jax_sort_times.jsonl [--arch H200-SXM] > jax_sort.jsonl  # any CPU

(without either flag: both on the GPU machine). The bounds need no GPU, so the GPU run only times."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solar.api import Loaded, analyze_loaded  # noqa: E402
from solar.backends.levels import violations  # noqa: E402
from solar.frontends.jax import lower_callable  # noqa: E402
from solar.hardware.spec import get_spec  # noqa: E402
from solar.validate.train import time_jax_steps  # noqa: E402


def F(*shape: int, dtype=jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


CASES = {
    "top_k router 16384x64 k=2": (lambda x: lax.top_k(x, 2), [F(16384, 64)]),
    "top_k 4096x32000 k=50": (lambda x: lax.top_k(x, 50), [F(4096, 32000)]),
    "sort 4096x4096": (lambda x: jnp.sort(x, axis=-1), [F(4096, 4096)]),
    "argsort 4096x4096": (lambda x: jnp.argsort(x, axis=-1), [F(4096, 4096)]),
    "sort 1x16M": (lambda x: jnp.sort(x), [F(1 << 24)]),
}


def _moe_case():
    from benchmarks.suite_tools import load_problem

    mod = load_problem(ROOT / "examples" / "jax" / "moe_router.py")
    model = mod.Model(*mod.get_init_inputs())
    (x,) = mod.get_inputs()
    params = model.init(jax.random.PRNGKey(0), jnp.zeros(x.shape, x.dtype))
    return (lambda p, x: model.apply(p, x)), params, x


def _bounds(fn, structs, arch):
    program, traced = lower_callable(fn, structs)
    report = analyze_loaded(Loaded(program, traced.flags, traced.source_file), arch)
    return {level: b.seconds for level, b in report.bounds.items()}


def _real(s, rng):
    return jnp.asarray(rng.standard_normal(s.shape).astype(np.dtype(s.dtype)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="H200-SXM")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--measure-only", action="store_true")
    ap.add_argument("--join", type=Path, help="times written by --measure-only: add the bounds")
    args = ap.parse_args()
    if args.join:
        return _join(args.join, args.arch)
    l2 = int(get_spec(args.arch).l2_bytes)
    rng = np.random.default_rng(0)
    env = {"jax": jax.__version__, "device": str(jax.devices()[0].device_kind)}
    for name, (fn, structs) in CASES.items():
        inputs = [_real(s, rng) for s in structs]
        jitted = jax.jit(fn)
        t = time_jax_steps(lambda _: jitted(*inputs), None, l2, args.reps)
        _emit(name, t, env, None if args.measure_only else _bounds(fn, structs, args.arch), args.arch)
    moe, params, x = _moe_case()
    xs = _real(x, rng)
    jitted = jax.jit(moe)
    t = time_jax_steps(lambda _: jitted(params, xs), None, l2, args.reps)
    _emit(MOE, t, env, None if args.measure_only else _moe_bounds(args.arch), args.arch)
    return 0


MOE = "examples/jax/moe_router.py"


def _moe_bounds(arch: str) -> dict:
    from solar.frontends.jax import lower_file

    program, traced = lower_file(ROOT / MOE)
    report = analyze_loaded(Loaded(program, traced.flags, traced.source_file), arch)
    return {k: b.seconds for k, b in report.bounds.items()}


def _with_bounds(row: dict, bounds: dict, arch: str) -> dict:
    found = violations(bounds, {"jit": row["measured_min_s"]})  # a jitted program: any implementation
    return dict(row, arch=arch, bounds_s=bounds, violation=bool(found))


def _emit(name: str, t, env: dict, bounds: dict | None, arch: str) -> None:
    row = {"case": name, "measured_min_s": t.min_seconds, "measured_median_s": t.median_seconds,
           "reps": t.reps, "environment": env}
    print(json.dumps(row if bounds is None else _with_bounds(row, bounds, arch)), flush=True)


def _join(path: Path, arch: str) -> int:
    """The bounds of every timed case (on this CPU), beside its committed time."""
    for line in path.read_text().splitlines():
        row = json.loads(line)
        name = row["case"]
        bounds = _moe_bounds(arch) if name == MOE else _bounds(*CASES[name], arch)
        print(json.dumps(_with_bounds(row, bounds, arch)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Time JAX order statistics (top_k, sort, argsort) and examples/jax/moe_router.py on the GPU and
compare each with its solar bounds: the jitted call after a write of 2x L2 (host clock around the
call and its completion, as `solar validate --train` times JAX), one JSON line per case on stdout.
A measured time below the fused bound would be a soundness violation.

    python benchmarks/jax_sort_h200.py [--arch H200-SXM] [--reps 30] > $OUT/jax_sort.jsonl"""

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
    args = ap.parse_args()
    l2 = int(get_spec(args.arch).l2_bytes)
    rng = np.random.default_rng(0)
    env = {"jax": jax.__version__, "device": str(jax.devices()[0].device_kind)}
    rows = []
    for name, (fn, structs) in CASES.items():
        inputs = [_real(s, rng) for s in structs]
        jitted = jax.jit(fn)
        t = time_jax_steps(lambda _: jitted(*inputs), None, l2, args.reps)
        rows.append((name, _bounds(fn, structs, args.arch), t))
    moe, params, x = _moe_case()
    xs = _real(x, rng)
    jitted = jax.jit(moe)
    t = time_jax_steps(lambda _: jitted(params, xs), None, l2, args.reps)
    from solar.frontends.jax import lower_file

    program, traced = lower_file(ROOT / "examples" / "jax" / "moe_router.py")
    report = analyze_loaded(Loaded(program, traced.flags, traced.source_file), args.arch)
    rows.append(("examples/jax/moe_router.py", {k: b.seconds for k, b in report.bounds.items()}, t))
    for name, bounds, t in rows:
        row = {
            "case": name,
            "arch": args.arch,
            "measured_min_s": t.min_seconds,
            "measured_median_s": t.median_seconds,
            "reps": t.reps,
            "bounds_s": bounds,
            "violation": t.min_seconds < bounds["fused"],
            "environment": env,
        }
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Hand-written IR for the programs of the tests (the replies the scripted server gives)."""

DOUBLE = """program double {
  sym N = 4
  sym M = 3
  input x: f32[N, M]
  output y: f32[N, M]
  for i in 0..N, j in 0..M:
    y[i, j] = x[i, j] * 2.0
}
"""

DOUBLE_WRONG = DOUBLE.replace("* 2.0", "* 3.0")

DATA_DEPENDENT = """program data_dependent {
  sym B = 64
  sym F = 128
  sym O = 96
  input x: f32[B, F]
  param proj_weight: f32[O, F]
  temp m: f32[1]
  temp y: f32[B, O]
  output out: f32[B, O]
  m[0] = -inf
  for b in 0..B, f in 0..F:
    m[0] max= x[b, f]
  for b in 0..B, o in 0..O:
    y[b, o] = 0.0
  for b in 0..B, o in 0..O, f in 0..F:
    y[b, o] += x[b, f] * proj_weight[o, f]
  for b in 0..B, o in 0..O:
    out[b, o] = y[b, o] * where(gt(m[0], 1.0), 2.0, 0.5)
}
"""

CUSTOM_FUNCTION = """program custom_function {
  sym R = 32
  sym C = 48
  input x: f32[R, C]
  temp m: f32[R]
  output y: f32[R, C]
  for r in 0..R:
    m[r] = 0.0
  for r in 0..R, c in 0..C:
    m[r] += abs(x[r, c])
  for r in 0..R:
    m[r] = m[r] / index(C)
  for r in 0..R, c in 0..C:
    y[r, c] = max(min(x[r, c], m[r]), neg(m[r])) * 3.0
}
"""

NUMPY_FORWARD = """program numpy_forward {
  sym N = 16
  sym D = 32
  sym K = 24
  input x: f32[N, D]
  param w: f32[D, K]
  temp a: f32[N, K]
  temp mx: f32[N]
  temp s: f32[N]
  output y: f32[N, K]
  for i in 0..N, j in 0..K:
    a[i, j] = 0.0
  for i in 0..N, j in 0..K, d in 0..D:
    a[i, j] += x[i, d] * w[d, j]
  for i in 0..N:
    mx[i] = -inf
  for i in 0..N, j in 0..K:
    mx[i] max= a[i, j]
  for i in 0..N, j in 0..K:
    y[i, j] = exp(a[i, j] - mx[i])
  for i in 0..N:
    s[i] = 0.0
  for i in 0..N, j in 0..K:
    s[i] += y[i, j]
  for i in 0..N, j in 0..K:
    y[i, j] = y[i, j] / s[i]
}
"""

# the op alone: torch.hypot on two tensors of one shape
HYPOT_OP = """program hypot {
  sym N = 4
  sym M = 4
  input in0: f32[N, M]
  input in1: f32[N, M]
  output out0: f32[N, M]
  for i in 0..N, j in 0..M:
    out0[i, j] = sqrt(in0[i, j] * in0[i, j] + in1[i, j] * in1[i, j])
}
"""

# the whole of tests/frontends/llm/missing_op.py, by hand
MISSING_OP_WHOLE = """program missing_op {
  input x: f32[32, 40]
  input y: f32[32, 40]
  temp h: f32[32, 40]
  output out: f32[32, 40]
  for i in 0..32, j in 0..40:
    h[i, j] = sqrt(x[i, j] * x[i, j] + y[i, j] * y[i, j])
  for i in 0..32, j in 0..40:
    out[i, j] = exp(h[i, j]) * x[i, j]
}
"""


def in_order_supported() -> bool:
    """Whether the IR parser reads in-order loops (`for t in 0..T in order:`)."""
    from solar.errors import SolarError
    from solar.ir.parser import parse_program

    try:
        parse_program(IN_ORDER_PROBE)
    except SolarError:
        return False
    return True


IN_ORDER_PROBE = """program probe {
  input x: f32[4]
  output y: f32[4]
  for t in 0..4 in order {
    y[t] = x[t]
  }
}
"""

# tests/examples llm/library_filter.py: y[c, t] = x[c, t] + 0.9 * y[c, t - 1]
LIBRARY_FILTER = """program library_filter {
  sym C = 8
  sym T = 64
  input x: f32[C, T]
  output y: f32[C, T]
  for c in 0..C:
    y[c, 0] = x[c, 0]
  for t in 0..T in order {
    for c in 0..C where t >= 1:
      y[c, t] = x[c, t] + 0.9 * y[c, t - 1]
  }
}
"""

# A new op, written from docs/IR.md's examples alone (the in-order loop, guards, log1p/exp/abs):
# logcumsumexp along dim 1, as the recurrence out[t] = logaddexp(out[t - 1], x[t]), computed
# stably as max(a, b) + log1p(exp(-|a - b|)). Linear work, as a scan does.
LOGCUMSUMEXP_OP = """program logcumsumexp {
  sym R = 4
  sym C = 6
  input in0: f32[R, C]
  output out0: f32[R, C]
  for r in 0..R:
    out0[r, 0] = in0[r, 0]
  for t in 0..C in order {
    for r in 0..R where t >= 1:
      out0[r, t] = max(out0[r, t - 1], in0[r, t]) + log1p(exp(neg(abs(out0[r, t - 1] - in0[r, t]))))
  }
}
"""

JAX_NUMPY = """program jax_numpy {
  sym N = 16
  sym D = 12
  input x: f32[N, D]
  input w: f32[D, D]
  temp h: f32[N, D]
  output y: f32[N, D]
  for i in 0..N, j in 0..D:
    h[i, j] = 0.0
  for i in 0..N, j in 0..D, k in 0..D:
    h[i, j] += x[i, k] * w[k, j]
  for i in 0..N, j in 0..D:
    y[i, j] = tanh(h[i, j]) * tanh(h[i, j])
}
"""

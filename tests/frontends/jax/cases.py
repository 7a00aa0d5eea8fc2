"""Cases for the JAX lowering table: per primitive, small programs whose jaxpr contains it at the
top level. Arguments are jax.ShapeDtypeStructs; a program that needs positive values or in-range
indices makes them itself (the checks feed standard-normal floats and integers in 0..7)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.extend.core as jc
import jax.numpy as jnp
from jax import lax

from solar.frontends.jax.lowerings.collectives import COLLECTIVE_PRIMITIVES
from solar.frontends.jax.primitives import P


def F(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def H(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.bfloat16)


def I(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.int32)


def B(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.bool_)


@dataclass(frozen=True)
class Case:
    """`fn(*args)` traced with make_jaxpr, or a jaxpr built by `build()` when no user code
    produces the primitive directly."""

    fn: Callable[..., Any] | None
    args: tuple[Any, ...]
    build: Callable[[], jc.ClosedJaxpr] | None = None


def pos(x: Any) -> Any:
    return jnp.abs(x) + 0.1


def c(fn: Callable[..., Any], *args: Any) -> Case:
    return Case(fn, args)


def _closed_call() -> jc.ClosedJaxpr:
    inner = jax.make_jaxpr(lambda a: jnp.sin(a) * 2)(F(3, 5))
    a, b = jc.Var(inner.in_avals[0]), jc.Var(inner.out_avals[0])
    eqn = jc.new_jaxpr_eqn([a], [b], P.closed_call_p, {"call_jaxpr": inner}, jc.no_effects)
    return jc.ClosedJaxpr(jc.Jaxpr([], [a], [b], [eqn]), [])


@jax.custom_vjp
def _sin_vjp(x: Any) -> Any:
    return jnp.sin(x) * 3


_sin_vjp.defvjp(lambda x: (_sin_vjp(x), x), lambda r, g: (g * jnp.cos(r),))


@jax.custom_jvp
def _softsign(x: Any) -> Any:
    return x / (1 + jnp.abs(x))


_softsign.defjvp(lambda p, t: (_softsign(p[0]), t[0] / (1 + jnp.abs(p[0])) ** 2))

def _specials(x: Any) -> Any:
    """NaN above 1, -inf below -1: keys with special values, ties among them. The NaN is
    computed (a NaN constant is not equal to itself after the text round trip) and made positive
    (x86's sqrt(-1) is -NaN, which top_k, ordering floats totally, puts least)."""
    nan = jnp.abs(jnp.sqrt(-x))
    return jnp.where(x > 1.0, nan, jnp.where(x < -1.0, jnp.log(x * 0.0), x))


DN_NHWC = ("NHWC", "HWIO", "NHWC")


def _conv(x: Any, w: Any, **kw: Any) -> Any:
    return lax.conv_general_dilated(x, w, **kw)


def _scan_mlp(h: Any, w: Any, xs: Any) -> Any:
    def body(carry: Any, x: Any) -> Any:
        carry = jnp.tanh(carry @ w + x)
        return carry, carry.sum(axis=1)

    return lax.scan(body, h, xs)


def _nested_scan(h: Any, xs: Any) -> Any:
    def inner(c: Any, x: Any) -> Any:
        return c * 0.5 + x, c

    def outer(c: Any, row: Any) -> Any:
        c, ys = lax.scan(inner, c, row, reverse=True)
        return c + 1.0, ys

    return lax.scan(outer, h, xs)


def _counter_slice(x: Any) -> Any:
    return lax.fori_loop(
        0, 4, lambda i, acc: acc + lax.dynamic_slice(x, (i, 0), (1, 5)) * i, jnp.zeros((1, 5))
    )


CASES: dict[Any, list[Case]] = {
    P.add_p: [
        c(lambda x, y: x + y, F(3, 5), F(3, 5)),
        c(lambda x: x + 1.5, F(3, 5)),
        c(lambda i: i + 3, I(4)),
    ],
    P.sub_p: [c(lambda x, y: x - y, F(3, 5), F(1, 5))],
    # the sum of two cotangents of one value (its two uses), in a gradient's jaxpr
    P.add_jaxvals_p: [c(lambda x: jax.grad(lambda y: jnp.sum(jnp.sin(y) * y))(x), F(3, 5))],
    P.mul_p: [c(lambda x, y: x * y, F(3, 5), F(3, 5))],
    P.div_p: [
        c(lambda x, y: x / pos(y), F(3, 5), F(3, 5)),
        c(lambda i, j: lax.div(i - 4, j + 1), I(6), I(6)),
    ],
    P.rem_p: [
        c(lambda x, y: lax.rem(x * 3, pos(y)), F(3, 5), F(3, 5)),
        c(lambda i, j: lax.rem(i - 4, j + 1), I(6), I(6)),
    ],
    P.max_p: [c(lambda x, y: jnp.maximum(x, y), F(3, 5), F(3, 5))],
    P.min_p: [c(lambda x, y: jnp.minimum(x, y), F(3, 5), F(3, 5))],
    P.pow_p: [c(lambda x, y: lax.pow(pos(x), y), F(3, 5), F(3, 5))],
    P.integer_pow_p: [
        c(lambda x: x**2, F(3, 5)),
        c(lambda x: x**3, F(3, 5)),
        c(lambda x: x**5, F(3, 5)),
        c(lambda x: lax.integer_pow(pos(x), -2), F(3, 5)),
    ],
    P.square_p: [c(lax.square, F(3, 5))],
    P.neg_p: [c(lambda x: -x, F(3, 5))],
    P.abs_p: [c(jnp.abs, F(3, 5))],
    P.sign_p: [c(jnp.sign, F(3, 5))],
    P.floor_p: [c(lambda x: jnp.floor(x * 3), F(3, 5))],
    P.ceil_p: [c(lambda x: jnp.ceil(x * 3), F(3, 5))],
    P.round_p: [c(lambda x: lax.round(x * 3), F(3, 5)), c(lambda x: jnp.round(x * 3), F(3, 5))],
    P.exp_p: [c(jnp.exp, F(3, 5))],
    P.exp2_p: [c(jnp.exp2, F(3, 5))],
    P.log_p: [c(lambda x: jnp.log(pos(x)), F(3, 5))],
    P.log1p_p: [c(lambda x: jnp.log1p(pos(x)), F(3, 5))],
    P.expm1_p: [c(jnp.expm1, F(3, 5))],
    P.tanh_p: [c(jnp.tanh, F(3, 5))],
    P.one_minus_square_p: [c(P.one_minus_square_p.bind, F(3, 5))],
    P.logistic_p: [c(lax.logistic, F(3, 5))],
    P.erf_p: [c(lax.erf, F(3, 5))],
    P.erfc_p: [c(lax.erfc, F(3, 5))],
    P.sqrt_p: [c(lambda x: jnp.sqrt(pos(x)), F(3, 5))],
    P.rsqrt_p: [c(lambda x: lax.rsqrt(pos(x)), F(3, 5))],
    P.sin_p: [c(jnp.sin, F(3, 5))],
    P.cos_p: [c(jnp.cos, F(3, 5))],
    P.is_finite_p: [c(lambda x: lax.is_finite(jnp.log(x)), F(3, 5))],
    P.eq_p: [c(lambda i, j: i == j, I(3, 5), I(3, 5))],
    P.ne_p: [c(lambda i, j: i != j, I(3, 5), I(3, 5))],
    P.lt_p: [c(lambda x, y: x < y, F(3, 5), F(3, 5))],
    P.le_p: [c(lambda x, y: x <= y, F(3, 5), F(3, 5))],
    P.gt_p: [c(lambda x: x > 0.2, F(3, 5))],
    P.ge_p: [c(lambda x, y: x >= y, F(3, 5), F(5))],
    P.select_n_p: [
        c(lambda b, x, y: lax.select_n(b, x, y), B(3, 5), F(3, 5), F(3, 5)),
        c(
            lambda i, x, y, z: lax.select_n(lax.rem(i, 3), x, y, z),
            I(3, 5),
            F(3, 5),
            F(3, 5),
            F(3, 5),
        ),
    ],
    P.clamp_p: [c(lambda x: lax.clamp(-0.5, x, 0.7), F(3, 5))],
    P.and_p: [c(lambda a, b: a & b, B(3, 5), B(3, 5))],
    P.or_p: [c(lambda a, b: a | b, B(3, 5), B(3, 5))],
    P.xor_p: [c(lambda a, b: a ^ b, B(3, 5), B(3, 5))],
    P.not_p: [c(lambda a: ~a, B(3, 5))],
    P.convert_element_type_p: [
        c(lambda x: (x * 3).astype(jnp.int32), F(3, 5)),
        c(lambda x: x.astype(jnp.bfloat16), F(3, 5)),
        c(lambda b, i: b.astype(jnp.float32) + i.astype(jnp.float32), B(4), I(4)),
    ],
    P.broadcast_in_dim_p: [
        c(lambda x: lax.broadcast_in_dim(x, (4, 3, 5), (1, 2)), F(3, 1)),
        c(lambda x: jnp.broadcast_to(x, (2, 3, 5)), F(3, 5)),
    ],
    P.reshape_p: [
        c(lambda x: x.reshape(15), F(3, 5)),
        c(lambda x: lax.reshape(x, (5, 3), dimensions=(1, 0)), F(3, 5)),
    ],
    P.transpose_p: [c(lambda x: x.transpose(2, 0, 1), F(2, 3, 4))],
    P.squeeze_p: [c(lambda x: lax.squeeze(x, (1,)), F(3, 1, 5))],
    P.slice_p: [
        c(lambda x: x[1:3, ::2], F(3, 5)),
        c(lambda x: lax.slice(x, (0, 1), (3, 5), (2, 2)), F(3, 5)),
    ],
    P.dynamic_slice_p: [
        c(lambda x: lax.dynamic_slice(x, (1, 2), (2, 3)), F(3, 5)),
        c(lambda x: lax.dynamic_slice(x, (2, 4), (2, 3)), F(3, 5)),
    ],
    P.dynamic_update_slice_p: [
        c(lambda x, u: lax.dynamic_update_slice(x, u, (1, 2)), F(4, 6), F(2, 3))
    ],
    P.concatenate_p: [c(lambda x, y: jnp.concatenate([x, y], axis=1), F(3, 5), F(3, 2))],
    P.split_p: [c(lambda x: jnp.split(x, [2], axis=1), F(3, 5))],
    P.pad_p: [
        c(lambda x: lax.pad(x, 0.0, ((1, -1, 1), (0, 2, 0))), F(4, 5)),
        c(lambda x, v: lax.pad(x, v, ((2, 1, 2),)), F(4), F()),
    ],
    P.rev_p: [c(lambda x: lax.rev(x, (0,)), F(3, 5))],
    P.iota_p: [
        c(lambda x: x + lax.iota(jnp.float32, 5), F(3, 5)),
        c(lambda: lax.broadcasted_iota(jnp.int32, (3, 5), 1)),
    ],
    P.copy_p: [c(jnp.copy, F(3, 5))],
    P.stop_gradient_p: [c(lambda x: lax.stop_gradient(x) * 2, F(3, 5))],
    P.optimization_barrier_p: [c(lambda x, y: lax.optimization_barrier((x, y)), F(3, 5), F(2))],
    P.gather_p: [
        c(lambda t, i: t[i], F(10, 4), I(3)),
        c(lambda x, i: jnp.take_along_axis(x, i % 5, axis=1), F(3, 5), I(3, 2)),
        c(lambda x, i: x[:, i], F(3, 9), I(2, 2)),
    ],
    P.reduce_sum_p: [c(lambda x: x.sum(axis=1), F(3, 5)), c(jnp.sum, F(3, 5))],
    P.reduce_max_p: [c(lambda x: x.max(axis=0), F(3, 5)), c(lambda i: i.max(), I(3, 5))],
    P.reduce_min_p: [c(lambda x: x.min(axis=(0, 1)), F(3, 5))],
    P.reduce_prod_p: [c(lambda x: jnp.prod(x, axis=1), F(3, 5))],
    P.reduce_and_p: [c(lambda b: jnp.all(b, axis=1), B(3, 5))],
    P.reduce_or_p: [c(jnp.any, B(3, 5))],
    P.reduce_window_sum_p: [
        c(
            lambda x: lax.reduce_window(
                x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 1, 1), ((0, 0), (1, 1), (1, 0), (0, 0))
            ),
            F(2, 7, 6, 3),
        )
    ],
    P.reduce_window_max_p: [
        c(
            lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
            F(2, 8, 8, 3),
        ),
        c(
            lambda x: lax.reduce_window(
                x,
                -jnp.inf,
                lax.max,
                (3, 2),
                (1, 1),
                ((1, 1), (0, 1)),
                base_dilation=(2, 1),
                window_dilation=(1, 2),
            ),
            F(4, 6),
        ),
    ],
    P.reduce_window_min_p: [
        c(lambda x: lax.reduce_window(x, jnp.inf, lax.min, (2, 3), (2, 1), "SAME"), F(5, 6))
    ],
    P.argmax_p: [c(lambda x: jnp.argmax(x, axis=1), F(3, 5))],
    P.argmin_p: [c(lambda x: jnp.argmin(x, axis=0), F(3, 5))],
    P.sort_p: [
        c(jnp.sort, F(3, 5)),
        c(lambda x: jnp.sort(x, axis=0, descending=True), F(4, 5)),  # rev . sort . rev
        c(jnp.argsort, I(3, 9)),  # integers in 1..7: ties, to the lower position
        c(lambda x: jnp.argsort(x, axis=0, descending=True), I(9, 4)),
        c(lambda x: jnp.argsort(x, stable=False), F(2, 7)),
        c(lambda x: jnp.argsort(_specials(x)), F(4, 9)),  # NaN greatest, -inf least
        c(lambda k, a, b: lax.sort((k, a, b), dimension=0, num_keys=1), I(6, 3), F(6, 3), I(6, 3)),
        c(lambda x: jnp.sort(x.T * 2.0, axis=None), F(3, 4)),  # computed, flattened keys
        c(jnp.sort, F(1)),
        c(lambda i: jnp.argsort(i > 3), I(3, 9)),  # bool keys
        c(lax.sort_key_val, I(3, 8), F(3, 8)),
    ],
    P.top_k_p: [
        c(lambda x: lax.top_k(x, 2), F(3, 8)),
        c(lambda x: lax.top_k(x, 3), I(4, 9)),  # ties, to the lower position
        c(lambda x: lax.top_k(x, 2, axis=0), F(6, 5)),
        c(lambda x: lax.top_k(_specials(x), 4), F(3, 9)),
        c(lambda x: lax.top_k(x, 1), F(5, 1)),
        c(lambda x: lax.top_k(x, 2), H(3, 8)),
        c(lambda i: lax.top_k(i.astype(jnp.int8), 3), I(4, 9)),
        c(lambda x: jnp.partition(x, 3), F(4, 9)),  # top_k of the negated keys
    ],
    P.approx_top_k_p: [
        c(lambda x: lax.approx_max_k(x, 3), F(4, 16)),
        c(lambda x: lax.approx_min_k(x, 2, reduction_dimension=0), F(9, 5)),
    ],
    P.cumsum_p: [
        c(lambda x: lax.cumsum(x, axis=1), F(3, 5)),
        c(lambda x: lax.cumsum(x, axis=0, reverse=True), F(3, 5)),
    ],
    P.cumprod_p: [c(lambda x: lax.cumprod(x, axis=1), F(3, 5))],
    P.cummax_p: [c(lambda x: lax.cummax(x, axis=0), F(4, 5))],
    P.cummin_p: [c(lambda x: lax.cummin(x, axis=1, reverse=True), F(3, 5))],
    P.cumlogsumexp_p: [c(lambda x: lax.cumlogsumexp(x, axis=1), F(3, 5))],
    P.dot_general_p: [
        c(lambda a, b: a @ b, F(4, 6), F(6, 3)),
        c(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), F(2, 4, 6), F(2, 6, 3)),
        c(lambda a, b: jnp.einsum("bhqd,bhkd->bhqk", a, b), F(2, 3, 4, 5), F(2, 3, 6, 5)),
        c(lambda a, b: lax.dot_general(a, b, (((), ()), ((), ()))), F(3), F(4)),
        c(lambda a, b: jnp.dot(a, b, precision="highest"), F(4, 6), F(6, 3)),
        c(lambda a, b: a @ b, H(4, 6), H(6, 3)),
    ],
    P.conv_general_dilated_p: [
        c(
            lambda x, w: _conv(
                x, w, window_strides=(2, 2), padding=((1, 1), (1, 1)), dimension_numbers=DN_NHWC
            ),
            F(2, 9, 9, 3),
            F(3, 3, 3, 4),
        ),
        c(
            lambda x, w: _conv(
                x,
                w,
                window_strides=(1, 2),
                padding=((2, 1), (0, 1)),
                rhs_dilation=(2, 1),
                feature_group_count=2,
            ),
            F(1, 4, 8, 7),
            F(6, 2, 3, 2),
        ),
        c(
            lambda x, w: _conv(x, w, window_strides=(1,), padding=((2, 2),), lhs_dilation=(2,)),
            F(2, 3, 6),
            F(4, 3, 3),
        ),
        c(
            lambda x, w: _conv(
                x,
                w,
                window_strides=(1, 1),
                padding="SAME",
                dimension_numbers=DN_NHWC,
                feature_group_count=4,
            ),
            F(1, 6, 6, 4),
            F(3, 3, 1, 4),
        ),
    ],
    P.jit_p: [c(jax.jit(lambda x: jnp.sin(x) * 2), F(3, 5))],
    P.closed_call_p: [Case(None, (F(3, 5),), _closed_call)],
    P.custom_jvp_call_p: [c(jax.nn.relu, F(3, 5)), c(_softsign, F(3, 5))],
    P.custom_vjp_call_p: [c(_sin_vjp, F(3, 5))],
    P.remat_p: [c(jax.checkpoint(lambda x: jnp.sin(x) * 2), F(3, 5))],
    P.scan_p: [
        c(_scan_mlp, F(2, 4), F(4, 4), F(6, 2, 4)),
        c(_nested_scan, F(3), F(4, 5, 3)),
        c(lambda x: lax.fori_loop(0, 5, lambda i, a: a * 0.9 + i, x), F(3, 5)),
        c(lambda x: lax.scan(lambda c, _: (c + 1.0, c * 2), x, length=3, reverse=True), F(2)),
        c(_counter_slice, F(4, 5)),
    ],
    P.while_p: [
        c(
            lambda x: lax.while_loop(
                lambda s: s[0] < 5, lambda s: (s[0] + 2, s[1] * 0.9 + 1), (0, x)
            )[1],
            F(3, 5),
        )
    ],
}


# Collectives: their results depend on every rank, so they are checked through whole sharded programs
# run on simulated ranks (tests/frontends/jax/test_jax_sharded.py).
BY_PROGRAM = frozenset(COLLECTIVE_PRIMITIVES)

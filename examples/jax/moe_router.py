"""A mixture-of-experts feed-forward layer in Flax (linen) with top-2 routing, as Mixtral-style JAX
code writes it: router logits -> lax.top_k -> softmax over the two chosen logits -> each token's two
experts' SwiGLU weights gathered by expert id -> the gate-weighted sum of the two experts' outputs.
The gathered weights are data-dependent reads (nothing is copied), so the work is k experts per
token, not all E."""

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax import lax

TOKENS = 512
D_MODEL = 1024
D_FF = 2048
EXPERTS = 8
TOP_K = 2


class Model(nn.Module):
    experts: int
    top_k: int
    d_ff: int

    @nn.compact
    def __call__(self, x):
        d = x.shape[-1]
        logits = nn.Dense(self.experts, use_bias=False, name="router")(x)
        gate_logits, expert_ids = lax.top_k(logits, self.top_k)  # (tokens, k)
        gates = jax.nn.softmax(gate_logits, axis=-1)
        init = nn.initializers.lecun_normal()
        w_gate = self.param("w_gate", init, (self.experts, d, self.d_ff))
        w_up = self.param("w_up", init, (self.experts, d, self.d_ff))
        w_down = self.param("w_down", init, (self.experts, self.d_ff, d))
        g = jnp.einsum("td,tkdf->tkf", x, w_gate[expert_ids])
        u = jnp.einsum("td,tkdf->tkf", x, w_up[expert_ids])
        y = jnp.einsum("tkf,tkfd->tkd", nn.silu(g) * u, w_down[expert_ids])
        return jnp.einsum("tk,tkd->td", gates, y)


def get_inputs():
    return [jax.ShapeDtypeStruct((TOKENS, D_MODEL), jnp.float32)]


def get_init_inputs():
    return [EXPERTS, TOP_K, D_FF]

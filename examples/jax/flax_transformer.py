"""A pre-norm transformer block in Flax (linen), bf16: LayerNorm -> q/k/v projections -> causal
multi-head attention (softmax) -> output projection -> residual, LayerNorm -> GELU MLP -> residual."""

import flax.linen as nn
import jax
import jax.numpy as jnp

BATCH = 4
SEQ = 1024
HEADS = 16
HEAD_DIM = 64
D_MODEL = HEADS * HEAD_DIM
MLP_DIM = 4 * D_MODEL


class Model(nn.Module):
    heads: int
    mlp_dim: int

    @nn.compact
    def __call__(self, x):
        b, s, d = x.shape
        hd = d // self.heads
        h = nn.LayerNorm(dtype=jnp.bfloat16)(x)
        q = nn.Dense(d, dtype=jnp.bfloat16, name="q")(h).reshape(b, s, self.heads, hd)
        k = nn.Dense(d, dtype=jnp.bfloat16, name="k")(h).reshape(b, s, self.heads, hd)
        v = nn.Dense(d, dtype=jnp.bfloat16, name="v")(h).reshape(b, s, self.heads, hd)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(hd).astype(jnp.bfloat16)
        causal = jnp.tril(jnp.ones((s, s), dtype=bool))
        scores = jnp.where(causal, scores, jnp.finfo(jnp.bfloat16).min)
        probs = jax.nn.softmax(scores.astype(jnp.float32), axis=-1).astype(jnp.bfloat16)
        attn = jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(b, s, d)
        x = x + nn.Dense(d, dtype=jnp.bfloat16, name="out")(attn)
        h = nn.LayerNorm(dtype=jnp.bfloat16)(x)
        h = nn.gelu(nn.Dense(self.mlp_dim, dtype=jnp.bfloat16, name="up")(h))
        return x + nn.Dense(d, dtype=jnp.bfloat16, name="down")(h)


def get_inputs():
    return [jax.ShapeDtypeStruct((BATCH, SEQ, D_MODEL), jnp.bfloat16)]


def get_init_inputs():
    return [HEADS, MLP_DIM]

"""Causal masks built as data are found, so every form counts the S(S+1)/2 kept scores that
PyTorch's `is_causal` SDPA counts: HF transformers' masks (positions compared, combined with `&`;
solar/frontends/torch/constants.py), and JAX masks (`jnp.tril`, `nn.make_causal_mask`, compared
iotas: the structure pass). The same small causal transformer in PyTorch and in JAX gives the same
contraction FLOPs, exact integers."""

from __future__ import annotations

import pytest

import solar

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

B, S, H, D = 1, 8, 2, 4
E = H * D
# q, k, v, o projections (2·S·E·E each) + Q·Kᵀ and P·V over the kept pairs (2·H·D·S(S+1)/2 each)
CAUSAL = 4 * 2 * S * E * E + 2 * 2 * H * D * (S * (S + 1) // 2)


class TorchBlock(torch.nn.Module):
    def __init__(self, form: str):
        super().__init__()
        self.form = form
        self.q, self.k, self.v, self.o = (torch.nn.Linear(E, E, bias=False) for _ in range(4))

    def forward(self, x):
        heads = lambda t: t.view(B, S, H, D).transpose(1, 2)  # noqa: E731
        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        if self.form == "is_causal":
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # a mask built as data, as HF transformers builds it
            pos = torch.arange(S)
            mask = (pos[None, :] <= pos[:, None]) & torch.ones(S, S, dtype=torch.bool)
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o(a.transpose(1, 2).reshape(B, S, E))


def _jax_block(form: str):
    import flax.linen as nn

    def forward(x, wq, wk, wv, wo):
        heads = lambda t: t.reshape(B, S, H, D)  # noqa: E731
        q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(float(D))
        if form == "tril":
            mask = jnp.tril(jnp.ones((S, S), dtype=bool))
        elif form == "make_causal_mask":
            mask = nn.make_causal_mask(jnp.ones((B, S)), dtype=bool)
        else:  # compared iotas
            mask = jnp.arange(S)[None, :] <= jnp.arange(S)[:, None]
        probs = jax.nn.softmax(jnp.where(mask, scores, -jnp.inf), axis=-1)
        return jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(B, S, E) @ wo

    return forward


@pytest.mark.parametrize("form", ["is_causal", "data_mask"])
def test_torch_causal_forms(form):
    report = solar.analyze(TorchBlock(form), (torch.randn(B, S, E),), arch="H100-SXM")
    assert report.totals.contraction_flops == CAUSAL


@pytest.mark.parametrize("form", ["tril", "make_causal_mask", "iota"])
def test_jax_causal_forms_equal_torch(form):
    pytest.importorskip("flax")
    spec = jax.ShapeDtypeStruct
    inputs = [spec((B, S, E), jnp.float32)] + [spec((E, E), jnp.float32)] * 4
    report = solar.analyze(_jax_block(form), inputs, arch="H100-SXM")
    assert report.totals.contraction_flops == CAUSAL


def test_hf_llama_and_mistral_masks_are_causal(tmp_path):
    """HF's create_causal_mask (arange positions, index, le, packed-sequence eq, &): the scores kept
    are the causal triangle; Mistral's sliding window (4 < S) keeps the band j - i in [-3, 0]."""
    pytest.importorskip("transformers")
    from transformers import LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM

    hidden, inter, vocab, heads, seq = 32, 64, 64, 2, 8
    dense = 4 * 2 * seq * hidden * hidden + 3 * 2 * seq * hidden * inter + 2 * seq * hidden * vocab
    per_pair = 2 * 2 * hidden  # Q·Kᵀ and P·V: 2 FLOPs per (head, head dim) each, over all heads
    cfg = dict(hidden_size=hidden, intermediate_size=inter, num_attention_heads=heads,
               num_key_value_heads=heads, vocab_size=vocab, num_hidden_layers=1, use_cache=False)
    ids = (torch.randint(0, vocab, (1, seq)),)
    llama = LlamaForCausalLM(LlamaConfig(**cfg)).eval()
    report = solar.analyze(llama, ids, arch="H100-SXM")
    assert report.totals.contraction_flops == dense + per_pair * (seq * (seq + 1) // 2)
    mistral = MistralForCausalLM(MistralConfig(sliding_window=4, **cfg)).eval()
    report = solar.analyze(mistral, ids, arch="H100-SXM")
    window = sum(min(i + 1, 4) for i in range(seq))
    assert report.totals.contraction_flops == dense + per_pair * window

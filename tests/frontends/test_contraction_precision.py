"""The dtype each contraction inside every lowering-table entry is priced at, with fp16 and bf16
inputs (DESIGN.md §6: a contraction is priced at the narrowest precision some real kernel for its op
uses; docs/BOUNDS.md §2, "fused ops"). Every entry of the table runs with its test cases' float
tensors cast to the half dtype (entries the real op rejects in that dtype are skipped); an entry
whose lowering contains a contraction must have a row in PRICED, which says the precision each of
its contractions is priced at. A new contraction-bearing entry without a row fails the test."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from solar.frontends.torch.check import lower_node
from solar.frontends.torch.context import dtype_of
from solar.frontends.torch.lowerings import LOWERINGS
from solar.lift.einsum import lift
from tests.frontends.lowering_cases import T
from tests.frontends.test_torch_lowerings import CASES, realise

aten = torch.ops.aten
HALF = (torch.bfloat16, torch.float16)

# op -> the dtype its contractions are priced at for half-precision inputs: "input" = the input's
# own dtype (its fp16/bf16 tensor cores), else a dtype's IR name. Decisions and evidence:
# docs/BOUNDS.md §2 ("Precision of contractions inside fused ops").
PRICED: dict[Any, str] = {
    aten.mm.default: "input",
    aten.bmm.default: "input",
    aten.addmm.default: "input",
    aten.convolution.default: "input",
    aten.scaled_dot_product_attention.default: "input",  # Q·Kᵀ and P·V (FlashAttention, cuDNN)
    aten._scaled_mm.default: "f8e4m3",  # fp8 products, fp32 accumulation (scales stay fp32)
    # MoE expert GEMMs in the input dtype; the table's cases are bf16 (the CUDA kernel's only
    # dtype), which _to_half keeps, so both parametrisations price bf16.
    aten._grouped_mm.default: "bf16",
    # Recurrent cells: the gate GEMMs in the input dtype (cuDNN RNN half-precision math).
    aten.lstm.input: "input",
    aten.gru.input: "input",
    aten.rnn_tanh.input: "input",
    aten.rnn_relu.input: "input",
    torch.ops.solar.lstm.default: "input",
    torch.ops.solar.gru.default: "input",
    torch.ops.solar.rnn_tanh.default: "input",
    torch.ops.solar.rnn_relu.default: "input",
    # Sums of squares / of products have a contraction's shape (Σ x·x): priced like one, at the
    # input dtype, which is faster than the SIMT reduction real kernels run (a lower bound).
    aten.var.correction: "input",
    aten.var_mean.correction: "input",
    aten.linalg_vector_norm.default: "input",
    aten._native_batch_norm_legit.no_stats: "input",
    aten._native_batch_norm_legit_functional.default: "input",
    aten.group_norm.default: "input",
    aten.native_group_norm.default: "input",
    aten.cosine_embedding_loss.default: "input",
    # Training (lowerings/backward.py): dX, dW as convolutions in the input dtype; attention's
    # products as the forward SDPA's (P and dS rounded to the input dtype, as FlashAttention does).
    aten.convolution_backward.default: "input",
    aten._scaled_dot_product_flash_attention_for_cpu.default: "input",
    aten._scaled_dot_product_flash_attention_for_cpu_backward.default: "input",
    # Integer and weight-only quantised GEMMs: int8 x int8 on int8 tensor cores; activations x an
    # int8 weight dequantised to the activations' dtype (its values are exact there).
    aten._int_mm.default: "i8",
    aten._weight_int8pack_mm.default: "input",
    # cdist's p = 2 form: the Gram matrix a·bᵀ is a GEMM in the inputs' dtype.
    aten._cdist_forward.default: "input",
}


def _to_half(x: Any, dtype: torch.dtype) -> Any:
    if isinstance(x, T):
        return replace(x, dtype=dtype) if x.dtype == torch.float32 else x
    if isinstance(x, (list, tuple)):
        return type(x)(_to_half(v, dtype) for v in x)
    if isinstance(x, dict):
        return {k: _to_half(v, dtype) for k, v in x.items()}
    return x


def _priced(op: Any, args: tuple, kwargs: dict, dtype: torch.dtype) -> set[tuple[str, bool]] | None:
    """(dtype text, TF32 allowed) of every contraction of the lowering, None when the real op
    rejects these inputs."""
    gen = torch.Generator().manual_seed(0)
    real = realise(list(_to_half(args, dtype)), gen)
    kw = realise(_to_half(kwargs, dtype), gen)
    try:
        with torch.no_grad():
            ref = op(*real, **kw)
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        return None
    node = SimpleNamespace(target=op, name=str(op).split(".")[1], kwargs=kw)
    program, *_ = lower_node(node, real, ref)
    return {
        (n.contraction_dtype.text, bool(n.origin and n.origin.allow_tf32))
        for n in lift(program).nodes()
        if n.is_contraction
    }


ENTRIES = [
    (op, args, kwargs) for op, cases in CASES.items() if op in LOWERINGS for args, kwargs in cases
]


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize(
    "op,args,kwargs", ENTRIES, ids=lambda x: str(x) if hasattr(x, "_schema") else None
)
def test_contractions_priced_at_input_precision(op, args, kwargs, dtype):
    priced = _priced(op, args, kwargs, dtype)
    if not priced:
        return  # the op rejects this dtype, or its lowering has no contraction
    assert op in PRICED, f"{op} has contractions priced at {priced}: add it to PRICED"
    want = dtype_of(dtype).text if PRICED[op] == "input" else PRICED[op]
    assert priced == {(want, False)}, (op, dtype, priced)


def test_fp32_sdpa_may_use_tf32():
    """PyTorch's memory-efficient kernel runs fp32 attention as 3xTF32 on tensor cores (sm80+)."""
    q = T((1, 2, 8, 4))
    priced = _priced(aten.scaled_dot_product_attention.default, (q, q, q), {}, torch.float32)
    assert priced == {("f32", True)}

"""Mixtral (MoE routing) end to end on a shrunk model (1 layer, hidden 32, 4 experts, top-2): the
exact contraction count (the experts do T·k·3·H·I multiply-adds whatever experts are chosen), the
expert weights priced at k experts (the fewest top-k routing touches), the same counts from a
model file and through the API, the IR checked against the model, an hf: decode step, and the
one-line errors of the new lowerings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import solar.frontends.torch  # noqa: F401  (before transformers: see frontends/torch/libraries.py)

transformers = pytest.importorskip("transformers")

import solar  # noqa: E402
from solar.api import analyze_loaded, load, load_hf  # noqa: E402
from solar.errors import SolarError  # noqa: E402
from solar.frontends.torch.check import check_module  # noqa: E402
from solar.frontends.torch.hf import Scenario  # noqa: E402

T, H, I, E, K, V, HEADS, KV_HEADS = 8, 32, 48, 4, 2, 64, 4, 2
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf"

MODEL_FILE = f"""
import torch
from transformers import MixtralConfig, MixtralForCausalLM


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = MixtralConfig(hidden_size={H}, intermediate_size={I}, num_attention_heads={HEADS},
                               num_key_value_heads={KV_HEADS}, vocab_size={V}, num_local_experts={E},
                               num_experts_per_tok={K}, num_hidden_layers=1, use_cache=False)
        self.net = MixtralForCausalLM(config).to(torch.DTYPE).eval()

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).logits


def get_inputs():
    return [torch.randint(0, {V}, (1, {T}))]


def get_init_inputs():
    return []
"""


def expected_contraction_flops() -> int:
    """One layer of the shrunk Mixtral at T tokens: projections, causal attention pairs, router,
    the experts at exactly T·k rows, and the LM head (2 FLOPs per multiply-add)."""
    head_dim = H // HEADS
    projections = T * H * (2 * H + 2 * KV_HEADS * head_dim)  # q, o; k, v
    attention = 2 * HEADS * head_dim * (T * (T + 1) // 2)  # Q·Kᵀ and P·V over causal pairs
    router = T * H * E
    experts = T * K * 3 * H * I  # gate/up (2I x H) and down (H x I) for each of k experts per token
    return 2 * (projections + attention + router + experts + T * H * V)


_BUILT: dict = {}


def _from_file(dtype: str, tmp_path_factory) -> tuple:
    """(model file, its Loaded, its report), once per dtype. bf16 reaches aten._grouped_mm; fp32
    transformers' fallback op (what transformers calls under tracing for weights other than bf16)."""
    if dtype not in _BUILT:
        path = tmp_path_factory.mktemp("moe") / f"mixtral_tiny_{dtype}.py"
        path.write_text(MODEL_FILE.replace("DTYPE", dtype))
        loaded = load(str(path))
        _BUILT[dtype] = (path, loaded, analyze_loaded(loaded, "H100-SXM"))
    return _BUILT[dtype]


@pytest.fixture(scope="module", params=["bfloat16", "float32"])
def from_file(request, tmp_path_factory):
    return _from_file(request.param, tmp_path_factory)


@pytest.fixture(scope="module")
def bf16_file(tmp_path_factory):
    return _from_file("bfloat16", tmp_path_factory)


def test_contraction_count_is_exact_and_experts_at_k(from_file):
    _, loaded, report = from_file
    assert report.totals.contraction_flops == expected_contraction_flops()
    reads = {
        t.name: loaded.graph.footprints.elements(t.name, "read") for t in loaded.program.tensors
    }
    gate_up = next(n for n in reads if n.endswith("experts_gate_up_proj"))
    down = next(n for n in reads if n.endswith("experts_down_proj"))
    assert reads[gate_up] == K * 2 * I * H  # k experts' weights: the fewest top-k routing reads
    assert reads[down] == K * H * I
    assert any("grouped GEMM (MoE experts)" in line for line in report.assumptions), report.assumptions


def test_file_and_api_agree_and_the_ir_matches_the_model(bf16_file):
    """(fp32's fallback op is checked against the real op in the lowering table tests)"""
    from benchmarks.suite_tools import load_problem

    path, _, by_file = bf16_file
    module = load_problem(path)
    torch.manual_seed(0)
    model = module.Model()
    inputs = tuple(module.get_inputs())
    by_api = solar.analyze(model, inputs, arch="H100-SXM")
    assert by_api.totals.contraction_flops == by_file.totals.contraction_flops
    assert by_api.totals.dram_bytes == by_file.totals.dram_bytes
    (check,) = check_module(model, inputs).checks
    assert check.mode == "full" and check.error <= check.tolerance, check


def test_hf_decode_step_reads_k_experts(tmp_path: Path):
    config = json.loads((FIXTURES / "mixtral-8x7b.json").read_text())
    config.update(
        num_hidden_layers=1,
        hidden_size=H,
        intermediate_size=I,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        vocab_size=V,
    )
    path = tmp_path / "mixtral-small.json"
    path.write_text(json.dumps(config))
    loaded = load_hf(f"hf:{path}", Scenario("decode", 1, 1, 16))
    report = analyze_loaded(loaded, "H100-SXM")
    experts = config["num_experts_per_tok"]
    head_dim = H // HEADS
    per_token = H * (2 * H + 2 * KV_HEADS * head_dim) + 2 * HEADS * head_dim * 17  # 16 cached + 1
    per_token += H * config["num_local_experts"] + experts * 3 * H * I + H * V
    assert report.totals.contraction_flops == 2 * per_token
    gate_up = next(
        t.name for t in loaded.program.tensors if t.name.endswith("experts_gate_up_proj")
    )
    assert loaded.graph.footprints.elements(gate_up, "read") == experts * 2 * I * H
    assert report.serving.per_layer["fused"]["seconds"] > 0


class _MiniMoE(torch.nn.Module):
    """The routing pattern of transformers' grouped_mm experts, without transformers: router,
    top-k, sort of the ids, histc offsets, one grouped GEMM (bf16: the CPU kernel's dtype)."""

    def __init__(self, hidden: int = 16, out: int = 8, experts: int = 4, top: float | None = None) -> None:
        super().__init__()
        self.top = experts - 1 if top is None else top  # histc's max
        self.router = torch.nn.Parameter(torch.randn(experts, hidden))
        self.w = torch.nn.Parameter(torch.randn(experts, hidden, out).bfloat16())

    def forward(self, x):
        experts = self.w.shape[0]
        weights, ids = torch.topk(torch.softmax(x.float() @ self.router.t(), -1), K)
        sorted_ids, perm = torch.sort(ids.reshape(-1))
        counts = torch.histc(sorted_ids.float(), bins=experts, min=0, max=self.top)
        offs = torch.cumsum(counts, 0, dtype=torch.int32)
        return torch._grouped_mm(x[perm // K], self.w, offs=offs), weights


def test_routing_pattern_exact_per_op_and_whole():
    """Exact MACs (router T·H·E + experts T·k·H·N), k experts' weight bytes, and `solar verify`
    both ways: the whole program, and op by op on random data (sort's ties, valid offsets)."""
    from solar.frontends.torch import loader
    from solar.frontends.torch.check import check_ops

    torch.manual_seed(0)
    model, x = _MiniMoE(), torch.randn(6, 16).bfloat16()
    loaded = load(model, (x,))
    report = analyze_loaded(loaded, "H100-SXM")
    assert report.totals.contraction_flops == 2 * (6 * 16 * 4 + 6 * K * 16 * 8)
    w = next(
        t.name for t in loaded.program.tensors if t.role.value == "param" and t.shape == (4, 16, 8)
    )
    assert loaded.graph.footprints.elements(w, "read") == K * 16 * 8
    (whole,) = check_module(model, (x,)).checks
    assert whole.mode == "full" and whole.error <= whole.tolerance, whole
    checks = check_ops(loader.trace_module(model, (x,)))
    ops = {c.what for c in checks}
    assert {
        "aten.topk.default",
        "aten.sort.default",
        "aten.histc.default",
        "aten._grouped_mm.default",
    } <= ops
    assert all(c.mode.startswith("op") and c.error <= c.tolerance for c in checks), checks


@pytest.mark.parametrize(("top", "experts_read"), [(3.0, K), (3.5, 1), (100.0, 1)])
def test_wide_histc_bins_claim_one_expert(top, experts_read):
    # bins (max - min) / 4 wide: at most 3/4 (max - min <= bins - 1) keeps distinct ids in
    # distinct bins whatever the rounding (k experts read); wider, the claim is one expert (max=100:
    # every id in bin 0, one group; 3.5: the ids would still part, but the rule asks for a margin)
    torch.manual_seed(0)
    model, x = _MiniMoE(top=top), torch.randn(6, 16).bfloat16()
    loaded = load(model, (x,))
    w = next(t.name for t in loaded.program.tensors if t.role.value == "param" and t.shape == (4, 16, 8))
    assert loaded.graph.footprints.elements(w, "read") == experts_read * 16 * 8
    (whole,) = check_module(model, (x,)).checks  # the claim holds on the real routing
    assert whole.mode == "full" and whole.error <= whole.tolerance, whole


class _Histc(torch.nn.Module):
    def forward(self, x):
        return torch.histc(x, bins=4, min=0, max=0)


class _GroupedK(torch.nn.Module):
    def forward(self, x, w, offs):
        return torch._grouped_mm(x, w, offs=offs)  # 2-D x 2-D, grouped along K: not lowered


@pytest.mark.parametrize(
    ("module", "inputs", "match"),
    [
        (_Histc(), (torch.randn(8),), r"^histc with min == max takes its range from the data"),
        (
            _GroupedK(),
            (
                torch.randn(8, 16).bfloat16(),
                torch.randn(16, 8).bfloat16(),
                torch.tensor([8, 16], dtype=torch.int32),
            ),
            r"^_grouped_mm of \[8, 16\] x \[16, 8\] with offsets is not supported",
        ),
    ],
)
def test_unsupported_forms_are_one_line(module, inputs, match):
    with pytest.raises(SolarError, match=match) as info:
        solar.analyze(module, inputs, arch="H100-SXM")
    assert "\n" not in str(info.value) and "test_moe.py" in str(info.value)

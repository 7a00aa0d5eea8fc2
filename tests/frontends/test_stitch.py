"""Structure sharing of repeated layers (solar.frontends.torch.stitch): an `hf:` step of N identical
layers traced with 4 and stitched to N (Mixtral: its expert loop an in-order loop) equals the full trace of N layers up to a canonical renaming
of temps and op instances (params and inputs keep the model's names), with every total, bound and
eager call identical; layers that differ are traced one by one."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from solar.api import analyze_loaded, eager_calls, load_hf, load_module
from solar.frontends.torch import hf
from solar.frontends.torch.hf import Scenario
from solar.frontends.torch.stitch import TRACED, NotShareable, plan, renamed, stepped
from solar.ir.nodes import Program, Role
from solar.report import group_ops

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf"
TINY = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "vocab_size": 128}
QWEN2 = {
    "model_type": "qwen2", "num_key_value_heads": 2, "max_position_embeddings": 256, "torch_dtype": "bfloat16",
    "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28, "tie_word_embeddings": False,
}
GPT2 = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "vocab_size": 128, "n_positions": 64, "torch_dtype": "float32"}


def config(tmp_path: Path, base: str | dict, layers: int, **extra) -> str:
    data = json.loads((FIXTURES / base).read_text()) if isinstance(base, str) else dict(base)
    if data["model_type"] == "gpt2":
        data.update(n_layer=layers, **extra)
    else:
        data.update(TINY, num_hidden_layers=layers, **extra)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


def canonical(p: Program) -> tuple[list, list]:
    """Declarations and statements with temps and outputs named by declaration order and op
    instances numbered by first appearance (params and inputs keep their names)."""
    names = {t.name: t.name if t.role in (Role.PARAM, Role.INPUT) else f"t{k}" for k, t in enumerate(p.tensors)}
    order: dict[int, int] = {}
    stmts = [
        renamed(s, names.__getitem__, s.origin and replace(s.origin, instance=order.setdefault(s.origin.instance, len(order))))
        for s in p.stmts
    ]
    decls = [replace(t, name=names[t.name], updates=t.updates and names[t.updates]) for t in p.tensors]
    return decls, stmts


def canonical_calls(loaded) -> list:
    """The eager calls, instances numbered by first appearance (None where no statement has it)."""
    has = {s.origin.instance for s in loaded.program.stmts if s.origin is not None}
    order: dict[int, int] = {}
    return [(c.op, c.view, order.setdefault(c.instance, len(order)) if c.instance in has else None) for c in eager_calls(loaded)]


CASES = {  # id -> (config, layers, scenario, extra config)
    "llama-prefill": ("llama2-7b.json", 6, Scenario("prefill", 1, 8, 0), {"num_key_value_heads": 2}),
    "llama-decode": ("llama2-7b.json", 5, Scenario("decode", 2, 1, 12), {"num_key_value_heads": 2}),
    "mistral-decode": ("mistral-7b.json", 5, Scenario("decode", 1, 1, 8), {"num_key_value_heads": 2}),
    "mixtral-decode": ("mixtral-8x7b.json", 5, Scenario("decode", 1, 1, 8), {"num_key_value_heads": 2}),
    "qwen2-prefill": (QWEN2, 5, Scenario("prefill", 1, 8, 0), {}),
    "gpt2-decode": (GPT2, 5, Scenario("decode", 1, 1, 6), {}),
}


def load_counting(spec: str, step: Scenario):
    """load_hf, and how many times it traced a module."""
    import solar.frontends.torch as torch_frontend

    traces = []
    trace = torch_frontend.trace_module
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch_frontend, "trace_module", lambda *a, **k: traces.append(1) or trace(*a, **k))
        return load_hf(f"hf:{spec}", step), len(traces)


@pytest.fixture(scope="module")
def loads(tmp_path_factory):
    """Each case's config and its shared load (made once: the plan test reuses one)."""
    cache = {}

    def get(case: str):
        if case not in cache:
            base, layers, step, extra = CASES[case]
            spec = config(tmp_path_factory.mktemp(case), base, layers, **extra)
            cache[case] = (spec, *load_counting(spec, step))
        return cache[case]

    return get


@pytest.mark.parametrize("case", list(CASES))
def test_stitched_equals_full_trace(loads, case):
    _, layers, step, _ = CASES[case]
    spec, shared, traces = loads(case)
    assert traces == 1  # one trace, of TRACED layers
    assert any(n.startswith(f"layers shared: layers 2..{layers - 2} are copies of layer 1") for n in shared.notes)
    built = hf.build(spec, step)
    full = load_module(built.module, built.inputs, "eval", False)
    assert canonical(shared.program) == canonical(full.program)
    assert canonical_calls(shared) == canonical_calls(full)
    a = analyze_loaded(shared, "H100-SXM", dispatch_us=4.0)
    b = analyze_loaded(full, "H100-SXM", dispatch_us=4.0)
    assert a.totals == b.totals
    assert {k: v.seconds for k, v in a.bounds.items()} == {k: v.seconds for k, v in b.bounds.items()}
    assert "eager_host" in a.bounds
    # with this host's calibrated floors (per-op, nn.Module calls, recurrent steps): equal too
    ca, cb = (analyze_loaded(x, "H200-SXM").bounds["eager_host"] for x in (shared, full))
    assert ca.seconds == cb.seconds
    # --group-by layer lists every layer, each with the same ops as in the full trace
    rows = [{r.name: (r.count, r.flops) for r in group_ops(x.ops, "layer")} for x in (a, b)]
    assert rows[0] == rows[1] and sum(name[-1].isdigit() for name in rows[0]) == layers
    # the per-layer share: the programs of 4 and 5 layers, whose FLOPs extrapolate exactly to N
    four, five = (analyze_loaded(x, "H100-SXM").totals for x in shared.serving.parts)
    assert a.totals.flops == four.flops + (layers - TRACED) * (five.flops - four.flops)
    assert a.serving.per_layer["fused"]["compute_seconds"] > 0
    assert a.serving.layers == layers


def test_layers_that_differ_are_not_shared(tmp_path):
    """Qwen2 with sliding-window attention from layer 2 on: the per-layer layer_types differ, so
    no layer may be copied; a model whose layer 3 differs in shape neither."""
    spec = config(tmp_path, QWEN2, 5, use_sliding_window=True, max_window_layers=2)
    step = Scenario("prefill", 1, 4, 0)
    assert len(set(hf.read_config(spec).layer_types)) == 2
    full, small = hf.build(spec, step), hf.build(spec, step, layers=TRACED)
    assert hf.unshared(full, small) == "the config's per-layer layer_types differs between layers"
    same = config(tmp_path, QWEN2, 5)
    full, small = hf.build(same, step), hf.build(same, step, layers=TRACED)
    assert hf.unshared(full, small) is None
    import torch

    layers = full.module.lm.model.layers
    layers[4].mlp.up_proj = layers[2].mlp.up_proj  # ALBERT-style sharing
    assert hf.unshared(full, small) == "decoder layers 2 and 4 share a parameter or buffer"
    layers[4].mlp.up_proj = layers[3].mlp.up_proj = torch.nn.Linear(64, 80, bias=False)
    assert hf.unshared(full, small) == "decoder layers 3 and 4 share a parameter or buffer"
    layers[4].mlp.up_proj = torch.nn.Linear(64, 96, bias=False)
    assert hf.unshared(full, small) == "decoder layer 3 differs from layer 1 (class, parameter shapes or attributes)"


def test_plan_refuses_what_it_cannot_copy(loads):
    from solar.frontends.torch.stitch import Layout

    p, layout = loads("llama-prefill")[1].serving.parts[0].program, Layout("lm.model.layers.")
    assert plan(p, layout, 9).layers == 9
    with pytest.raises(NotShareable, match="fewer than the 4"):
        plan(p, layout, 3)
    stmts = list(p.stmts)
    in_two = [i for i, s in enumerate(stmts) if layout.layer(s.origin.module) == 2]
    dropped = p.with_stmts([None if i == in_two[-1] else s for i, s in enumerate(stmts)])
    with pytest.raises(NotShareable, match="layers 1 and 2 have"):
        plan(dropped, layout, 9)
    first = stmts[in_two[0]]
    moved = replace(first, origin=replace(first.origin, module=first.origin.module.replace(".layers.2", ".layers.0")))
    with pytest.raises(NotShareable, match="do not follow those of layer"):
        plan(p.with_stmts([moved if i == in_two[0] else s for i, s in enumerate(stmts)]), layout, 9)


def test_stepped_names():
    assert stepped("lm_model_layers_1_mlp_up_proj_weight", "lm_model_layers_2_mlp_up_proj_weight", 7) == "lm_model_layers_7_mlp_up_proj_weight"
    assert stepped("kv_2", "kv_4", 5) == "kv_10"
    assert stepped("experts_3_layers_1_w", "experts_3_layers_2_w", 4) == "experts_3_layers_4_w"
    assert stepped("mm_7", "add_9", 3) is None

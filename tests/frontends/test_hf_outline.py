"""The outline of an `hf:` step (solar.frontends.torch.hf.outline): the full model built on the meta
device states the same facts as the model built for real (layers, weight and KV-cache bytes, the
inputs' shapes, every decoder layer's signature) and gets the same sharing verdict, for every
shipped config; it is not made where those facts need more than shapes, and a shared step builds
the full model for real only where the outline's verdict is that its layers are not shared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from solar.api import load_hf
from solar.frontends.torch import hf
from solar.frontends.torch.hf import Scenario
from solar.frontends.torch.signature import layer_signature
from solar.frontends.torch.stitch import TRACED

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf"
STEPS = (Scenario("prefill", 1, 16, 0), Scenario("decode", 2, 1, 24))
# Configs whose attention is not plain (their cache rows come from a forward step): no outline.
NOT_PLAIN = {"deepseek-v3-tiny.json"}
TINY = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "vocab_size": 128, "num_key_value_heads": 2}


def facts(b: hf.Built) -> tuple:
    return b.name, b.layers, b.weight_bytes, b.kv_cache_bytes, [(tuple(t.shape), t.dtype) for t in b.inputs]


def signatures(b: hf.Built) -> list:
    return [layer_signature(m, b.config) for m in hf.layer_list(b)[1]]


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.kind)
@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_outline_states_what_the_model_built_for_real_does(name, step):
    spec = str(FIXTURES / name)
    outline, real = hf.outline(spec, step), hf.build(spec, step)
    if name in NOT_PLAIN:
        assert outline is None
        return
    assert outline.outline and not real.outline
    assert all(p.device.type == "meta" for p in outline.module.parameters())
    assert facts(outline) == facts(real)
    assert signatures(outline) == signatures(real)
    if real.layers >= TRACED:  # the shortened model of a shared trace
        small = hf.build(spec, step, layers=TRACED)
        assert hf.unshared(outline, small) == hf.unshared(real, small) is None


def _tiny(tmp_path: Path, layers: int, **extra) -> str:
    data = json.loads((FIXTURES / "llama2-7b.json").read_text())
    data.update(TINY, num_hidden_layers=layers, **extra)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_layers_that_differ_get_the_same_verdict(tmp_path):
    spec = _tiny(tmp_path, 6)
    step = STEPS[0]
    outline, real, small = hf.outline(spec, step), hf.build(spec, step), hf.build(spec, step, layers=TRACED)
    for b in (outline, real):
        b.module.lm.model.layers[5].mlp.up_proj = torch.nn.Linear(64, 80, bias=False, device=b.inputs[0].device)
    said = "decoder layer 5 differs from layer 1 (class, parameter shapes or attributes)"
    assert hf.unshared(outline, small) == hf.unshared(real, small) == said


class _Unsharded:
    """A sharding that changes nothing: still, its ranks could edit the built model."""

    def config(self, config):
        pass

    def module(self, lm):
        return lm


def test_no_outline_for_a_sharded_model_or_a_construction_that_fails_on_meta(tmp_path, monkeypatch):
    spec = _tiny(tmp_path, 5)
    token = hf.SHARDING.set(_Unsharded())
    try:
        assert hf.outline(spec, STEPS[0]) is None
    finally:
        hf.SHARDING.reset(token)
    build = hf._from_config

    def reads_a_value(*args):
        model = build(*args)
        float(next(model.parameters()).detach().sum())  # as a constructor that reads a value: fails on meta
        return model

    monkeypatch.setattr(hf, "_from_config", reads_a_value)
    assert hf.outline(spec, STEPS[0]) is None
    assert hf.build(spec, STEPS[0]).layers == 5  # built for real, it reads the value


def _counting(monkeypatch) -> list:
    """The layer counts `hf.build` is called with during a load."""
    built = []
    build = hf.build
    monkeypatch.setattr(hf, "build", lambda spec, step, layers=None: built.append(layers) or build(spec, step, layers))
    return built


def test_a_shared_step_builds_only_the_shortened_model_for_real(tmp_path, monkeypatch):
    spec = _tiny(tmp_path, 6)
    plain = load_hf(f"hf:{spec}", STEPS[1])
    built = _counting(monkeypatch)
    again = load_hf(f"hf:{spec}", STEPS[1])
    assert built == [TRACED]
    assert any(n.startswith("layers shared: layers 2..4") for n in again.notes)
    assert (again.serving.built.weight_bytes, again.serving.built.kv_cache_bytes) == (
        plain.serving.built.weight_bytes, plain.serving.built.kv_cache_bytes)
    assert again.program == plain.program


def test_where_the_outline_says_not_shared_the_model_built_for_real_decides(tmp_path, monkeypatch):
    spec = _tiny(tmp_path, 6)
    shared = load_hf(f"hf:{spec}", STEPS[0])
    outline = hf.outline

    def differing(spec, step):  # an outline whose last layer differs from the real model's
        b = outline(spec, step)
        b.module.lm.model.layers[5].mlp.up_proj = torch.nn.Linear(64, 80, bias=False, device="meta")
        return b

    monkeypatch.setattr(hf, "outline", differing)
    built = _counting(monkeypatch)
    again = load_hf(f"hf:{spec}", STEPS[0])
    assert built == [TRACED, None]  # the shortened model, then the full one for the verdict
    assert again.program == shared.program and again.notes == shared.notes
    assert not again.serving.built.outline

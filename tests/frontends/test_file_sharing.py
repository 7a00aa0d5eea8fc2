"""Structure sharing on the file and API paths (solar.frontends.torch.share): a model file or an
in-memory module with a stack of identical layers, traced with 4 of them and stitched, equals the
full trace up to a canonical renaming of temps and op instances, with identical totals, bounds at
every level, eager calls and per-layer rows; a forward that indexes its layers by a count, layers
that differ and tied weights are traced whole with the reason in the report; the user's module is
left as it was."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from solar.api import analyze_loaded, load
from solar.frontends.torch import share
from solar.frontends.torch.stitch import Stitched
from solar.frontends.torch.traced import TraceOptions
from solar.report import group_ops
from tests.frontends.test_stitch import canonical, canonical_calls

LAYERS = 6


def shared_line(loaded) -> str:
    return next(n for n in loaded.notes if n.startswith("layers "))


def assert_same(shared, full, layers: int = LAYERS) -> None:
    """The stitched load equals the full one (program, eager calls, totals, every bound level,
    the per-layer rows of --group-by layer)."""
    assert isinstance(shared.traced, Stitched), shared.notes
    assert shared_line(shared).startswith("layers shared: ") and f"layers 2..{layers - 2} of " in shared_line(shared)
    assert shared_line(shared).endswith("identical modules")
    assert not any(n.startswith("layers ") for n in full.notes)
    assert canonical(shared.program) == canonical(full.program)
    assert canonical_calls(shared) == canonical_calls(full)
    a, b = (analyze_loaded(x, "H100-SXM", dispatch_us=4.0) for x in (shared, full))
    assert a.totals == b.totals
    assert {k: v.seconds for k, v in a.bounds.items()} == {k: v.seconds for k, v in b.bounds.items()}
    assert "eager_host" in a.bounds
    for by in ("layer", "module"):
        rows = [{r.name: (r.count, r.flops) for r in group_ops(x.ops, by)} for x in (a, b)]
        assert rows[0] == rows[1]
    assert [n for n in shared.notes if not n.startswith("layers ")] == list(full.notes)


def both(model_or_path, inputs=None):
    return load(model_or_path, inputs), load(model_or_path, inputs, share_layers=False)


def write(tmp_path: Path, body: str, name: str = "model.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


PLAIN = """
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 2 * d)
            self.fc2 = nn.Linear(2 * d, d)

        def forward(self, x):
            return x + self.fc2(torch.relu(self.fc1(self.norm(x))))

    class Model(nn.Module):
        def __init__(self, d=16, n=6):
            super().__init__()
            self.n = n
            self.inp = nn.Linear(d, d)
            self.layers = nn.ModuleList(Block(d) for _ in range(n))
            self.out = nn.Linear(d, 4)
            {init}

        def forward(self, x):
            x = self.inp(x)
            {loop}
            return self.out(x)

    def get_inputs():
        return [torch.randn(2, 8, 16)]
"""
LOOP = "for layer in self.layers:\n                x = layer(x)"


def plain(tmp_path: Path, init: str = "", loop: str = LOOP) -> str:
    return write(tmp_path, PLAIN.replace("{init}", init).replace("{loop}", loop))


def test_plain_module_list_file(tmp_path):
    shared, full = both(plain(tmp_path))
    assert_same(shared, full)
    assert shared.source_file == full.source_file and shared.traced.layers == LAYERS


def test_hf_bert_module():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(hidden_size=32, num_hidden_layers=LAYERS, num_attention_heads=2, intermediate_size=48,
                     vocab_size=64, max_position_embeddings=32)
    model = BertModel(cfg).eval()
    ids = torch.randint(0, 64, (1, 8))
    shared, full = both(model, (ids,))
    assert_same(shared, full)
    assert "of encoder.layer are copies" in shared_line(shared)


def test_hf_gpt2_module():
    from transformers import GPT2Config, GPT2Model

    cfg = GPT2Config(n_embd=32, n_layer=LAYERS, n_head=2, vocab_size=64, n_positions=32, use_cache=False)
    shared, full = both(GPT2Model(cfg).eval(), (torch.randint(0, 64, (1, 8)),))
    assert_same(shared, full)
    assert "of h are copies" in shared_line(shared)


LLAMA = """
    import torch
    import torch.nn as nn
    from transformers import LlamaConfig, LlamaForCausalLM

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            cfg = LlamaConfig(hidden_size=32, intermediate_size=48, num_hidden_layers=6, num_attention_heads=4,
                              num_key_value_heads=2, vocab_size=64, max_position_embeddings=64)
            self.lm = LlamaForCausalLM(cfg).eval()

        def forward(self, ids):
            return self.lm(input_ids=ids, use_cache=False).logits

    def get_inputs():
        return [torch.randint(0, 64, (1, 8))]
"""


def test_hf_llama_file_causal(tmp_path):
    shared, full = both(write(tmp_path, LLAMA))
    assert_same(shared, full)
    assert "of lm.model.layers are copies" in shared_line(shared)


VIT = """
    import torch
    import torch.nn as nn
    import timm

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, patch_size=8,
                                         embed_dim=32, depth=6, num_heads=2, num_classes=10).eval()

        def forward(self, x):
            return self.net(x)

    def get_inputs():
        return [torch.randn(1, 3, 32, 32)]
"""


def test_timm_vit_sequential_file(tmp_path):
    shared, full = both(write(tmp_path, VIT))
    assert_same(shared, full)
    assert "of net.blocks are copies" in shared_line(shared)


TWO = """
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, d, first):
            super().__init__()
            self.fc = nn.Linear(d, d)
            self.bias = nn.Linear(d, d) if first else None  # T5: block 0 computes the position bias

        def forward(self, x, bias=None):
            if self.bias is not None:
                bias = self.bias(x).sigmoid()
            return x + self.fc(x) * bias, bias

    class Model(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.encoder = nn.ModuleList(Block(d, k == 0) for k in range(6))
            self.decoder = nn.ModuleList(Block(d, k == 0) for k in range(7))

        def forward(self, x):
            for stack in (self.encoder, self.decoder):
                bias = None
                for block in stack:
                    x, bias = block(x, bias)
            return x

    def get_inputs():
        return [torch.randn(2, 8)]
"""


def test_two_stacks_and_a_layer_0_bias(tmp_path):
    """Encoder and decoder stitched in turn (T5's blocks; hf_t5_base_fp32 in benchmarks/models),
    every block reading the bias that block 0 computes (a layer-0 tensor read by every layer).
    Each stack saves less than MIN_SAVING of this small model's modules: shared only without it."""
    path = write(tmp_path, TWO)
    assert not any(n.startswith("layers ") for n in load(path).notes)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(share, "MIN_SAVING", 0.0)
        shared, full = both(path)
    assert_same(shared, full)
    line = shared_line(shared)
    assert "layers 2..4 of encoder" in line and "layers 2..5 of decoder" in line
    assert sorted(shared.traced.layers) == [6, 7]


def test_forward_indexing_by_count_is_traced_whole(tmp_path):
    path = plain(tmp_path, loop="for i in range(self.n):\n                x = self.layers[i](x)")
    loaded = load(path)
    assert not isinstance(loaded.traced, Stitched)
    assert shared_line(loaded).startswith("layers not shared: ")
    assert "layers" in shared_line(loaded)
    full = load(path, share_layers=False)
    assert canonical(loaded.program) == canonical(full.program)


def test_forward_reading_the_count_is_traced_whole(tmp_path):
    loop = LOOP + "\n            x = x * (1.0 / len(self.layers))"
    loaded = load(plain(tmp_path, loop=loop))
    assert shared_line(loaded) == "layers not shared: forward() reads the number of layers of layers (len() or indexing)"


def test_layers_that_differ_are_traced_whole(tmp_path):
    loaded = load(plain(tmp_path, init="self.layers[3].fc1, self.layers[3].fc2 = nn.Linear(d, 24), nn.Linear(24, d)"))
    assert shared_line(loaded) == "layers not shared: layer 3 of layers differs from layer 1 (class, parameter shapes or attributes)"


def test_tied_weights_are_traced_whole(tmp_path):
    loaded = load(plain(tmp_path, init="self.layers[4].fc1.weight = self.layers[2].fc1.weight"))
    assert shared_line(loaded) == "layers not shared: a parameter or buffer of layers.2 is also layers.4.fc1.weight (tied weights)"
    loaded = load(plain(tmp_path, init="self.last = self.layers[5]"))
    assert shared_line(loaded) == "layers not shared: a module of layers.5 is also reachable as last"


def test_user_module_is_left_as_it_was():
    import solar

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.Sequential(*(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU()) for _ in range(LAYERS)))

        def forward(self, x):
            return self.blocks(x)

    net = Net()
    children = list(net.blocks)
    report = solar.analyze(net, [torch.randn(4, 8)], arch="H100-SXM")
    assert any(a.startswith("layers shared: layers 2..4 of blocks") for a in report.assumptions)
    assert type(net.blocks) is torch.nn.Sequential and len(net.blocks) == LAYERS
    assert list(net.blocks) == children and list(net.blocks._modules) == [str(k) for k in range(LAYERS)]
    with pytest.MonkeyPatch.context() as mp:  # a failing export restores it too
        mp.setattr(share.loader, "fake_export", lambda *a: (_ for _ in ()).throw(RuntimeError("boom")))
        with pytest.raises(RuntimeError):
            load(net, [torch.randn(4, 8)])
    assert type(net.blocks) is torch.nn.Sequential and list(net.blocks) == children


def test_root_sequential_module():
    """The model itself is the stack (module paths `0.0`, `1.0`, ...)."""
    net = torch.nn.Sequential(*(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU()) for _ in range(LAYERS)))
    shared, full = both(net, [torch.randn(4, 8)])
    assert_same(shared, full)
    assert "of the model are copies" in shared_line(shared)


def test_switch_and_small_stacks(tmp_path):
    outcome = share.trace_file(plain(tmp_path), options=TraceOptions(share_layers=False))
    assert outcome.program is None and outcome.note is None and not isinstance(outcome.traced, Stitched)
    assert not isinstance(load(plain(tmp_path), share_layers=False).traced, Stitched)
    path = write(tmp_path, PLAIN.replace("{init}", "").replace("{loop}", LOOP).replace("n=6", "n=4"), "four.py")
    loaded = load(path)
    assert not isinstance(loaded.traced, Stitched) and not any(n.startswith("layers ") for n in loaded.notes)


class _DepthBlock(torch.nn.Module):
    """A residual block with a stochastic-depth rate of its own (torchvision's and timm's modules)."""

    def __init__(self, rate: float, kind: str):
        super().__init__()
        import timm.layers
        import torchvision.ops

        self.fc = torch.nn.Linear(8, 8)
        self.drop = {
            "torchvision": lambda: torchvision.ops.StochasticDepth(rate, "row"),
            "timm": lambda: timm.layers.DropPath(rate),
            "dropout": lambda: torch.nn.Dropout(rate),
        }[kind]()

    def forward(self, x):
        return x + self.drop(torch.relu(self.fc(x)))


@pytest.mark.parametrize("kind", ["torchvision", "timm", "dropout"])
def test_drop_rates_differing_layers_are_shared_in_eval(kind):
    """Layers that differ only in a drop probability (rates growing with depth) compute the same
    in eval mode: shared, equal to the full trace. In training mode the rates matter (and a
    random drop does not trace): the layers differ."""
    net = torch.nn.Sequential(*(_DepthBlock(0.1 * k, kind) for k in range(LAYERS))).eval()
    shared, full = both(net, [torch.randn(4, 8)])
    assert_same(shared, full)
    from solar.frontends.torch.signature import layer_signature

    layers = list(net.train())
    assert layer_signature(layers[1]) != layer_signature(layers[2])

"""Training steps of library models as users run them: torchvision classification models through
the API (each needs the backward op it names, lowered), and transformers GPT-2 with its LM head from
a model file on the command line (its tied input embedding gets no gradient: counted, not refused).
The larger torchvision models are slow; benchmarks/train_corpus.py runs them all."""

from __future__ import annotations

import pytest

import solar.frontends.torch  # noqa: F401  (before torchvision: see frontends/torch/libraries.py)

torchvision = pytest.importorskip("torchvision")
pytest.importorskip("transformers")

import torch  # noqa: E402

import solar  # noqa: E402
from solar import cli  # noqa: E402


def _train(name: str, side: int, op: str | None) -> None:
    """The model's training step analyses; `op` (a backward op that does work) is among its ops."""
    model = torchvision.models.get_model(name, weights=None)
    report = solar.analyze(
        model, [torch.randn(2, 3, side, side)], arch="H100-SXM", train=True, optimizer="adamw",
        mode="train",
    )
    if op is not None:
        assert op in {o.op for o in report.ops}
    params = len(list(model.parameters()))
    assert f"gradients of {params} parameters" in " ".join(report.assumptions)
    assert not any("get no gradient" in n for n in report.assumptions)
    assert 0 < report.bounds["fused"].seconds <= report.bounds["unfused"].seconds


def test_resnet18_trains():
    _train("resnet18", 32, "aten.max_pool2d_with_indices_backward.default")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,side,op",
    [
        ("resnet50", 32, "aten.max_pool2d_with_indices_backward.default"),
        ("densenet121", 32, "aten.avg_pool2d_backward.default"),
        ("efficientnet_b0", 32, "aten._adaptive_avg_pool2d_backward.default"),  # new_empty_strided
        ("convnext_tiny", 32, None),  # as_strided_scatter over the whole base: no statements
        ("swin_t", 64, None),
    ],
)
def test_torchvision_model_trains(name, side, op):
    _train(name, side, op)


GPT2_FILE = '''
import torch
from transformers import GPT2Config, GPT2LMHeadModel


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, n_positions=16,
                            use_cache=False, bos_token_id=0, eos_token_id=0)
        self.net = GPT2LMHeadModel(config)

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).logits


def get_inputs():
    return [torch.randint(0, 64, (1, 8))]


def get_init_inputs():
    return []
'''


def test_gpt2_lm_head_trains_from_a_file(tmp_path, capsys):
    path = tmp_path / "gpt2_lm.py"
    path.write_text(GPT2_FILE)
    argv = ["analyze", str(path), "--train", "--loss", "sum", "--optimizer", "adamw"]
    assert cli.main([*argv, "--arch", "H100-SXM"]) == 0
    out = capsys.readouterr().out
    assert "1 parameter(s) get no gradient" in out

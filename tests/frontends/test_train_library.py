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
        ("efficientnet_b0", 32, None),  # new_empty_strided (no work: its values are never read)
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


def _ids() -> torch.Tensor:
    return torch.randint(0, 64, (1, 8))


class _Seq2Seq(torch.nn.Module):
    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, ids: torch.Tensor, decoder_ids: torch.Tensor) -> torch.Tensor:
        return self.net(input_ids=ids, decoder_input_ids=decoder_ids).logits


def _llama():
    import transformers as tf

    config = tf.LlamaConfig(
        num_hidden_layers=1, hidden_size=32, intermediate_size=64, num_attention_heads=2,
        num_key_value_heads=1, vocab_size=64, use_cache=False,
    )
    return tf.LlamaForCausalLM(config), [_ids()], 0


def _bert():
    import transformers as tf

    config = tf.BertConfig(
        num_hidden_layers=1, hidden_size=32, intermediate_size=64, num_attention_heads=2,
        vocab_size=64,
    )
    return tf.BertForMaskedLM(config), [_ids()], 2  # tied: word embeddings, decoder bias


def _t5():
    import transformers as tf

    config = tf.T5Config(
        num_layers=1, num_decoder_layers=1, d_model=32, d_ff=64, num_heads=2, d_kv=16,
        vocab_size=64, use_cache=False,
    )
    return _Seq2Seq(tf.T5ForConditionalGeneration(config)), [_ids(), _ids()], 3  # tied embeddings


@pytest.mark.slow
@pytest.mark.parametrize("build", [_llama, _bert, _t5], ids=["llama", "bert", "t5"])
def test_transformers_family_trains(build):
    model, inputs, tied = build()
    report = solar.analyze(model, inputs, arch="H100-SXM", train=True, optimizer="adamw")
    params = len(list(model.parameters()))  # distinct tensors: a tied weight once
    assert f"gradients of {params} parameters" in " ".join(report.assumptions)
    notes = [n for n in report.assumptions if "get no gradient" in n]
    assert [n.split(" ")[0] for n in notes] == ([str(tied)] if tied else [])


def test_gpt2_lm_head_trains_from_a_file(tmp_path, capsys):
    path = tmp_path / "gpt2_lm.py"
    path.write_text(GPT2_FILE)
    argv = ["analyze", str(path), "--train", "--loss", "sum", "--optimizer", "adamw"]
    assert cli.main([*argv, "--arch", "H100-SXM"]) == 0
    out = capsys.readouterr().out
    assert "1 parameter(s) get no gradient" in out


def test_docs_table_is_written_from_the_results():
    from benchmarks import train_corpus

    names = sorted(torchvision.models.list_models(module=torchvision.models))
    text = train_corpus.DOC.read_text()
    block = text.split(train_corpus.BEGIN)[1].split(train_corpus.END)[0].strip()
    assert block == train_corpus.table(train_corpus.load(), names)
    assert len(names) >= 80

"""A Llama-2-7B-shaped decoder (HF transformers LlamaForCausalLM from its config: no weights) with
int8 weight-only linear layers, as torchao's int8 weight-only quantisation makes them: every
nn.Linear becomes int8 weights + per-channel bf16 scales applied by torch._weight_int8pack_mm.
bf16 activations, batch 1 x 2048 tokens."""

import torch
import torch.nn as nn
from transformers import LlamaConfig, LlamaForCausalLM

BATCH = 1
SEQ = 2048
LAYERS = 32
SHRUNK = {"SEQ": 32, "LAYERS": 1}
FLOP_DIFF = "int8"


class Int8Linear(nn.Module):
    def __init__(self, linear: nn.Linear):
        super().__init__()
        out_features, in_features = linear.weight.shape
        self.register_buffer("weight", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("scales", torch.ones(out_features, dtype=torch.bfloat16))

    def forward(self, x):
        shape = x.shape
        y = torch._weight_int8pack_mm(x.reshape(-1, shape[-1]), self.weight, self.scales)
        return y.reshape(*shape[:-1], -1)


def _quantise(module: nn.Module) -> None:
    for name, child in module.named_children():
        if isinstance(child, nn.Linear):
            setattr(module, name, Int8Linear(child))
        else:
            _quantise(child)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = LlamaConfig(num_hidden_layers=LAYERS, use_cache=False)
        self.net = LlamaForCausalLM(config).to(torch.bfloat16).eval()
        _quantise(self.net)

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).logits


def get_inputs():
    return [torch.randint(0, 32000, (BATCH, SEQ))]


def get_init_inputs():
    return []

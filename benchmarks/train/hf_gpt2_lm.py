"""A training step of transformers GPT-2 small with its LM head (GPT2LMHeadModel from its config, no
weights; tied input/output embeddings; attention through SDPA, causal) on 8 sequences of 1024
tokens in fp32: `solar analyze benchmarks/train/hf_gpt2_lm.py --train --arch H100-SXM`, timed by
`solar validate ... --train` (loss = sum of the logits, AdamW; dropout off: the config's
probabilities are set to 0 so the bound and the timed step run the same ops)."""

import torch
import torch.nn as nn
from transformers import GPT2Config, GPT2LMHeadModel

BATCH = 8
SEQ = 1024
LAYERS = 12


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = GPT2Config(n_layer=LAYERS, use_cache=False, resid_pdrop=0.0, embd_pdrop=0.0,
                            attn_pdrop=0.0, attn_implementation="sdpa")
        self.net = GPT2LMHeadModel(config)

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).logits


def get_inputs():
    return [torch.randint(0, 50257, (BATCH, SEQ))]


def get_init_inputs():
    return []

"""One decode step of a Llama-2-7B-shaped model at batch 1 (two decoder layers, context 1024,
bf16): the model of examples/studies/llama_decode_step.py with one sequence, the way a single
user's request is served."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.studies import llama_decode_step as step  # noqa: E402

step.BATCH = 1
Model = step.Model
get_inputs = step.get_inputs
get_init_inputs = step.get_init_inputs

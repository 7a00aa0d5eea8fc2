"""The transformers corpus: families built from config objects (shrunk sizes, random weights) and
analysed through solar's Python API at a prefill step, a decode step with the KV cache the model
itself returns (passed as an argument), and a training step; solar's contraction FLOPs are checked
against FlopCounterMode's count of the same step run for real. Rows go to
benchmarks/results/hf_corpus.json and the table of docs/MODELS.md ("The transformers corpus").

    python benchmarks/hf_corpus.py [-k SUBSTRING] [--steps prefill,decode,train] [--table-only]
                                   [--timeout S]

Sizes (SIZES): every family is shrunk to 2 layers of hidden size 64 (4 heads, 2 KV heads, head dim
16, MLP 128, vocabulary 256) unless its row says otherwise; the MoE families take their tiny configs
(tests/fixtures/hf/*-tiny.json). Steps: prefill of PROMPT tokens (batch 1), decode of 1 token after
PROMPT cached tokens; training is the prefill forward (no cache) with loss = sum of the output,
AdamW, module mode train."""

from __future__ import annotations

import argparse
import inspect
import json
import signal
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

import solar  # noqa: E402
import solar.frontends.torch  # noqa: E402,F401  (before transformers: see frontends/torch/libraries.py)
import transformers  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "hf_corpus.json"
DOC = ROOT / "docs" / "MODELS.md"
FIXTURES = ROOT / "tests" / "fixtures" / "hf"
BEGIN, END = "<!-- hf_corpus: begin -->", "<!-- hf_corpus: end -->"
ARCH = "H100-SXM"
PROMPT = 16
VOCAB = 100  # token ids drawn from [4, VOCAB): within every vocabulary, above the special ids
STEPS = ("prefill", "decode", "train")
SIZES = {
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 256, "max_position_embeddings": 256,
}
ENCODER_DECODER = {  # BART / Whisper field names
    "d_model": 64, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "vocab_size": 256,
    "max_position_embeddings": 256,
}
BERT = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
        "vocab_size": 256, "max_position_embeddings": 256}


@dataclass(frozen=True)
class Family:
    """One transformers family: its kind (which steps and inputs it has), the model_type, the
    config fields set on top of the kind's sizes (`sizes`: replaces them), a tiny config file
    instead (`fixture`), and why solar's contraction FLOPs may differ from FlopCounterMode's
    (`diff`, a key of DIFFS)."""

    name: str
    kind: str
    model_type: str
    fields: dict = field(default_factory=dict)
    sizes: dict | None = None
    fixture: str | None = None
    diff: str = "causal"


FAMILIES = (
    # dense decoders
    Family("llama", "causal", "llama"),
    Family("mistral", "causal", "mistral"),
    Family("qwen2", "causal", "qwen2"),
    Family("qwen3", "causal", "qwen3"),
    Family("gemma", "causal", "gemma"),
    Family("gemma2", "causal", "gemma2", {"sliding_window": 64}),
    Family("gemma3", "causal", "gemma3_text", {"sliding_window": 64}),
    Family("phi", "causal", "phi", {"partial_rotary_factor": 0.5}),
    Family("phi3", "causal", "phi3", {"pad_token_id": 0}),
    Family("gpt2", "causal", "gpt2", sizes={"n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 256,
                                             "vocab_size": 256}),
    Family("gpt_neox", "causal", "gpt_neox"),
    Family("gptj", "causal", "gptj", sizes={"n_embd": 64, "n_layer": 2, "n_head": 4, "rotary_dim": 8,
                                             "n_positions": 256, "vocab_size": 256}),
    Family("opt", "causal", "opt", {"ffn_dim": 128, "word_embed_proj_dim": 64}),
    Family("falcon", "causal", "falcon", {"new_decoder_architecture": True, "num_kv_heads": 2},
           sizes={k: v for k, v in SIZES.items() if k != "head_dim"}),
    Family("bloom", "causal", "bloom", sizes={"hidden_size": 64, "n_layer": 2, "n_head": 4, "vocab_size": 256}),
    Family("stablelm", "causal", "stablelm"),
    Family("cohere", "causal", "cohere"),
    Family("granite", "causal", "granite"),
    Family("olmo", "causal", "olmo"),
    Family("olmo2", "causal", "olmo2"),
    Family("starcoder2", "causal", "starcoder2"),
    # mixture of experts (the tiny configs of tests/fixtures/hf)
    Family("mixtral", "causal", "mixtral", fixture="mixtral-tiny.json", diff="moe"),
    Family("qwen2_moe", "causal", "qwen2_moe", fixture="qwen2-moe-tiny.json", diff="moe"),
    Family("qwen3_moe", "causal", "qwen3_moe", fixture="qwen3-moe-tiny.json", diff="moe"),
    Family("olmoe", "causal", "olmoe", fixture="olmoe-tiny.json", diff="moe"),
    Family("deepseek_v3", "causal", "deepseek_v3", fixture="deepseek-v3-tiny.json", diff="moe"),
    Family("gpt_oss", "causal", "gpt_oss", fixture="gpt-oss-tiny.json", diff="moe"),
    Family("phimoe", "causal", "phimoe", fixture="phimoe-tiny.json", diff="moe"),
    Family("granitemoe", "causal", "granitemoe", fixture="granitemoe-tiny.json", diff="moe"),
    # encoder-decoder
    Family("t5", "seq2seq", "t5", sizes={"d_model": 64, "d_kv": 16, "d_ff": 128, "num_layers": 2,
                                         "num_decoder_layers": 2, "num_heads": 4, "vocab_size": 256}),
    Family("bart", "seq2seq", "bart", sizes=ENCODER_DECODER),
    Family("whisper", "speech", "whisper", {"num_mel_bins": 80, "max_source_positions": 32,
                                            "max_target_positions": 64, "pad_token_id": 1, "bos_token_id": 2,
                                            "eos_token_id": 2, "decoder_start_token_id": 3},
           sizes=ENCODER_DECODER),
    # encoders (one forward: no decode step)
    Family("bert", "encoder", "bert", sizes=BERT, diff="pooler"),
    Family("roberta", "encoder", "roberta", sizes=BERT, diff="pooler"),
    # state-space models (their pure-PyTorch paths)
    Family("mamba", "causal", "mamba", sizes={"hidden_size": 64, "state_size": 8, "num_hidden_layers": 2,
                                              "expand": 2, "conv_kernel": 4, "vocab_size": 256}, diff="ssm"),
    Family("mamba2", "causal", "mamba2", sizes={"hidden_size": 64, "state_size": 16, "num_hidden_layers": 2,
                                                "num_heads": 8, "head_dim": 16, "expand": 2, "n_groups": 1,
                                                "conv_kernel": 4, "chunk_size": 8, "vocab_size": 256},
           diff="ssm"),
    # vision-language
    Family("llava", "vlm", "llava", diff="vlm"),
)
STEPS_OF = {"causal": STEPS, "seq2seq": STEPS, "speech": STEPS, "vlm": STEPS, "encoder": ("prefill", "train")}
# Why solar's contraction FLOPs differ from FlopCounterMode's (each checked by hand in
# tests/test_hf_corpus.py for a family of its kind).
DIFFS = {
    "causal": "causal prefill: solar counts the S(S+1)/2 kept pairs, FlopCounterMode all S^2",
    "one_key": "decode: the new key's P·V term is a product over one key, elementwise in solar",
    "moe": "the experts (transformers' grouped GEMM, a custom op FlopCounterMode counts as 0)",
    "pooler": "the pooler's output is not returned (solar drops it)",
    "ssm": "the selective scan: solar below FlopCounterMode (not itemised)",
    "vlm": "the vision tower's last layer on its CLS row, which the projector drops (solar drops it)",
}


def config_of(family: Family) -> Any:
    from transformers import AutoConfig

    if family.fixture is not None:
        data = json.loads((FIXTURES / family.fixture).read_text())
        return AutoConfig.for_model(**data)
    if family.kind == "vlm":
        from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig

        vision = CLIPVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                  num_attention_heads=4, image_size=32, patch_size=8, projection_dim=64)
        text = LlamaConfig(**SIZES)
        return LlavaConfig(vision_config=vision, text_config=text, image_token_index=255,
                           vision_feature_layer=-1, image_seq_length=16)
    config = AutoConfig.for_model(family.model_type)
    for key, value in {**(SIZES if family.sizes is None else family.sizes), **family.fields}.items():
        setattr(config, key, value)
    return config


def build(family: Family) -> torch.nn.Module:
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoModelForSpeechSeq2Seq
    from transformers import LlavaForConditionalGeneration

    auto = {"causal": AutoModelForCausalLM, "seq2seq": AutoModelForSeq2SeqLM,
            "speech": AutoModelForSpeechSeq2Seq, "encoder": AutoModel, "vlm": LlavaForConditionalGeneration}
    config = config_of(family)
    torch.manual_seed(0)
    make = getattr(auto[family.kind], "from_config", None) or auto[family.kind]._from_config
    try:
        model = make(config, attn_implementation="sdpa")
    except ValueError as exc:
        if "scaled_dot_product_attention" not in str(exc) and "sdpa" not in str(exc).lower():
            raise
        model = make(config, attn_implementation="eager")
    return model.float().eval()


def cache_key(model: torch.nn.Module) -> str:
    """The keyword the model takes its cache by (`cache` in newer transformers)."""
    params = inspect.signature(model.forward).parameters
    return next(k for k in ("cache", "past_key_values", "cache_params") if k in params)


def _returned_cache(out: Any) -> Any:
    for key in ("cache", "past_key_values", "cache_params"):
        value = getattr(out, key, None)
        if value is not None:
            return value
    raise RuntimeError("the prefill returned no cache")


class Prefill(torch.nn.Module):
    """A forward over the prompt; `use_cache` writes the KV cache the model makes."""

    def __init__(self, model: torch.nn.Module, kind: str, use_cache: bool) -> None:
        super().__init__()
        self.model, self.kind, self.use_cache = model, kind, use_cache

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        extra = {} if self.kind == "encoder" else {"use_cache": self.use_cache}
        out = self.model(**dict(zip(INPUT_NAMES[self.kind], inputs)), **extra)
        return out.last_hidden_state if self.kind == "encoder" else out.logits


class Decode(torch.nn.Module):
    """One new token attending the cache (an argument); encoder-decoder models take the encoder's
    output as an input too."""

    def __init__(self, model: torch.nn.Module, kind: str) -> None:
        super().__init__()
        self.model, self.kind, self.key = model, kind, cache_key(model)

    def forward(self, ids: torch.Tensor, cache: Any, encoded: torch.Tensor | None = None) -> torch.Tensor:
        if encoded is None:
            return self.model(input_ids=ids, use_cache=True, **{self.key: cache}).logits
        return self.model(encoder_outputs=(encoded,), decoder_input_ids=ids, use_cache=True,
                          **{self.key: cache}).logits


INPUT_NAMES = {
    "causal": ("input_ids",),
    "encoder": ("input_ids",),
    "seq2seq": ("input_ids", "decoder_input_ids"),
    "speech": ("input_features", "decoder_input_ids"),
    "vlm": ("input_ids", "pixel_values"),
}


def prompt_inputs(family: Family, model: torch.nn.Module) -> tuple:
    torch.manual_seed(1)
    ids = torch.randint(4, VOCAB, (1, PROMPT))
    if family.kind in ("seq2seq",):
        return ids, ids.clone()
    if family.kind == "speech":
        c = model.config
        return torch.randn(1, c.num_mel_bins, 2 * c.max_source_positions), ids
    if family.kind == "vlm":
        c = model.config
        ids = torch.cat([torch.full((1, c.image_seq_length), c.image_token_index), ids], dim=1)
        side = c.vision_config.image_size
        return ids, torch.randn(1, 3, side, side)
    return (ids,)


def step(family: Family, model: torch.nn.Module, kind: str) -> tuple[torch.nn.Module, tuple]:
    """The module and inputs of one step (a decode step's cache made by a real prefill)."""
    inputs = prompt_inputs(family, model)
    if kind != "decode":
        return Prefill(model, family.kind, use_cache=kind == "prefill"), inputs
    with torch.no_grad():
        out = model(**dict(zip(INPUT_NAMES[family.kind], inputs)), use_cache=True)
    cache = _returned_cache(out)
    ids = torch.randint(4, VOCAB, (1, 1))
    if family.kind in ("seq2seq", "speech"):
        return Decode(model, family.kind), (ids, cache, out.encoder_last_hidden_state)
    return Decode(model, family.kind), (ids, cache)


def flop_counter(family: Family, model: torch.nn.Module, kind: str) -> int:
    module, inputs = step(family, model.requires_grad_(False), kind)
    with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        module(*inputs)
    return int(counter.get_total_flops())


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Timeout


def _error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def one(family: Family, kind: str, timeout: int) -> dict:
    """One row: the step analysed (bounds, contraction FLOPs, CPU seconds) and FlopCounterMode's
    count of it (inference steps)."""
    row: dict = {"family": family.name, "step": kind}
    start = time.process_time()
    signal.signal(signal.SIGPROF, _alarm)  # CPU seconds of this process: steady on a shared machine
    signal.setitimer(signal.ITIMER_PROF, timeout)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = build(family)
            module, inputs = step(family, model, kind)
            train = {"train": True, "loss": "sum", "optimizer": "adamw", "mode": "train"} if kind == "train" else {}
            report = solar.analyze(module, list(inputs), arch=ARCH, **train)
        row.update(ok=True, flops=report.totals.contraction_flops,
                   fused_s=report.bounds["fused"].seconds, unfused_s=report.bounds["unfused"].seconds)
    except _Timeout:
        row.update(ok=False, error=f"analysis took over {timeout} CPU s (not finished)")
    except Exception as exc:  # noqa: BLE001  (a row, never a stop)
        row.update(ok=False, error=_error(exc))
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    row["cpu_s"] = round(time.process_time() - start, 2)
    if kind != "train":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row["flop_counter"] = flop_counter(family, build(family), kind)
        except Exception as exc:  # noqa: BLE001
            row["flop_counter_error"] = _error(exc)
    return row


def load() -> dict[str, dict]:
    return json.loads(RESULTS.read_text())["rows"] if RESULTS.exists() else {}


def save(rows: dict[str, dict]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    meta = {"torch": torch.__version__, "transformers": transformers.__version__, "arch": ARCH,
            "prompt": PROMPT, "sizes": SIZES}
    RESULTS.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1, sort_keys=True) + "\n")


def _cell(row: dict | None) -> str:
    if row is None:
        return "not run"
    if not row["ok"]:
        return row["error"].replace("|", "\\|")
    return f"ok ({row['cpu_s']:.1f} s)"


def _flops(family: Family, row: dict | None) -> str:
    """solar's contraction FLOPs against FlopCounterMode's: equal, or the difference and why."""
    if row is None or not row["ok"] or "flop_counter" not in row:
        return ""
    s, f = row["flops"], row["flop_counter"]
    if s == f:
        return "equal"
    why = [DIFFS[family.diff]] if family.diff in ("moe", "ssm", "pooler") else []
    if family.diff == "vlm" and row["step"] == "prefill":
        why.append(DIFFS["vlm"])
    if family.diff in ("causal", "moe", "vlm") and row["step"] == "prefill":
        why.append(DIFFS["causal"])
    if family.diff != "ssm" and row["step"] == "decode":
        why.append(DIFFS["one_key"])
    return f"{(s - f) / f * 100:+.1f} % ({'; '.join(why)})"


def table(rows: dict[str, dict]) -> str:
    wanted = [(f, k) for f in FAMILIES for k in STEPS_OF[f.kind]]
    ok = sum(1 for f, k in wanted if rows.get(f"{f.name}/{k}", {}).get("ok"))
    lines = [
        f"{ok} of {len(wanted)} steps of {len(FAMILIES)} families analyse (transformers "
        f"{transformers.__version__}, {ARCH}; `python benchmarks/hf_corpus.py` writes this table from "
        "benchmarks/results/hf_corpus.json). Cells: the fused bound, or why the step does not analyse;"
        " FLOPs: solar's contraction FLOPs against FlopCounterMode's at prefill / decode.",
        "",
        "| family | kind | prefill | decode | train | FLOPs prefill | FLOPs decode |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in FAMILIES:
        r = {k: rows.get(f"{f.name}/{k}") for k in STEPS}
        cells = [_cell(r[k]) if k in STEPS_OF[f.kind] else "n/a (encoder)" for k in STEPS]
        lines.append(f"| {f.name} | {f.kind} | {' | '.join(cells)} | {_flops(f, r['prefill'])} | "
                     f"{_flops(f, r['decode'])} |")
    return "\n".join(lines)


def write_table(rows: dict[str, dict]) -> None:
    text = DOC.read_text()
    if BEGIN not in text:
        text += f"\n## The transformers corpus\n\n{BEGIN}\n{END}\n"
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{BEGIN}\n{table(rows)}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-k", default="", help="only families whose name contains one of these (a,b,...)")
    p.add_argument("--steps", default=",".join(STEPS))
    p.add_argument("--table-only", action="store_true")
    p.add_argument("--timeout", type=int, default=300)
    args = p.parse_args(argv)
    rows = load()
    if not args.table_only:
        for family in FAMILIES:
            if not any(k in family.name for k in args.k.split(",")):
                continue
            for kind in STEPS_OF[family.kind]:
                if kind not in args.steps.split(","):
                    continue
                rows[f"{family.name}/{kind}"] = one(family, kind, args.timeout)
                print(json.dumps(rows[f"{family.name}/{kind}"]), flush=True)
                save(rows)
    write_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The messages sent to the model: the IR reference (docs/IR.md, or a summary generated from the
parser's grammar when that file is absent), worked examples (source -> IR pairs from solar's own
lowerings), then the program or op at hand with its shapes and the error that stopped the tracer;
later rounds add what the check found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from solar.frontends.llm.reference import TensorInfo
from solar.ir import printer, syntax
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import OPS, ScalarOp, Update

@dataclass(frozen=True)
class Example:
    """A worked example: a source program and the IR solar's own frontend lowered it to."""

    name: str
    source: str
    ir: str


IR_DOC = Path(__file__).resolve().parents[3] / "docs" / "IR.md"

RULES = """\
You translate programs into solar's Affine Loop IR. Reply with exactly one IR program in the text
form below: `program NAME { ... }`. Only that block is read, by a parser; nothing else in your reply
is used, and no code you write is ever run. Write the IR by hand; never Python.

Rules for the program you write:
- Sizes are symbols: declare each size once, `sym N = 64`, and use the name in tensor shapes and loop
  extents (`input x: f32[B, N]`, `for i in 0..N:`). solar binds the symbols itself, from the shapes of
  the real inputs, parameters and outputs, and checks your IR at several different sizes. A size
  derived from others (a pooled length, N - 1, ...) gets its own symbol; it must be a dimension of
  some input, parameter or output (solar reads it there). In index expressions and guards a symbol
  may appear as an integer (`x[N - 1 - i]`, `where j <= N - 2`); `index(N)` is a size used as a value.
  Do not write numbers for sizes that follow the input shapes.
- Declare the inputs in the order the program takes its tensor arguments, the parameters (and
  buffers) under their state-dict names with `.` written as `_` (`fc.weight` -> `fc_weight`), and the
  outputs in the order the program returns them. Intermediate tensors are `temp`.
- Every statement is one loop nest around one update. A value chosen by data (a branch on a tensor
  value) is a `where(cond, a, b)` select computed from the tensors, not a Python `if`.
- Random inputs are used for the check: the IR must compute the same function for every input.
- solar bounds the runtime from the work your IR does, so write the least work a correct program
  needs: nothing recomputed, a running (prefix) computation as a recurrence over an in-order loop
  when the IR has one, never as a sum over a triangle.
"""


def grammar_text() -> str:
    """The lark grammar of the IR text form, as the parser uses it."""
    return syntax._GRAMMAR


def reference_text() -> str:
    """docs/IR.md when present; otherwise a summary generated from the parser and the op table."""
    if IR_DOC.is_file():
        return IR_DOC.read_text()
    functions = ", ".join(f"{op.value}/{OPS[op].arity}" for op in ScalarOp)
    return (
        "# The IR text form\n\n"
        + (printer.__doc__ or "")
        + "\n\nFunctions (name/arity): "
        + functions
        + "\nDtypes (also casts, e.g. f16(x)): "
        + ", ".join(d.text for d in DType)
        + "\nUpdates: "
        + ", ".join(u.value for u in Update)
        + "\nTensor roles: input, param, output, temp. Comments start with #."
        + "\nAn accumulating update (+=, max=, ...) needs its target initialised by an earlier statement;"
        + " loop variables absent from the target index are reduced over."
        + "\n\nGrammar (lark):\n"
        + grammar_text()
    )


def system_message(examples: Sequence[Example]) -> str:
    shown = "\n\n".join(
        f"### Example: {e.name}\nSource:\n```python\n{e.source}```\nIR:\n```\n{e.ir}```"
        for e in examples
    )
    return f"{RULES}\n## IR reference\n\n{reference_text()}\n\n## Worked examples (solar's own lowerings)\n\n{shown}\n"


def _tensor_lines(items: Sequence[tuple[str, TensorInfo]]) -> str:
    return "\n".join(f"  - {name}: {t.describe()}" for name, t in items) or "  (none)"


def program_message(
    source: str,
    filename: str,
    inputs: Sequence[TensorInfo],
    params: dict[str, TensorInfo],
    sizes: dict[str, int],
    error: str,
    convention: str = "KernelBench format: Model(*get_init_inputs()) applied to get_inputs()",
) -> str:
    sizes_text = ", ".join(f"{k}={v}" for k, v in sizes.items()) or "none"
    return (
        f"Translate this program ({filename}, {convention}) into the IR.\n\n```python\n{source}```\n\n"
        f"solar's tracer stopped with:\n  {error}\n\n"
        f"Tensor inputs, in order:\n{_tensor_lines([(f'input {k}', t) for k, t in enumerate(inputs)])}\n"
        f"Parameters and buffers (IR names):\n{_tensor_lines(sorted(params.items()))}\n"
        f"Size constants of the file (varied between checks): {sizes_text}\n"
    )


def op_message(
    op: str,
    schema: str,
    inputs: Sequence[TensorInfo],
    outputs: Sequence[TensorInfo],
    attributes: str,
    source: str,
    error: str,
) -> str:
    return (
        f"Write the IR of the single PyTorch ATen op `{op}` (schema: `{schema}`) as a function of its\n"
        f"input shapes, for these attributes: {attributes}.\n"
        f"Tensor inputs, in order (declare them as `input in0`, `input in1`, ...; at the traced call):\n"
        f"{_tensor_lines([(f'in{k}', t) for k, t in enumerate(inputs)])}\n"
        f"Outputs, in order (declare them as `output out0`, ...):\n"
        f"{_tensor_lines([(f'out{k}', t) for k, t in enumerate(outputs)])}\n"
        f"It is called at {source or 'an unknown line'}; solar's tracer stopped with:\n  {error}\n"
        "solar checks your IR against the real op at several small shapes, then uses it at the traced shapes.\n"
    )


def feedback_message(problems: Sequence[str]) -> str:
    return (
        "solar checked your IR and it is not accepted yet:\n"
        + "\n".join(f"- {p}" for p in problems)
        + "\nFix it and reply with the whole corrected program."
    )

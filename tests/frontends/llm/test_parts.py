"""The pieces of the LLM frontend on their own: finding the IR in a reply, binding size symbols,
the prompt's contents, the worked examples."""

from __future__ import annotations

import pytest

from solar.frontends.llm import prompt
from solar.frontends.llm.reference import TensorInfo
from solar.frontends.llm.reply import NoProgram, extract_program
from solar.frontends.llm.symbolic import BindError, bind, solve
from solar.ir.parser import parse_program
from tests.frontends.llm.programs import DOUBLE


def test_extract_the_last_complete_block() -> None:
    text = f"first try:\nprogram a {{\n  input x: f32[2]\n\nno wait, here:\n```\n{DOUBLE}```\nprogram b {{ unterminated"
    assert extract_program(text) == DOUBLE
    with_strings = 'program p {\n  input x: f32[2]\n  output y: f32[2]\n  @op x id=0 at "f.py:1: a = {"\n  for i in 0..2:  # }\n    y[i] = x[i]\n}\ntrailing }'
    assert parse_program(extract_program(with_strings)).name == "p"
    with pytest.raises(NoProgram, match="no complete IR program"):
        extract_program("```python\nprint('hi')\n```")


def test_bind_substitutes_sizes_everywhere() -> None:
    flip = parse_program(
        "program flip {\n  sym N = 4\n  input x: f32[N]\n  output y: f32[N]\n"
        "  for i in 0..N where i <= N - 1:\n    y[i] = x[N - 1 - i] * index(N)\n}\n"
    )
    values = solve(flip, [(5,)], {}, [(5,)])
    assert values == {"N": 5}
    assert str(bind(flip, values)) == (
        "program flip {\n  input x: f32[5]\n  output y: f32[5]\n"
        "  for i in 0..5 where -i + 4 >= 0:\n    y[i] = x[-i + 4] * index(5)\n}\n"
    )


@pytest.mark.parametrize(
    "inputs, params, outputs, message",
    [
        ([(4, 3), (4, 3)], {}, [(4, 3)], "declares 1 inputs .* takes 2 tensor inputs"),
        (
            [(4, 3, 1)],
            {},
            [(4, 3)],
            r"input x is declared with rank 2 \['N', 'M'\].* shape \(4, 3, 1\)",
        ),
        (
            [(4, 3)],
            {},
            [(4, 5)],
            "size symbol M is 3 elsewhere but the program's output 0 .* has 5",
        ),
        ([(4, 3)], {}, [], "declares 1 outputs but the program returns 0"),
    ],
)
def test_solve_errors(inputs, params, outputs, message) -> None:
    with pytest.raises(BindError, match=message):
        solve(parse_program(DOUBLE), inputs, params, outputs)


def test_unknown_param_names_the_known_ones() -> None:
    text = DOUBLE.replace("  output y", "  param fc_weight: f32[M]\n  output y")
    with pytest.raises(
        BindError, match=r"param 'fc_weight', but the program's parameters are fc_bias \(write dots"
    ):
        solve(parse_program(text), [(4, 3)], {"fc_bias": (3,)}, [(4, 3)])


def test_prompt_holds_the_reference_the_program_and_the_error() -> None:
    reference = prompt.reference_text()
    if prompt.IR_DOC.is_file():
        assert reference == prompt.IR_DOC.read_text()
    else:  # generated from the parser's grammar and the op table
        assert (
            'program: "program" PROGNAME' in reference
            and "sigmoid/1" in reference
            and "where/3" in reference
        )
    message = prompt.program_message(
        "class Model: ...\n",
        "m.py",
        [TensorInfo((2, 3), "float32")],
        {"fc_weight": TensorInfo((3, 3), "float32")},
        {"batch": 2},
        "m.py:4: torch.export could not trace the model: boom",
    )
    assert "m.py:4: torch.export could not trace the model: boom" in message
    assert (
        "input 0: float32[2, 3]" in message
        and "fc_weight: float32[3, 3]" in message
        and "batch=2" in message
    )


def test_examples_are_solars_lowerings_over_symbols(examples_dir) -> None:
    from solar.frontends.llm import examples

    loaded = examples.load(examples_dir)
    by_name = {e.name: e for e in loaded}
    lookup = by_name["Lookup"]
    assert (
        "class Lookup" in lookup.source
        and "sym V = 11" in lookup.ir
        and "table_weight[ind(ids[i0]), i1]" in lookup.ir
    )
    for e in loaded:  # every example parses, over symbols, without @op lines
        program = parse_program(e.ir)
        assert program.symbols and "@op" not in e.ir
    chosen = examples.pick(loaded, "self.emb = nn.Embedding(vocab, dim)\nreturn self.emb(ids)")
    assert chosen[-1].name == "Lookup" and len(chosen) == 3

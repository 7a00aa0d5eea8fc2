"""Whole programs the tracers cannot read: the model writes the IR of the file's program, checked
against the file run for real at several size bindings, then bound at the program's own sizes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from solar.frontends.detect import framework_of
from solar.frontends.llm import examples as examples_mod
from solar.frontends.llm import prompt
from solar.frontends.llm.client import ChatClient
from solar.frontends.llm.config import LLMConfig
from solar.frontends.llm.reference import JaxFile, ModelFile
from solar.frontends.llm.symbolic import bind, solve
from solar.frontends.llm.synth import Task, synthesise
from solar.frontends.loaded import Provenance
from solar.ir.nodes import Origin, Program, Stmt
from solar.ir.rewrite import rewrite
from solar.ir.verify import verify


def lower_file(
    path: str | Path, config: LLMConfig, error: str, client: ChatClient | None = None
) -> tuple[Program, Provenance]:
    """The program of a model file, written by the model and checked (LLMError when no reply
    matches). `error` is what stopped the tracer."""
    kind = JaxFile if framework_of(path) == "jax" else ModelFile
    model_file = kind(Path(path).resolve())
    convention = (
        ("a JAX file: forward(*get_inputs()), or forward(get_params(), *get_inputs())",)
        if kind is JaxFile
        else ()
    )
    inputs, params = model_file.shapes()
    source = model_file.source
    chosen = examples_mod.pick(examples_mod.load(config.cache_path), source)
    messages = (
        {"role": "system", "content": prompt.system_message(chosen)},
        {
            "role": "user",
            "content": prompt.program_message(
                source, model_file.path.name, inputs, params, model_file.sizes(), error, *convention
            ),
        },
    )
    cases: list = []

    def run_cases():
        for case in model_file.cases():
            cases.append(case)
            yield case

    task = Task("program", f"{model_file.path.name} (whole program)", source, messages, run_cases)
    accepted = synthesise(task, config, client)
    symbolic = accepted.program
    outputs = next((c.outputs for c in cases if c.real), None)
    values = solve(
        symbolic,
        [t.shape for t in inputs],
        {k: t.shape for k, t in params.items()},
        [o.shape for o in outputs] if outputs is not None else None,
    )
    program = bind(symbolic, values)
    origin = Origin("llm-program", 0, f"{model_file.path.name}: written by the LLM frontend")
    program = rewrite(
        dataclasses.replace(program, name=model_file.path.stem), lambda n: _with_origin(n, origin)
    )
    verify(program)
    return program, accepted.provenance


def _with_origin(node, origin: Origin):
    """Statements without an `@op` line are one op of the LLM-written program (one kernel in the
    unfused bound: never more kernels than the program has)."""
    if isinstance(node, Stmt):
        return node if node.origin is not None else dataclasses.replace(node, origin=origin)
    return None

"""Missing ops: a lowering rule for an ATen op the table lacks, written by the model as the IR of
that op alone (over size symbols), checked against the real op at several small shapes, then
instantiated at the traced shapes and spliced into the traced program (its inputs read through the
argument views, its temps and outputs fresh tensors of the program). Passed to the torch converter
as its `fallback` (solar.frontends.torch.convert.FallbackRules)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solar.errors import LLMError, UnsupportedOpError
from solar.frontends import builder as B
from solar.frontends.llm import examples as examples_mod
from solar.frontends.llm import prompt
from solar.frontends.llm.client import ChatClient
from solar.frontends.llm.config import LLMConfig
from solar.frontends.llm.reference import OpCall, tensors_in
from solar.frontends.llm.symbolic import bind, solve
from solar.frontends.llm.synth import Accepted, Task, synthesise
from solar.frontends.views import View
from solar.frontends.loaded import Provenance
from solar.ir.nodes import Call, Cast, Const, Expr, Index, Indirect, Load, Program, Role, Stmt


@dataclass
class LLMOpRules:
    """A FallbackRules that asks the model; remembers what it synthesised (for provenance) and
    reuses one translation per op signature within a run."""

    config: LLMConfig
    client: ChatClient | None = None
    provenance: list[Provenance] = field(default_factory=list)
    _accepted: dict[str, Accepted] = field(default_factory=dict)

    def rule_for(self, node: Any, source: str, error: UnsupportedOpError):
        import torch

        out = node.meta.get("val")
        if not tensors_in(out) or not all(isinstance(t, torch.Tensor) for t in tensors_in(out)):
            return None  # a scalar read on the host (item, ...): not an op of the IR
        args = torch.fx.node.map_arg(node.args, lambda n: n.meta.get("val"))
        call = OpCall(node.target, tuple(args), dict(node.kwargs), out)
        signature = call.signature()
        if signature not in self._accepted:
            self._accepted[signature] = self._synthesise(call, source, str(error))
            self.provenance.append(self._accepted[signature].provenance)
        accepted = self._accepted[signature]
        return lambda ctx, *a, **k: splice(ctx, accepted.program, a, call)

    def _synthesise(self, call: OpCall, source: str, error: str) -> Accepted:
        self.client = self.client or ChatClient(self.config)
        op = str(call.target)
        chosen = examples_mod.pick(
            examples_mod.load(self.config.cache_path), op.replace(".", " ").replace("_", " ")
        )
        messages = (
            {"role": "system", "content": prompt.system_message(chosen)},
            {
                "role": "user",
                "content": prompt.op_message(
                    op,
                    str(call.target._schema),
                    call.inputs(),
                    call.outputs(),
                    call.attributes(),
                    source,
                    error,
                ),
            },
        )
        task = Task("op", op, call.signature(), messages, call.cases)
        return synthesise(task, self.config, self.client)


def splice(ctx: Any, symbolic: Program, args: tuple, call: OpCall) -> Any:
    """Emit the op's IR at the traced shapes into the program being built; returns the op's
    output views (one, or a tuple when the op returns several)."""
    b = ctx.b
    views = [v for v in _flatten(args) if isinstance(v, View)]
    outs = call.outputs()
    program = bind(symbolic, solve(symbolic, [v.shape for v in views], {}, [o.shape for o in outs]))
    ins = {t.name: v for t, v in zip(program.with_role(Role.INPUT), views)}
    names: dict[str, str] = {}
    results = []
    for t in program.tensors:
        if t.role in (Role.TEMP, Role.OUTPUT):
            view = b.temp(f"{ctx.hint}_{t.name}", program.shape(t.name), t.dtype)
            names[t.name] = view.base
            if t.role is Role.OUTPUT:
                results.append(view)
    for node in getattr(program, "body", program.stmts):  # the nested body where there is one
        _emit(b, node, program, ins, names)
    return (
        results[0]
        if len(results) == 1 and not isinstance(call.out, (tuple, list))
        else tuple(results)
    )


def _emit(b: Any, node: Any, program: Program, ins: dict, names: dict[str, str]) -> None:
    """Emit one statement, or one in-order loop around its body, into the builder."""
    if isinstance(node, Stmt):
        loops = [(loop.var, program.size(loop.extent)) for loop in node.loops]
        value = _term(node.value, ins, names)
        b.emit(loops, names[node.target.tensor], node.target.index, node.update, value, node.guards)
    elif hasattr(node, "body") and hasattr(b, "in_order"):  # an in-order loop
        with b.in_order(node.var, program.size(node.extent)):
            for child in node.body:
                _emit(b, child, program, ins, names)
    else:
        raise LLMError(f"a synthesised op with a {type(node).__name__} node cannot be spliced")


def _term(expr: Expr, ins: dict, names: dict[str, str]) -> B.Term:
    match expr:
        case Load(tensor, index) if tensor in ins:
            if any(isinstance(t, Indirect) for t in index):
                base = ins[tensor].base
                if base is None:
                    raise LLMError("a data-dependent load of a viewed op input cannot be spliced")
                return (((), Load(base, tuple(_indirect(t, ins, names) for t in index))),)
            return ins[tensor].at(tuple(index))
        case Load(tensor, index):
            return (((), Load(names[tensor], tuple(_indirect(t, ins, names) for t in index))),)
        case Call(op, args):
            return B.call(op, *(_term(a, ins, names) for a in args))
        case Cast(dtype, arg):
            return B.cast(dtype, _term(arg, ins, names))
        case Const(value):
            return B.const(value)
        case Index(e):
            return B.index_value(e)
    raise AssertionError(expr)


def _indirect(term: Any, ins: dict, names: dict[str, str]) -> Any:
    if not isinstance(term, Indirect):
        return term
    alts = _term(term.value, ins, names)
    if len(alts) != 1 or alts[0][0]:
        raise LLMError("a data-dependent index read through a piecewise view cannot be spliced")
    return Indirect(alts[0][1], term.offset)


def _flatten(x: Any) -> list:
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _flatten(item)]
    return [x]

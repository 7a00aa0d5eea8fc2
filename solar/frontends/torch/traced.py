"""A traced PyTorch program (`Traced`: the core-ATen export and what the analysis must know about
how it was traced) and the trace request's choice of route (`TraceOptions`, `Decomposition`) with
the route a trace took (`Route`), which the report states as an assumption."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import torch

from solar.frontends.torch.datasizes import size_notes
from solar.frontends.torch.known import KnownStructure
from solar.frontends.torch.lowerings import op_notes


class Decomposition(Enum):
    """How torch.export's training IR becomes the core-ATen graph that is lowered."""

    DIRECT = "direct"  # rebuilt node by node (solar.frontends.torch.direct); the re-trace where it refuses
    RETRACE = "retrace"  # always ExportedProgram.run_decompositions (the reference the direct path matches)


@dataclass(frozen=True, slots=True)
class TraceOptions:
    """The route of a trace request. `decomposition`: see Decomposition. `share_layers`: a model
    with a stack of identical layers is traced with a few of them and stitched
    (solar.frontends.torch.share; read by share's entry points, which trace whole without it)."""

    decomposition: Decomposition = Decomposition.DIRECT
    share_layers: bool = True


DEFAULT_OPTIONS = TraceOptions()


@dataclass(frozen=True, slots=True)
class Route:
    """The decomposition a trace took, and why the direct path refused where it was asked for."""

    decomposition: Decomposition
    refused: str | None = None

    def describe(self) -> str:
        if self.decomposition is Decomposition.DIRECT:
            return "route: direct rebuild of the decomposed graph"
        why = f"direct path refused: {self.refused}" if self.refused is not None else "requested"
        return f"route: run_decompositions re-trace ({why})"


@dataclass(frozen=True)
class Traced:
    """A core-ATen ExportedProgram plus what the analysis must know about how it was traced:
    the framework flags, the module mode it was traced in (None: as constructed), the known
    structure of its inputs and the route its decomposition took (None: a training step's joint
    graph, decomposed by solar.frontends.torch.train)."""

    exported: torch.export.ExportedProgram
    name: str
    source_file: str | None
    flags: tuple[tuple[str, bool], ...]
    mode: str | None = None
    structure: tuple[KnownStructure, ...] = ()
    eager: tuple = ()  # the calls before decomposition (solar.frontends.torch.eager.PreCall)
    route: Route | None = None
    mode_layers: tuple[tuple[str, bool], ...] = ()  # mode_layers(model) as traced

    def notices(self) -> list[str]:
        """Lines the report shows under its bounds: the mode a module with train/eval-dependent
        layers ran in when no mode was asked for, and how to choose one."""
        if self.mode is not None or not self.mode_layers:
            return []
        train, infer = (", ".join(n for n, t in self.mode_layers if t is on) for on in (True, False))
        if not infer:
            return [f"mode: traced in training mode, as constructed (it changes {train}); for "
                    + "inference pass --mode eval"]
        if not train:
            return [f"mode: traced in eval mode, as constructed (it changes {infer}); for a "
                    + "training-mode forward pass --mode train"]
        return [f"mode: traced as constructed: {train} in training mode, {infer} in eval mode; "
                + "pass --mode eval or --mode train to put every layer in one mode"]

    def notes(self) -> list[str]:
        """Assumption lines for the report: the module mode, the structure used, how the program's
        data-dependent and random ops are priced and the route of the trace."""
        mode = {
            None: "module mode: as constructed (training mode unless the file says otherwise), no gradients",
            "train": "module mode: train (model.train()), no gradients",
            "eval": "module mode: eval (model.eval()), no gradients",
        }[self.mode]
        route = [self.route.describe()] if self.route is not None else []
        return ([mode] + [f"structure: {s.describe()}" for s in self.structure] + op_notes(self.exported.graph)
                + size_notes(self.exported, self.source_file) + route)


# Layers whose forward depends on Module.training, each with the condition under which it does:
# normalisation with running statistics (batch statistics in training, running ones in eval),
# dropout with p > 0 (dropped in training only).
MODE_DEPENDENT: tuple[tuple[type, Callable[[torch.nn.Module], bool]], ...] = (
    (torch.nn.modules.batchnorm._NormBase, lambda m: bool(m.track_running_stats)),
    (torch.nn.modules.dropout._DropoutNd, lambda m: m.p > 0),
    (torch.nn.MultiheadAttention, lambda m: m.dropout > 0),
    (torch.nn.RNNBase, lambda m: m.dropout > 0 and m.num_layers > 1),
)


def mode_layers(model: torch.nn.Module) -> tuple[tuple[str, bool], ...]:
    """The kinds of layer in `model` whose behaviour depends on train/eval mode, each with the mode
    it is in (True: training), once per (class name, mode), in module order."""
    found = (
        (type(m).__name__, m.training)
        for m in model.modules()
        if any(isinstance(m, kind) and depends(m) for kind, depends in MODE_DEPENDENT)
    )
    return tuple(dict.fromkeys(found))

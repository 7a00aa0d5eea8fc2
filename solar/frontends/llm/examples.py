"""Worked examples for the prompt: each program of example_programs lowered by solar's own torch
frontend at small sizes, its sizes turned into symbols, and printed; generated once per solar
version and IR grammar and cached on disk. `pick` chooses the ones most similar to a source."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from solar.frontends.llm.prompt import Example, grammar_text
from solar.frontends.llm.symbolic import symbolise
from solar.ir.nodes import Stmt
from solar.ir.rewrite import rewrite
from solar.version import __version__


def _fingerprint() -> str:
    from solar.frontends.llm import example_programs  # imports torch

    text = inspect.getsource(example_programs) + grammar_text() + __version__
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build() -> list[Example]:
    """Lower every example program (small sizes, real tensors of a few elements)."""
    import torch

    from solar.frontends.llm.example_programs import EXAMPLES, NOTES  # imports torch
    from solar.frontends.torch import lower_module

    out = []
    for cls, init, shapes, names in EXAMPLES:
        gen = torch.Generator().manual_seed(0)
        inputs = tuple(
            torch.randint(0, 3, s, generator=gen, dtype=d)
            if not d.is_floating_point
            else torch.randn(s, generator=gen, dtype=d)
            for s, d in shapes
        )
        program, _ = lower_module(cls(*init), inputs, cls.__name__)
        program = symbolise(program, names)
        program = rewrite(program, _no_origin)
        shown = ", ".join(f"{d}{list(s)}".replace("torch.", "") for s, d in shapes)
        source = inspect.getsource(cls) + f"# inputs: {shown}; constructor arguments: {init}\n"
        if cls.__name__ in NOTES:
            source += f"# note on the IR: {NOTES[cls.__name__]}\n"
        out.append(Example(cls.__name__, source, str(program)))
    return out


def _no_origin(node: Any) -> Any:
    """Statements shown without their `@op` lines (solar adds origins to what the model writes)."""
    return (
        replace(node, origin=None) if isinstance(node, Stmt) and node.origin is not None else None
    )


def load(cache_dir: Path) -> list[Example]:
    """The examples, from the cache when present (built and stored otherwise)."""
    path = cache_dir / f"examples-{_fingerprint()}.json"
    if path.is_file():
        try:
            return [Example(**e) for e in json.loads(path.read_text())]
        except (ValueError, TypeError):
            pass  # a damaged cache file is rebuilt
    examples = build()
    cache_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([e.__dict__ for e in examples], indent=1))
    return examples


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMON = {
    "self",
    "torch",
    "nn",
    "def",
    "return",
    "x",
    "import",
    "class",
    "forward",
    "Tensor",
    "super",
    "__init__",
    "Module",
    "int",
    "float",
}


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - {w.lower() for w in _COMMON}


def pick(examples: list[Example], source: str, k: int = 3) -> list[Example]:
    """The k examples whose source shares the most words with `source` (Jaccard), most similar
    last (nearest the question)."""
    words = _words(source)

    def score(e: Example) -> float:
        w = _words(e.source)
        return len(words & w) / max(1, len(words | w))

    ranked = sorted(examples, key=lambda e: (score(e), e.name), reverse=True)[:k]
    return list(reversed(ranked))

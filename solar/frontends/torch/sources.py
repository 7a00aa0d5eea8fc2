"""The user's source line of a traced node (`file.py:LINE: code`), read from the stack trace export
records on it."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import torch

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)')


def source_line(node: torch.fx.Node, source_file: str | None) -> str:
    """`file.py:LINE: code` of the user's frame that produced the node (last frame in the user's
    file, else the last frame outside torch)."""
    trace = node.meta.get("stack_trace") or ""
    frames = _FRAME.findall(trace)
    if not frames:
        return ""
    pick = None
    user = _as_path(source_file) if source_file else None
    for f in frames:
        if user is not None and _resolved(f[0]) == user:
            pick = f
    if pick is None:
        outside = [f for f in frames if "/torch/" not in f[0] and "/site-packages/" not in f[0]]
        pick = outside[-1] if outside else frames[-1]
    code = pick[3].strip().replace('"', "'")  # the IR text quotes sources with "
    return f"{_as_path(pick[0]).name}:{pick[1]}: {code}"


@functools.lru_cache(maxsize=1024)
def _as_path(path: str) -> Path:
    """Path(path), once per file name."""
    return Path(path)


@functools.lru_cache(maxsize=1024)
def _resolved(path: str) -> Path:
    """Path(path).resolve(), once per file name (every node's stack trace names the same few)."""
    return Path(path).resolve()

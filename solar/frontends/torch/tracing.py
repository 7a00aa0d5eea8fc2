"""What solar changes in torch while torch.export traces a model (solar.frontends.torch.loader):
cheaper, never different.

- `modes_in_forward`: solar's torch-function modes (device moves, redirects to custom ops) are
  entered inside the model's forward() only. Entered around the whole export, they would also see
  every tensor-property read of export's own bookkeeping (faking each parameter reads ~200 tensor
  properties, each through every Python torch-function mode): EfficientNet-B0 39,042 mode calls
  against 4,685 from its forward.
- `cheap_stack_traces`: the stack trace export records on every node (`node.stack_trace`, where
  solar reads the user's source line) is built from the live frames, and only the frames torch's
  own filter keeps are formatted. torch symbolises every frame of the (deep) stack and reads each
  frame's source line before filtering (~70 frames, ~1 ms per node here). The text is torch's:
  the same frames through the same filter (`TracerBase._filter_traceback_frames`) and the same
  formatting (checked node for node in tests/frontends/test_tracing.py). Only the tracer mode
  export uses (stack traces of `forward` frames only) is changed; any other tracer records as
  torch does."""

from __future__ import annotations

import contextlib
import functools
import sys
import traceback
from types import CodeType
from typing import Any, Callable, ContextManager, Iterator, Sequence

import torch
import torch.fx.proxy
from torch.fx.proxy import TracerBase


@contextlib.contextmanager
def modes_in_forward(model: torch.nn.Module, modes: Callable[[], Sequence[ContextManager]]) -> Iterator[None]:
    """`modes()` entered around each call of the model's forward() (its own `forward` attribute,
    restored after)."""
    forward = model.forward
    own = "forward" in vars(model)

    @functools.wraps(forward)
    def with_modes(*args: Any, **kwargs: Any) -> Any:
        with contextlib.ExitStack() as stack:
            for mode in modes():
                stack.enter_context(mode)
            return forward(*args, **kwargs)

    model.forward = with_modes
    try:
        yield
    finally:
        if own:
            model.forward = forward
        else:
            del model.forward


_TORCH_CREATE_NODE = TracerBase.create_node
_TORCH_FILTER = TracerBase._filter_traceback_frames


def _create_node(self: TracerBase, *args: Any, **kwargs: Any) -> torch.fx.Node:
    if not (self.record_stack_traces and self._record_forward_stack_traces_only):
        return _TORCH_CREATE_NODE(self, *args, **kwargs)
    self.record_stack_traces = False
    try:
        node = _TORCH_CREATE_NODE(self, *args, **kwargs)
    finally:
        self.record_stack_traces = True
    if not node.stack_trace:
        text = stack_trace(self)
        if text:
            node.stack_trace = text
    return node


def _forward_frame(code: CodeType) -> bool:
    """Whether torch's own filter (TracerBase._filter_traceback_frames, forward frames only) keeps
    a frame of this code: a `forward`, torch/__init__.py, or a registered anchor."""
    return (
        code.co_name == "forward"
        or code.co_filename.endswith("torch/__init__.py")
        or (code.co_filename, code.co_name) in torch.fx.proxy._STACK_TRACE_ANCHORS
    )


def live_frames(keep: Callable[[CodeType], bool]) -> list[traceback.FrameSummary]:
    """The live frames whose code `keep` accepts, outermost first, summarised without reading
    their source lines (formatting reads them)."""
    frames = []
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if keep(code):
            frames.append(traceback.FrameSummary(code.co_filename, f.f_lineno, code.co_name, lookup_line=False))
        f = f.f_back
    return frames[::-1]


def stack_trace(tracer: TracerBase) -> str:
    """The stack trace torch's TracerBase.create_node records for a node made now, from the live
    frames (outermost first, source lines read only for the frames the filter keeps). Under
    torch's own filter, only the frames it keeps are summarised before it runs (on those alone)."""
    own_filter = type(tracer)._filter_traceback_frames is _TORCH_FILTER
    frames = live_frames(_forward_frame if own_filter else lambda code: True)
    if not frames:
        return ""
    kept = tracer._filter_traceback_frames(traceback.StackSummary.from_list(frames))
    return "".join(kept.format()).strip() if kept else ""


@contextlib.contextmanager
def cheap_stack_traces() -> Iterator[None]:
    """TracerBase.create_node records stack traces as `stack_trace` builds them while the body
    runs (the class attribute is restored however it ends)."""
    TracerBase.create_node = _create_node  # type: ignore[method-assign]
    try:
        yield
    finally:
        TracerBase.create_node = _TORCH_CREATE_NODE  # type: ignore[method-assign]

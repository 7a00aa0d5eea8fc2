"""State held by plain Python objects (solar.frontends.torch.held, fake.fakeify_program): tensors in
namespaces, dataclasses, slots, containers and cycles, kept by the model or passed to forward(),
are traced as state and read from DRAM; every transformers cache class in a decode step
(tests/fixtures/caches/decode.py), its KV-cache bytes exact against the cache shapes; what cannot be
held is one line naming the attribute path."""

from __future__ import annotations

import collections
import dataclasses
import re
import types
from pathlib import Path

import pytest
import torch

import solar
from solar.api import analyze_loaded, load
from solar.errors import ModelFileError
from solar.frontends.torch import check
from solar.frontends.torch.fake import held_tensors

N = 1 << 10  # elements of x and of the held tensor (f32)
X = 4 * N
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "caches" / "decode.py"


@dataclasses.dataclass(frozen=True)
class Frozen:
    t: torch.Tensor


class Slotted:
    __slots__ = ("__t", "unset")

    def __init__(self, t):
        self.__t = t

    def get(self):
        return self.__t


class Guarded:
    """A property that must not be evaluated while the state is walked."""

    def __init__(self, t):
        self._t = t

    @property
    def t(self):
        return self._t

    @property
    def boom(self):
        raise RuntimeError("a property was evaluated")


Pair = collections.namedtuple("Pair", "first second")


def _cycle(t):
    a, b = types.SimpleNamespace(), types.SimpleNamespace(t=t)
    a.other, b.other = b, a
    return a


# name: (the state for a tensor t, how forward reads t from it)
HELD = {
    "namespace": (lambda t: types.SimpleNamespace(t=t), lambda s: s.t),
    "frozen dataclass": (Frozen, lambda s: s.t),
    "private slot": (Slotted, lambda s: s.get()),
    "property not evaluated": (Guarded, lambda s: s.t),
    "dict, list, tuple": (lambda t: types.SimpleNamespace(d={"k": [(0, t)]}), lambda s: s.d["k"][0][1]),
    "namedtuple": (lambda t: types.SimpleNamespace(p=Pair(1, t)), lambda s: s.p.second),
    "cycle": (_cycle, lambda s: s.other.t),
    "two places": (lambda t: types.SimpleNamespace(a=t, b=[t]), lambda s: s.a + s.b[0] - s.a),
}


class Holding(torch.nn.Module):
    def __init__(self, state, read):
        super().__init__()
        self.state, self.read = state, read

    def forward(self, x):
        return x + self.read(self.state)


class Passing(torch.nn.Module):
    def __init__(self, read):
        super().__init__()
        self.read = read

    def forward(self, x, state):
        return x + self.read(state)


@pytest.mark.parametrize("placement", ["attribute", "argument"])
@pytest.mark.parametrize("name", sorted(HELD))
def test_held_tensor_is_state_read_once(name, placement):
    make, read = HELD[name]
    t = torch.randn(N)
    state = make(t)
    if placement == "attribute":
        model, inputs = Holding(state, read), [torch.randn(N)]
    else:
        model, inputs = Passing(read), [torch.randn(N), state]
    before = held_tensors(model, inputs)
    report = solar.analyze(model, inputs, arch="H200-SXM", writeback=False)
    adds = 2 if name == "two places" else 0  # s.a + s.b[0] - s.a: two more ops, reading s.a again fused
    assert report.totals.dram_bytes == 3 * X  # x, the held tensor, the output
    assert report.totals.flops == (1 + adds) * N
    after = held_tensors(model, inputs)  # the model's own state is untouched
    assert list(after) == list(before) and all(after[k] is v for k, v in before.items())
    assert [v is t for v in before.values()] == [True]


def test_unregistered_module_in_a_namespace_is_held():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tools = types.SimpleNamespace(proj=torch.nn.Linear(64, 64))

        def forward(self, x):
            return self.tools.proj(x)

    report = solar.analyze(Model(), [torch.randn(8, 64)], arch="H200-SXM", writeback=False)
    assert report.totals.dram_bytes == 4 * (64 * 64 + 64 + 2 * 8 * 64)


def test_held_buffer_updated_in_place_is_verified():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.state = types.SimpleNamespace(total=torch.zeros(N))

        def forward(self, x):
            self.state.total.add_(x)
            return self.state.total * 2

    result = check.check_module(Model(), [torch.randn(N)])
    assert [c.ok for c in result.checks] == [True]


def test_held_tensors_are_named_by_their_path():
    model = Holding(types.SimpleNamespace(d={"k": [torch.randn(2)]}), lambda s: s.d["k"][0])
    assert list(held_tensors(model)) == ["state_d_k_0"]
    assert list(held_tensors(Passing(lambda s: s.t), [torch.randn(2), Frozen(torch.randn(2))])) == ["args_1_t"]


class Uncopyable:
    def __init__(self, t):
        self.t = t

    def __deepcopy__(self, memo):
        raise TypeError("no copies")


def test_an_object_that_cannot_be_copied_is_named():
    model = Holding(types.SimpleNamespace(inner=[Uncopyable(torch.randn(N))]), lambda s: s.inner[0].t)
    with pytest.raises(ModelFileError, match=r"model\.state\.inner\[0\] cannot be copied for tracing \(TypeError: no copies\)"):
        solar.analyze(model, [torch.randn(N)], arch="H200-SXM")


# ---- transformers caches in a decode step ---------------------------------------------------

pytest.importorskip("transformers")
KV_HEADS, HEAD_DIM, LAYERS = 2, 16, 2  # as decode.py's SIZES
SHORT, LONG = 16, 32  # cached tokens; the sliding window (decode.WINDOW) is 8


def _kv_bytes(layers: int, element_bytes: int) -> int:
    """K and V of `layers` full-attention layers, LONG - SHORT more rows each."""
    return layers * 2 * KV_HEADS * (LONG - SHORT) * HEAD_DIM * element_bytes


# cache (decode.CACHES): the DRAM bytes LONG cached tokens read beyond SHORT ones. A sliding layer
# holds the window (8 < SHORT rows) at either length; the fp8 cache stores 1 byte an element.
CACHES = {
    "dynamic": _kv_bytes(LAYERS, 4),
    "static": _kv_bytes(LAYERS, 4),
    "dynamic_sliding": 0,
    "sliding_window": 0,
    "dynamic_hybrid": _kv_bytes(1, 4),
    "static_hybrid": _kv_bytes(1, 4),
    "quantized_fp8": _kv_bytes(LAYERS, 1),
}


def _decode_file(tmp_path: Path, cache: str, placement: str, context: int) -> Path:
    text = FIXTURE.read_text()
    for name, value in (("CACHE", f'"{cache}"'), ("PLACEMENT", f'"{placement}"'), ("CONTEXT", str(context))):
        text = re.sub(rf"^{name} = .*$", f"{name} = {value}", text, count=1, flags=re.MULTILINE)
    path = tmp_path / f"{cache}_{placement}_{context}.py"
    path.write_text(text)
    return path


def _dram_bytes(path: Path) -> int:
    return int(analyze_loaded(load(str(path)), "H100-SXM").totals.dram_bytes)


@pytest.mark.slow
@pytest.mark.parametrize("cache", sorted(CACHES))
def test_cache_decode_reads_the_cache(tmp_path, cache):
    """Held as an attribute, the longer context reads exactly the extra K/V rows; passed to
    forward() the step costs the same as held."""
    short = _dram_bytes(_decode_file(tmp_path, cache, "attribute", SHORT))
    long = _dram_bytes(_decode_file(tmp_path, cache, "attribute", LONG))
    assert long - short == CACHES[cache]
    assert _dram_bytes(_decode_file(tmp_path, cache, "argument", SHORT)) == short


@pytest.mark.parametrize("placement, path", [("attribute", r"model\.cache"), ("argument", r"args\[1\]")])
@pytest.mark.parametrize("cache", ["offloaded_dynamic", "offloaded_static"])
def test_offloaded_cache_is_refused_by_name(tmp_path, cache, placement, path):
    with pytest.raises(ModelFileError, match=rf": {path} is a transformers cache with offloading=True \(\w+Cache\): .*offloading=False"):
        load(str(_decode_file(tmp_path, cache, placement, SHORT)))


@pytest.mark.slow
@pytest.mark.parametrize("cache, placement", [("static", "attribute"), ("dynamic", "argument")])
def test_cache_decode_verifies(tmp_path, cache, placement):
    """`solar verify`: the IR of the step, fed the cache's own tensors, computes the model's logits
    and leaves the static cache as the model does."""
    result = check.check_file(_decode_file(tmp_path, cache, placement, SHORT))
    assert [(c.mode, c.ok) for c in result.checks] == [("full", True)]

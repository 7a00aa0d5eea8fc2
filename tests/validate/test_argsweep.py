"""The argument-class sweep (solar.validate.argsweep) on the CPU: its rows carry the classes the
frontend reads, and the class floors are the least member call of each class, minus an empty call's,
taken where enough sweeps have members."""

from __future__ import annotations

import pytest
import torch

from solar.validate.argsweep import CLASSES, SWEPT_OP, above, cases, class_floors, sweep

CONV3 = "cin>=64 dense float32 kernel3x3 nchw undilated"
BN_TRAIN = "affine float32 rank4 stats train"


def test_every_calibrated_class_has_swept_members():
    """Each class of CLASSES is the tokens of at least one swept case (a class no case reaches could
    never be calibrated), and every swept op names its ATen op."""
    swept = {(SWEPT_OP.get(op), frozenset(tokens)) for (op, _), (_, tokens, _) in cases(torch, "meta").items()}
    for op, classes in CLASSES.items():
        for cls in classes:
            assert any(o == op and set(cls.split()) <= tokens for o, tokens in swept), (op, cls)


def test_a_cpu_sweep_gives_rows_with_classes_and_floors():
    rows = sweep(torch, "cpu", only=["conv2d", "batch_norm"], sizes={"c64": (1, 64, 4)}, dtypes=("float32",))
    assert len(rows) == 15 and all("error" not in r and r["host_us"] > 0 and r["empty_us"] >= 0 for r in rows)
    by_case = {r["case"]: r for r in rows}
    assert by_case["float32 c64 3x3"]["features"] == "cin>=16 cin>=64 dense float32 kernel3x3 nchw undilated"
    assert by_case["float32 c64 3x3 no_tf32"]["features"] == by_case["float32 c64 3x3"]["features"]
    assert by_case["float32 c64 train"]["features"] == BN_TRAIN
    floors = class_floors([rows])
    members = [r["host_us"] - r["empty_us"] for r in rows if set(CONV3.split()) <= set(r["features"].split())]
    assert len(members) == 7  # 3x3 and its bias case under each of three cuDNN modes, and the stride-2 widening
    assert floors["aten.conv2d.default"][CONV3] == pytest.approx(min(members) * 1e-6)
    assert "cin>=16 dense half kernel3x3 nchw undilated" not in floors["aten.conv2d.default"]  # no half case swept


def test_concatenations_are_swept_with_their_input_counts():
    """cat is swept (2, 4, 8 and 32 four-dimensional inputs, 8 and 32 matrices) and its rows carry the
    class the frontend reads (tests/frontends/test_argclass.py)."""
    rows = sweep(torch, "cpu", only=["cat"], sizes={"tiny": (2, 8, 8)}, dtypes=("float16",))
    assert {r["case"]: r["features"] for r in rows} == {
        "float16 tiny rank4 x2": "half rank4", "float16 tiny rank4 x4": "half inputs>=4 rank4",
        "float16 tiny rank4 x8": "half inputs>=4 inputs>=8 rank4",
        "float16 tiny rank4 x32": "half inputs>=32 inputs>=4 inputs>=8 rank4",
        "float16 tiny rank2 x8": "half inputs>=4 inputs>=8 rank2",
        "float16 tiny rank2 x32": "half inputs>=32 inputs>=4 inputs>=8 rank2"}
    assert all(r["host_us"] > 0 for r in rows)


@pytest.mark.parametrize("sweeps, min_sweeps, expected", [
    ([[{"op": "batch_norm", "features": BN_TRAIN, "host_us": 20.0, "empty_us": 1.0}],
      [{"op": "batch_norm", "features": f"{BN_TRAIN} extra", "host_us": 15.0}]], 2, 14.5),  # 15 less the fallback 0.5
    ([[{"op": "batch_norm", "features": BN_TRAIN, "host_us": 20.0, "empty_us": 1.0}], []], 2, None),  # one sweep only
    ([[{"op": "batch_norm", "features": "affine eval float32 rank4 stats", "host_us": 5.0}]], 1, None),  # not a member
    ([[{"op": "batch_norm", "features": BN_TRAIN, "error": "refused"}]], 1, None),  # a refused case is no member
])
def test_class_floors(sweeps, min_sweeps, expected):
    got = class_floors(sweeps, empty_seconds=0.5e-6, min_sweeps=min_sweeps).get("aten.batch_norm.default", {}).get(BN_TRAIN)
    assert got == (None if expected is None else pytest.approx(expected * 1e-6))


def test_above_keeps_classes_that_raise_their_op():
    classes = {"aten.conv2d.default": {"a": 5.0, "b": 9.0}, "aten.batch_norm.default": {"c": 2.0}}
    assert above(classes, {"aten.conv2d.default": 6.0}, kernel=3.0) == {"aten.conv2d.default": {"b": 9.0}}

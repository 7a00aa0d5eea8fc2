"""Pipeline bounds: exact bytes of the hidden states each stage's ranks receive and send (over
their links and their node's NICs), the placement of a stage's collectives, and the schedule's
bound with its bubble, and the link bandwidth that schedule needs for a target time."""

from __future__ import annotations

import pytest

from solar.backends.pipeline import least_rate, placed, rank_of, schedule, transfer_bounds
from solar.frontends.torch.pp import stage_layers
from solar.hardware.systems import get_system
from solar.ir.collectives import Collective, Kind

S = 2 * 512 * 8192 * 2  # micro-batch 2 x 512 tokens x hidden 8192, fp16


@pytest.mark.parametrize("steps,m,want", [
    ((1.0, 1.0, 1.0, 1.0), 1, 4.0),
    ((1.0, 1.0, 1.0, 1.0), 8, 11.0),  # (M + P - 1) equal steps
    ((1.0, 3.0, 1.0), 4, 14.0),  # 1 + 3 x 4 + 1: fill, the slowest stage's M steps, drain
    ((2.0,), 5, 10.0),
])
def test_schedule(steps, m, want):
    assert schedule(steps, m) == want


@pytest.mark.parametrize("layers,stages,want", [
    (80, 4, (20, 20, 20, 20)), (32, 3, (11, 11, 10)), (2, 2, (1, 1)), (5, 1, (5,)),
])
def test_stage_layers(layers, stages, want):
    assert stage_layers(layers, stages) == want


# (system, nodes, tp, pp, dp, stage) -> {rank: (gpu bytes, node NIC bytes)}
TRANSFERS = [
    # one node: every rank of a later stage receives S; a first stage's ranks send S / tp each
    ("8xH100-SXM", 1, 2, 4, 1, 0, {0: (S / 2, 0), 1: (S / 2, 0)}),
    ("8xH100-SXM", 1, 2, 4, 1, 1, {2: (S, 0), 3: (S, 0)}),
    ("8xH100-SXM", 1, 2, 4, 1, 3, {6: (S, 0), 7: (S, 0)}),
    # two nodes, stage 1 on node 0 and stage 2 on node 1: node 1 takes in S, node 0 sends S out
    ("8xH100-SXM", 2, 4, 4, 1, 1, {4: (S, S), 5: (S, S), 6: (S, S), 7: (S, S)}),
    ("8xH100-SXM", 2, 4, 4, 1, 2, {8: (S, S), 9: (S, S), 10: (S, S), 11: (S, S)}),
    ("8xH100-SXM", 2, 4, 4, 1, 0, {0: (S / 4, 0), 1: (S / 4, 0), 2: (S / 4, 0), 3: (S / 4, 0)}),
    # one stage per node (tp 8): each replica's boundary crosses nodes, each node takes in its own S
    ("8xH100-SXM", 4, 8, 2, 2, 1, {r: (S, S) for r in (*range(8, 16), *range(24, 32))}),
    # tp 2 x pp 2 x dp 4 on 2 nodes of 4: replicas 0, 1 on node 0, 2, 3 on node 1; nothing crosses
    ("8xA100-SXM", 2, 2, 2, 4, 1, {r: (S, 0) for r in (2, 3, 6, 7, 10, 11, 14, 15)}),
    # tp 1 x pp 16 over 2 nodes: stage 8 on node 1 receives from stage 7 on node 0
    ("8xA100-SXM", 2, 1, 16, 1, 8, {8: (S, S)}),
    ("8xA100-SXM", 2, 1, 16, 1, 7, {7: (S, S)}),
    ("8xA100-SXM", 2, 1, 16, 1, 9, {9: (S, 0)}),
    ("8xA100-SXM", 2, 1, 16, 1, 15, {15: (S, 0)}),
]


@pytest.mark.parametrize("system,nodes,tp,pp,dp,stage,want", TRANSFERS)
def test_transfer_bytes(system, nodes, tp, pp, dp, stage, want):
    bounds = transfer_bounds(stage, pp, tp, dp, S, get_system(system, nodes))
    assert {r: (b.gpu_bytes, b.node_bytes) for r, b in bounds.items()} == want
    assert {b.kind for b in bounds.values()} == {Kind.SEND_RECV}


def test_transfer_on_nvlink_takes_bytes_over_the_gpu_rate():
    system = get_system("8xH100-SXM")
    (b,) = [b for r, b in transfer_bounds(1, 2, 4, 1, S, system).items() if r == 4]
    up, out = system.scale_up, system.scale_out
    rate = up.bandwidth_bytes_per_s_per_direction.value + out.bandwidth_bytes_per_s_per_direction.value
    assert b.gpu_seconds == S / rate  # NVLink and the NIC together (the bound's GPU rate)
    assert b.seconds == b.gpu_seconds + up.latency_seconds.value


@pytest.mark.parametrize("d,s,t,pp,tp,want", [(0, 0, 0, 4, 2, 0), (0, 3, 1, 4, 2, 7), (1, 2, 3, 2, 4, 8 + 8 + 3)])
def test_rank_of(d, s, t, pp, tp, want):
    assert rank_of(d, s, t, pp, tp) == want


def test_placed_moves_a_stage_collective_onto_its_ranks():
    c = Collective(Kind.ALL_REDUCE, "o", "a", ((0, 1), (2, 3)))  # tp 2 x dp 2, as traced
    assert placed(c, 1, 4, 2).groups == ((2, 3), (10, 11))


@pytest.mark.parametrize("fixed,amount,m,target,want", [
    ((1.0, 2.0), (4.0, 0.0), 1, 5.0, 4 / 3),  # max(1, 4x) + 2 = 5 at x = 3/4
    ((1.0, 2.0), (4.0, 0.0), 3, 10.0, 1.5),  # 4x + 2 + 2 x 4x = 10 at x = 2/3 (past 4x = 2)
    ((1.0, 2.0), (4.0, 0.0), 3, 8.0, 2.0),  # exactly at the piece where 4x meets the other stage's 2
    ((0.0, 0.0), (1.0, 2.0), 2, 10.0, 0.5),  # x + 2x + 2x = 10 at x = 2
    ((1.0, 1.0), (0.0, 0.0), 4, 5.0, 0.0),  # nothing moves: no bandwidth needed
    ((3.0,), (1.0,), 1, 2.0, None),  # the fixed term alone exceeds the target
])
def test_least_rate_solves_the_schedule_exactly(fixed, amount, m, target, want):
    got = least_rate(fixed, amount, m, target)
    assert got == (None if want is None else pytest.approx(want, rel=1e-12))
    if want:
        assert schedule([max(f, a / got) for f, a in zip(fixed, amount)], m) == pytest.approx(target, rel=1e-12)

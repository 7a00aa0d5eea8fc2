"""Collective bounds: exact bytes per GPU and per node against hand counts and against the traffic
factors nccl-tests uses for bus bandwidth; a sharded program's levels take communication as a third
resource (max at fused, sum at unfused), and its bound is the slowest rank's."""

from __future__ import annotations

from fractions import Fraction

import pytest

from solar.backends.bounds import analyze
from solar.backends.collectives import collective_bounds, gpu_factor, link_need
from solar.errors import UsageError
from solar.hardware.systems import get_system
from solar.ir.collectives import Collective, Kind, Sharded, full_bytes, local_part
from solar.ir.dtypes import DType
from solar.ir.nodes import Program, Role, TensorDecl
from solar.multigpu import analyze_sharded

# nccl-tests (PERFORMANCE.md): busbw = algbw x factor, the bytes each rank moves per direction over
# S with a ring (no in-network reduction): all-reduce 2(n-1)/n; all-gather, reduce-scatter and
# all-to-all (n-1)/n; send/recv 1.
NCCL_BUSBW = {
    Kind.ALL_REDUCE: lambda n: Fraction(2 * (n - 1), n),
    Kind.ALL_GATHER: lambda n: Fraction(n - 1, n),
    Kind.REDUCE_SCATTER: lambda n: Fraction(n - 1, n),
    Kind.ALL_TO_ALL: lambda n: Fraction(n - 1, n),
    Kind.SEND_RECV: lambda n: Fraction(1),
}


@pytest.mark.parametrize("kind", list(Kind))
@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_factors_match_nccl_tests_bus_bandwidth(kind, n):
    assert gpu_factor(kind, n, in_network_reduction=False) == NCCL_BUSBW[kind](n)


IN_SWITCH = [  # (kind, n, factor with a reducing switch)
    (Kind.ALL_REDUCE, 8, Fraction(1)),
    (Kind.ALL_REDUCE, 2, Fraction(1)),
    (Kind.ALL_GATHER, 8, Fraction(7, 8)),
    (Kind.REDUCE_SCATTER, 8, Fraction(7, 8)),
    (Kind.ALL_REDUCE, 1, Fraction(0)),
]


@pytest.mark.parametrize("kind,n,factor", IN_SWITCH)
def test_factors_with_in_switch_reduction(kind, n, factor):
    assert gpu_factor(kind, n, in_network_reduction=True) == factor


def _program(kind: Kind, rows: int, n: int, cols: int = 1024) -> tuple[Program, Collective]:
    c = Collective(kind, "y", "x", (tuple(range(n)),))
    out_rows = rows * n if kind is Kind.ALL_GATHER else rows // n if kind is Kind.REDUCE_SCATTER else rows
    tensors = (
        TensorDecl("x", (rows, cols), DType.BF16, Role.INPUT),
        TensorDecl("y", (out_rows, cols), DType.BF16, Role.OUTPUT),
    )
    return Program("p", tensors, (local_part(c, (rows, cols)),)), c


def _groups(world: int, size: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(range(g, g + size)) for g in range(0, world, size))


MiB = 1 << 20
HAND = [  # (system, nodes, kind, rows, group size, S, GPU bytes, node bytes, seconds)
    # 8xH100: NVLS all-reduce moves S per GPU; links 450 (NVLink) + 50 (NIC) GB/s per direction
    ("8xH100-SXM", 1, Kind.ALL_REDUCE, 4096, 8, 8 * MiB, 8 * MiB, 0, 8 * MiB / 500e9 + 0.5e-6),
    # 8xA100: no reducing switch, 2 x 7/8 x S; 300 + 25 GB/s
    ("8xA100-SXM", 1, Kind.ALL_REDUCE, 4096, 8, 8 * MiB, 14 * MiB, 0, 14 * MiB / 325e9 + 0.5e-6),
    # all-gather of 512 rows per rank: S = 8 x 1 MiB, 7/8 of it arrives
    ("8xH100-SXM", 1, Kind.ALL_GATHER, 512, 8, 8 * MiB, 7 * MiB, 0, 7 * MiB / 500e9 + 0.5e-6),
    ("8xB200", 1, Kind.REDUCE_SCATTER, 4096, 8, 8 * MiB, 7 * MiB, 0, 7 * MiB / 950e9 + 0.5e-6),
    ("8xB200", 1, Kind.ALL_TO_ALL, 4096, 8, 8 * MiB, 7 * MiB, 0, 7 * MiB / 950e9 + 0.5e-6),
    ("2xL4-PCIe", 1, Kind.SEND_RECV, 4096, 2, 8 * MiB, 8 * MiB, 0, 8 * MiB / 57e9 + 0.5e-6),  # PCIe + RoCE
    # 2 nodes, one group of 16: the node's 8 NICs (8 x 50 GB/s) carry S in (SHARP on the IB fabric)
    ("8xH100-SXM", 2, Kind.ALL_REDUCE, 4096, 16, 8 * MiB, 8 * MiB, 8 * MiB, 8 * MiB / 400e9 + 0.5e-6),
    # ... all-gather: the other node's half of S enters; a group of 8 within a node crosses nothing
    ("8xH100-SXM", 2, Kind.ALL_GATHER, 256, 16, 8 * MiB, 7.5 * MiB, 4 * MiB, 7.5 * MiB / 500e9 + 0.5e-6),
    ("8xH100-SXM", 2, Kind.ALL_GATHER, 512, 8, 8 * MiB, 7 * MiB, 0, 7 * MiB / 500e9 + 0.5e-6),
    # all-to-all over 16: each of 8 ranks gets 8 chunks of S/16 from the other node = 8 x 4 MiB
    ("8xA100-SXM", 2, Kind.ALL_TO_ALL, 4096, 16, 8 * MiB, 7.5 * MiB, 32 * MiB, 32 * MiB / 200e9 + 0.5e-6),
]


@pytest.mark.parametrize("system,nodes,kind,rows,size,s,gpu,node,seconds", HAND)
def test_hand_counts(system, nodes, kind, rows, size, s, gpu, node, seconds):
    spec = get_system(system, nodes)
    program, c = _program(kind, rows, size)
    c = Collective(kind, "y", "x", _groups(spec.world, size))
    b = collective_bounds(c, full_bytes(c, program), spec)[0]
    assert (full_bytes(c, program), b.gpu_bytes, b.node_bytes) == (s, gpu, node)
    assert b.seconds == pytest.approx(seconds, rel=1e-12)


def test_levels_take_communication_as_a_third_resource():
    system = get_system("8xA100-SXM")
    program, c = _program(Kind.ALL_REDUCE, 4096, 8)
    c = Collective(Kind.ALL_REDUCE, "y", "x", _groups(8, 8))
    rank = analyze_sharded(Sharded(program, (c,), 8), system)
    alone = analyze(program, system.gpu_spec)
    comm = 14 * MiB / 325e9 + 0.5e-6
    assert rank.comm_fused_seconds == pytest.approx(14 * MiB / 325e9)
    assert rank.comm_unfused_seconds == pytest.approx(comm)
    assert rank.fused_seconds == max(alone.fused.seconds, rank.comm_fused_seconds)
    # the local part's row (its copy kernel) and the collective's link time overlap: the larger counts
    (local,) = [op.seconds for op in alone.ops if op.op.startswith("collective ")]
    assert rank.unfused_seconds == pytest.approx(alone.unfused.seconds - local + max(local, comm))
    assert rank.unfused_seconds < alone.unfused.seconds + comm
    assert rank.comm_binds == "gpu links"


def test_the_slowest_rank_is_reported():
    # groups {0, 8}, {1, 9}, ...: every group spans both nodes, so every rank crosses the NICs
    system = get_system("8xH100-SXM", 2)
    program, _ = _program(Kind.ALL_REDUCE, 4096, 2)
    c = Collective(Kind.ALL_REDUCE, "y", "x", tuple((r, r + 8) for r in range(8)))
    rank = analyze_sharded(Sharded(program, (c,), 16), system)
    # 8 groups of 2 each put S through node 0's boundary: 8 x 8 MiB over 8 x 50 GB/s
    assert rank.collectives[0].node_bytes == 64 * MiB
    assert rank.comm_binds == "node NICs"


def test_too_many_ranks_is_one_line():
    program, c = _program(Kind.ALL_REDUCE, 64, 16)
    with pytest.raises(UsageError, match=r"16 ranks but 8xH100-SXM has 8 GPUs; pass --nodes"):
        analyze_sharded(Sharded(program, (c,), 16), get_system("8xH100-SXM"))


def test_link_need_inverts_the_communication_terms():
    system = get_system("8xA100-SXM", 2)
    program, _ = _program(Kind.ALL_REDUCE, 4096, 16)
    c = Collective(Kind.ALL_REDUCE, "y", "x", _groups(16, 16))
    rank = analyze_sharded(Sharded(program, (c,), 16), system)
    need = link_need(rank, system.per_node, 1e-3)
    # S = 8 MiB; no NVLS on A100, but the group spans nodes whose InfiniBand reduces in the network,
    # so reductions need not pass through GPUs: S per GPU; the node's 8 NICs carry S
    assert need.gpu_bytes_per_s == pytest.approx(8 * MiB / 1e-3)
    assert need.nic_bytes_per_s == pytest.approx(8 * MiB / (8 * 1e-3))
    assert need.blocked_by is None
    assert link_need(rank, system.per_node, 1e-9).blocked_by == "DRAM"

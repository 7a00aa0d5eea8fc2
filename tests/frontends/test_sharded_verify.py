"""`solar verify FILE --world-size N / --mesh AxB`: a sharded file's ranks run on the interpreter
against its single-device original; a wrong sharded file mismatches (exit 1), bad input is one
line (exit 2)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from solar.api import check_sharded
from solar.cli import main
from solar.frontends.ranks import shard, split_shape

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "sharded"
TP_MLP = str(FIXTURES / "tp_mlp.py")

SHARDS = [  # (split per dimension, mesh, rank, the block of a [4, 6] arange)
    (((0,), ()), (2,), 1, np.s_[2:4, :]),
    (((), (0,)), (3,), 2, np.s_[:, 4:6]),
    (((1,), ()), (2, 2), 3, np.s_[2:4, :]),  # rank 3 is (1, 1): axis 1 picks the second half
    (((0, 1), ()), (2, 2), 2, np.s_[2:3, :]),  # rows over both axes: (1, 0) is the third of four
    (((), ()), (4,), 3, np.s_[:, :]),
]


@pytest.mark.parametrize("split,mesh,rank,want", SHARDS)
def test_shard_cuts_the_rank_s_block(split, mesh, rank, want):
    full = np.arange(24).reshape(4, 6)
    np.testing.assert_array_equal(shard(full, split, mesh, rank), full[want])


def test_split_shape_refuses_an_uneven_split():
    assert split_shape((4, 6), ((0,), ()), (4,)) == (1, 6)
    assert split_shape((4, 6), ((), (0,)), (4,)) is None


PASS = [  # (file, world size, mesh, [(rank, output, shape)] of the checks)
    ("tp_mlp.py", 2, None, [(r, o, s) for r in range(2) for o, s in (("out0", (4, 6)), ("out1", (4, 4)))]),
    ("tp_mlp.py", 4, None, [(r, o, s) for r in range(4) for o, s in (("out0", (4, 6)), ("out1", (4, 2)))]),
    ("mesh_mlp.py", None, "2x2", [(r, "out0", (4, 6)) for r in range(4)]),
    ("dtensor_sp.py", 4, None, [(r, "out0", (2, 16)) for r in range(4)]),  # all-gather in, reduce-scatter out
    ("../../../examples/distributed/tp_mlp.py", 8, None, [(r, "out0", (8, 32)) for r in range(8)]),
    ("../../../examples/distributed/shard_map_mlp.py", None, None, [(r, "out0", (8, 32)) for r in range(8)]),
    ("../../../examples/distributed/shard_map_ulysses.py", 8, None, [(r, "out0", (4, 16, 4)) for r in range(8)]),
    ("../../../examples/distributed/dtensor_mlp.py", 8, None, [(r, "out0", (8, 32)) for r in range(8)]),
    ("../../../examples/distributed/dp_train_step.py", 4, None,
     [(r, o, s) for r in range(4) for o, s in (("out0", ()), ("out1", (16, 32)), ("out2", (32, 16)))]),
    ("../../../examples/distributed/pp_two_stage.py", 2, None, [(0, "out0", (4, 4, 16))]),  # the result is rank 0's
    # the experts cut by rank, every rank routing the same tokens: each rank's output is the original's
    ("../../../examples/distributed/moe_ep.py", 8, None, [(r, "out0", (32, 16)) for r in range(8)]),
    ("../../../examples/distributed/tp_decoder_layer.py", 8, None, [(r, "out0", (1, 4, 32)) for r in range(8)]),
]


@pytest.mark.parametrize("file,world,mesh,checks", PASS)
def test_ranks_reproduce_the_original(file, world, mesh, checks):
    result = check_sharded(str(FIXTURES / file), world, mesh)
    assert [(c.rank, c.what, c.shape) for c in result.checks] == checks
    assert result.bad == ()
    assert all(c.error <= c.tolerance for c in result.checks)


@pytest.mark.parametrize("file,edit,world,wrong", [
    # the partial sums max-reduced instead of added: out1 (before the reduction) still agrees
    ("tp_mlp.py", ('REDUCTION = "sum"', 'REDUCTION = "max"'), 2, {"out0"}),
    ("shard_map_wrong.py", None, None, {"out0"}),  # no psum
])
def test_a_wrong_sharded_file_mismatches(file, edit, world, wrong, capsys, tmp_path):
    if edit is not None:  # the fixture with one line made wrong, as a file of its own
        text = (FIXTURES / file).read_text()
        assert text.count(edit[0]) == 1
        (tmp_path / file).write_text(text.replace(*edit))
    file = str(tmp_path / file if edit else FIXTURES / file)
    result = check_sharded(file, world, None)
    assert {c.what for c in result.bad} == wrong
    assert {c.rank for c in result.bad} == {0, 1}
    assert all(c.error > 10 * c.tolerance for c in result.bad)
    argv = ["verify", file] + (["--world-size", str(world)] if world else ["--mesh", "2"])
    assert main(argv) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"{len(result.checks) - len(result.bad)} ok, {len(result.bad)} mismatched"
    assert sum("MISMATCH" in line for line in out) == len(result.bad)


def test_the_command_prints_one_line_per_check(capsys):
    assert main(["verify", TP_MLP, "--world-size", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "verify tp_mlp.py: 2 simulated ranks (mesh 2) vs the single-device original"
    assert [line.split(":")[0] for line in out[1:-1]] == ["rank 0 out0 [4, 6]", "rank 0 out1 [4, 4]",
                                                          "rank 1 out0 [4, 6]", "rank 1 out1 [4, 4]"]
    assert all(line.endswith(" ok") for line in out[1:-1])
    assert out[-1] == "4 ok, 0 mismatched"


NO_SHARDS = TP_MLP.replace("tp_mlp.py", "no_shards.py")

BAD = [  # (argv after `verify`, a file to write first (name, text), the one line on stderr)
    ([TP_MLP, "--world-size", "3"], None, r"up\.weight is \[2, 6\] on a rank but \[8, 6\] .*does not split evenly"),
    (["FILE", "--world-size", "2"], ("no_shards.py", lambda t: t.replace('SHARDS = {"up.weight": 0, "down.weight": 1, "out1": 1}', "")),
     r"up\.weight is \[4, 6\] on a rank but \[8, 6\] in the single-device program \(cut to \[8, 6\] by its split\); declare how"),
    (["FILE", "--world-size", "2"], ("bad_shards.py", lambda t: t.replace('"out1": 1}', '"out1": "one"}')),
     r"SHARDS\['out1'\] = 'one': give a dimension, \(dimension, mesh axis\), or for an output \"rank R\""),
    (["FILE", "--world-size", "2"], ("rank_input.py", lambda t: t.replace('"out1": 1}', '"out1": 1, "x": "rank 1"}')),
     r"SHARDS\['x'\] = 'rank R' is for outputs"),
    (["FILE", "--world-size", "2"], ("bad_dim.py", lambda t: t.replace('"out1": 1}', '"out1": 2}')),
     r"SHARDS\['out1'\] splits dimension 2 but out1 has 2"),
    ([TP_MLP, "--world-size", "2", "--mesh", "2x2"], None, r"--world-size 2 differs from --mesh 2x2"),
    ([str(FIXTURES / "shard_map_wrong.py"), "--world-size", "4"], None, r"the file's mesh is 2 \(2 ranks\)"),
    (["FILE", "--world-size", "2"], ("no_reference.py", lambda t: t.replace("def reference(", "def other(")),
     r"defines no reference\(\*inputs\)"),
    (["FILE"], ("after.py", lambda t: t.replace("forward = jax.jit(jax.shard_map(", "sharded = jax.jit(jax.shard_map(")
                + "\n\ndef forward(x, w_up, w_down):\n    return sharded(x, w_up, w_down) * 2\n"),
     r"forward computes more than its shard_map"),
    (["hf:tests/fixtures/hf/llama2-70b.json", "--world-size", "8"], None, r"an hf: model or IR text has none"),
    ([TP_MLP, "--world-size", "0"], None, r"--world-size: '0': must be an integer"),
]


@pytest.mark.parametrize("argv,write,message", BAD)
def test_bad_input_is_one_line(argv, write, message, tmp_path, capsys):
    if write is not None:
        name, edit = write
        source = FIXTURES / ("shard_map_wrong.py" if name in ("no_reference.py", "after.py") else "tp_mlp.py")
        (tmp_path / name).write_text(edit(source.read_text()))
        argv = [str(tmp_path / name) if a == "FILE" else a for a in argv]
        argv += [] if "--world-size" in argv or "--mesh" in argv else ["--mesh", "2"]
    assert main(["verify", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert re.search(message, err), err


def test_dtensor_sequence_parallel_traces_to_all_gather_and_reduce_scatter():
    from solar.frontends.select import load
    from solar.frontends.torch.distributed import fake_world
    from solar.ir.collectives import Kind, full_bytes, sharded_of

    with fake_world(4):
        program = load(str(FIXTURES / "dtensor_sp.py"), share_layers=False).program
    sharded = sharded_of(program, 4)
    # the gathered [8, 16] tokens, and the [8, 16] partial sums scattered: f32
    assert [(c.kind, c.dim, full_bytes(c, program)) for c in sharded.collectives] == [
        (Kind.ALL_GATHER, 0, 8 * 16 * 4), (Kind.REDUCE_SCATTER, 0, 8 * 16 * 4)]

"""JAX programs sharded by XLA's partitioner (jit in_shardings / out_shardings, with_sharding_constraint)
without a shard_map: under --system (and verify --world-size) one line naming the construct and the
user's line, asking for jax.shard_map; solar never bounds them as one device without collectives."""

from __future__ import annotations

from pathlib import Path

import pytest

from solar.cli import main
from solar.errors import UsageError
from solar.frontends.jax.sharded import load_sharded

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sharded"
ASK = "XLA's partitioner would choose its collectives, and solar does not run it; write the sharded part with jax.shard_map"

PLAIN = '''
import jax
import jax.numpy as jnp

forward = jax.jit(lambda x: x * 2)


def get_inputs():
    return [jax.ShapeDtypeStruct((4,), jnp.float32)]
'''


@pytest.mark.parametrize("fixture,construct,line", [
    ("jit_shardings.py", "jax.jit with in_shardings", "jit_shardings.py:17: in_shardings=(NamedSharding(MESH, P()),"),
    ("sharding_constraint.py", "jax.lax.with_sharding_constraint",
     "sharding_constraint.py:13: h = jax.lax.with_sharding_constraint(jax.nn.gelu(x @ w_up),"),
])
def test_partitioned_jax_names_the_construct_and_the_line(fixture, construct, line):
    with pytest.raises(UsageError) as caught:
        load_sharded(FIXTURES / fixture, None, None)
    message = str(caught.value)
    assert message.startswith(f"{fixture}: {construct} ({line}")
    assert message.endswith(f"): {ASK} (its collectives are bounded per rank)")
    assert "\n" not in message


def test_a_jit_without_shardings_has_no_shard_map(tmp_path):
    f = tmp_path / "plain.py"
    f.write_text(PLAIN)
    with pytest.raises(UsageError, match=r"^plain.py: no shard_map in the traced function"):
        load_sharded(f, None, None)


@pytest.mark.parametrize("argv", [
    ("analyze", "jit_shardings.py", "--system", "8xH100-SXM"),
    ("provision", "sharding_constraint.py", "--system", "8xH100-SXM", "--target-ms", "1"),
    ("verify", "jit_shardings.py", "--world-size", "8"),
])
def test_the_commands_refuse_it_in_one_line(argv, capsys):
    command, fixture, *flags = argv
    assert main([command, str(FIXTURES / fixture), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"solar: error: {fixture}: ") and ASK in err and "\n" not in err

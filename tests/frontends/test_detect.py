import pytest

from solar.errors import ModelFileError
from solar.frontends.detect import framework_of


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import torch\nclass Model: pass\n", "torch"),
        ("import jax.numpy as jnp\ndef forward(x):\n    return x\n", "jax"),
        ("from flax import linen as nn\n", "jax"),
        ("import jax\nimport torch\n", "torch"),
        ("x = 1\n", "torch"),
    ],
)
def test_framework_from_imports(tmp_path, source, expected):
    f = tmp_path / "m.py"
    f.write_text(source)
    assert framework_of(f) == expected


def test_syntax_error_is_a_model_file_error(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("import jax\ndef f(:\n")
    with pytest.raises(ModelFileError, match="bad.py:2: syntax error"):
        framework_of(f)

"""`solar ... --debug` verifies the IR after every pass (as the test suite does, tests/conftest.py),
and leaves the switch as it found it."""

from __future__ import annotations

import solar.passes as passes
from solar.cli import main

MODEL = (
    "import torch\n"
    "class Model(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return torch.relu(x).sum(0)\n"
    "def get_inputs():\n    return [torch.randn(8, 16)]\n"
    "def get_init_inputs():\n    return []\n"
)


def test_debug_flag_verifies_after_every_pass(tmp_path, monkeypatch, capsys):
    model = tmp_path / "m.py"
    model.write_text(MODEL)
    seen: list[str] = []
    real = passes._verify_after
    monkeypatch.setattr(
        passes, "_verify_after", lambda p, program: (seen.append(p.__name__), real(p, program))
    )
    with passes.verifying(False):  # as outside the test suite
        assert main(["analyze", str(model), "--arch", "H100-SXM"]) == 0
        assert seen == []
        assert main(["analyze", str(model), "--arch", "H100-SXM", "--debug"]) == 0
        assert set(seen) == {"propagate", "restrict", "sink"}
    capsys.readouterr()

"""The CLI's shape: every subcommand is registered by a module of its own, nothing imports
solar.cli, and `solar --help` (or a bad flag) runs without importing torch, JAX, sympy or
matplotlib."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from solar import cli

ROOT = Path(__file__).resolve().parents[2]
SOLAR = ROOT / "solar"
HEAVY = ("torch", "jax", "sympy", "matplotlib", "scipy.optimize", "ray")


def _imports_cli(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import) and any(a.name == "solar.cli" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level:
            if node.module == "solar.cli" or (node.module == "solar" and any(a.name == "cli" for a in node.names)):
                return True
    return False


def test_no_module_of_solar_imports_the_cli():
    importing = [p.relative_to(SOLAR).as_posix() for p in sorted(SOLAR.rglob("*.py")) if _imports_cli(p)]
    assert importing == []


def test_every_subcommand_comes_from_a_registered_module():
    names = list(cli.build_parser()._subparsers._group_actions[0].choices)
    assert names == [
        "analyze", "verify", "validate", "calibrate", "ir", "einsum", "llm-cache", "kernelbench",
        "definitions", "compare", "provision", "specs", "ops",
    ]
    assert all(callable(module.register) for module in cli.COMMANDS)


@pytest.mark.parametrize("command", [c for c in cli.COMMANDS if isinstance(c, cli.Deferred)], ids=lambda c: c.name)
def test_a_deferred_command_is_its_module_s_subcommand(command):
    """The stand-in `solar --help` lists has the real subcommand's name and help; a command line
    that names it gets the real one (its own options), and one that does not leaves its module
    unimported."""
    def subcommands(argv):
        action = cli.build_parser(argv)._subparsers._group_actions[0]
        return action.choices, {a.dest: a.help for a in action._choices_actions}

    stand_ins, stand_in_help = subcommands(["analyze", "x.py"])
    real, real_help = subcommands([command.name, "--help"])
    assert stand_in_help[command.name] == real_help[command.name] == command.help
    assert stand_ins[command.name]._actions != real[command.name]._actions
    code = f"import sys, solar.cli\nsolar.cli.build_parser(['analyze'])\nprint({command.module!r} in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_start_up_imports_no_heavy_dependency():
    code = (
        "import sys, solar.cli\n"
        "solar.cli.build_parser()\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "argv",
    [
        ["analyze", "examples/matmul.py", "--arch", "V100"],
        ["analyze", "examples/matmul.py", "--arch", "H100-SXM", "B100"],
        ["compare", "examples/matmul.py", "--arch", "L4", "V100"],
        ["provision", "examples/matmul.py", "--target-ms", "1", "--like", "V100"],
    ],
)
def test_an_unknown_gpu_is_one_line_before_the_framework_loads(argv):
    code = (
        "import sys\n"
        "from solar.cli import main\n"
        f"rc = main({argv!r})\n"
        "print(rc, 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == ["2", "False"]
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("solar: error: unknown GPU") and "known: " in line


def test_a_single_matmul_is_bounded_without_scipys_lp_solver(tmp_path):
    """One op's compute time needs no LP: scipy.optimize (a second of imports) is not loaded."""
    ir = tmp_path / "mm.ir"
    ir.write_text(
        "program mm {\n  input a: f32[64, 32]\n  input b: f32[32, 16]\n  output c: f32[64, 16]\n"
        "  for i in 0..64, j in 0..16:\n    c[i, j] = 0.0\n"
        "  for i in 0..64, j in 0..16, k in 0..32:\n    c[i, j] += a[i, k] * b[k, j]\n}\n"
    )
    code = (
        "import sys\n"
        "from solar.cli import main\n"
        f"rc = main(['analyze', {str(ir)!r}, '--arch', 'H100-SXM'])\n"
        "print(rc, 'scipy.optimize' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split()[-2:] == ["0", "False"]

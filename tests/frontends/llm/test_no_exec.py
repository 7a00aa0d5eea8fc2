"""No code path may run model output: the package is scanned for every way Python has to execute
text or start a process (builtins exec/eval/compile/__import__, importlib, runpy, subprocess,
os.system/popen/exec*/spawn*, pty), and any use not on the allow-list below fails. The allow-list
holds today's legitimate uses, each with its reason; none is in the LLM frontend."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "solar"
BUILTINS = {"exec", "eval", "compile", "__import__", "breakpoint"}
MODULES = {"importlib", "runpy", "subprocess", "pty", "code", "codeop"}
OS_CALLS = {
    "system",
    "popen",
    "execv",
    "execve",
    "execl",
    "execlp",
    "execvp",
    "execvpe",
    "spawnl",
    "spawnv",
    "spawnve",
    "posix_spawn",
    "startfile",
}

# (file, what): why it is not a path for model output
ALLOWED = {
    ("frontends/files.py", "call compile"): "compiles the user's own model file, the program to analyse",
    ("frontends/files.py", "call exec"): "the same: runs the user's model file as a module",
    ("frontends/files.py", "name exec"): "the same call (the name exec, read to call it)",
    ("frontends/torch/lowerings/__init__.py", "import importlib"): "imports solar's own lowering modules",
    ("frontends/jax/lowerings/__init__.py", "import importlib"): "imports solar's own lowering modules",
    ("frontends/torch/libraries.py", "import importlib"): "find_spec('torchvision'): locates a library",
    ("kernelbench/warm.py", "import importlib"): "find_spec('tqdm'): whether a library is installed",
    ("ir/verify.py", "import importlib"): "lazy import of solar.ir.polyhedral (islpy is heavy)",
    ("kernelbench/__init__.py", "import importlib"): "lazy import of solar.kernelbench submodules",
    ("symbolic/__init__.py", "import importlib"): "lazy import of solar.symbolic submodules (a fixed table)",
    ("backends/__init__.py", "import importlib"): "lazy import of solar.backends submodules (a fixed table)",
    ("frontends/select.py", "import importlib"): "lazy import of the torch / jax / llm frontends (a fixed table)",
    ("cli.py", "import importlib"): "lazy import of the deferred command modules (a fixed table)",
    ("commands/entry.py", "import importlib"): "preloads transformers' modeling modules for hf: (a fixed table)",
    ("frontends/torch/standins.py", "import importlib"): (
        "imports the real torch._dynamo / symbolic_shapes / sympy (a fixed table) and submodules torch asks of them"
    ),
    ("validate/device.py", "import subprocess"): "runs nvidia-smi to read the GPU's clocks",
    ("kernelbench/supervise.py", "call os.execvp"): "the batch supervisor execs its worker command",
    ("kernelbench/worker.py", "import subprocess"): "runs `python -m solar.cli analyze` per problem",
}


def _uses(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {
                f"import {a.name.split('.')[0]}"
                for a in node.names
                if a.name.split(".")[0] in MODULES
            }
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0] in MODULES
        ):
            found.add(f"import {node.module.split('.')[0]}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found |= {f"call os.{a.name}" for a in node.names if a.name in OS_CALLS}
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in BUILTINS:
                found.add(f"call {f.id}")
            elif isinstance(f, ast.Attribute):
                if f.attr == "exec_module":
                    found.add("call exec_module")
                elif f.attr in OS_CALLS and isinstance(f.value, ast.Name) and f.value.id == "os":
                    found.add(f"call os.{f.attr}")
                elif (
                    f.attr in ("exec", "eval")
                    and isinstance(f.value, ast.Name)
                    and f.value.id == "builtins"
                ):
                    found.add(f"call builtins.{f.attr}")
        elif (
            isinstance(node, ast.Name)
            and node.id in ("exec", "eval")
            and isinstance(node.ctx, ast.Load)
        ):
            found.add(f"name {node.id}")  # passed around as a value
    return found


def _scan() -> dict[tuple[str, str], None]:
    hits = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for use in _uses(ast.parse(path.read_text(), str(path))):
            hits[(rel, use)] = None
    return hits


def test_no_new_way_to_run_text_or_processes() -> None:
    new = sorted(set(_scan()) - ALLOWED.keys())
    assert not new, (
        f"new uses of exec/eval/compile/import machinery/processes (allow-list them with a reason only if no model output can reach them): {new}"
    )


def test_llm_frontend_has_none() -> None:
    assert not [hit for hit in _scan() if hit[0].startswith("frontends/llm/")]


def test_the_scan_finds_what_it_looks_for() -> None:
    source = "import subprocess\nfrom importlib import util\nexec(x)\neval(y)\ncompile(s, 'f', 'exec')\n__import__('os').system('ls')\nos.system('ls')\nf = eval\nspec.loader.exec_module(m)\n"
    assert _uses(ast.parse(source)) == {
        "import subprocess",
        "import importlib",
        "call exec",
        "call eval",
        "call compile",
        "call __import__",
        "call os.system",
        "name eval",
        "name exec",
        "call exec_module",
    }


def test_allow_list_is_current() -> None:
    stale = sorted(ALLOWED.keys() - set(_scan()))
    assert not stale, f"allow-list entries no longer used (remove them): {stale}"

"""Every command output shown in README.md and docs/ is what the CLI prints now
(scripts/shown_outputs.py), and the script's parsing and rewriting of marked blocks."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("shown_outputs", ROOT / "scripts" / "shown_outputs.py")
shown = sys.modules.setdefault("shown_outputs", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(shown)

PAGE = """intro
<!-- output: solar specs | head -2 -->
```
$ solar specs | head -2
old line
```
<!-- file: docs/examples/api_module.py -->
```python
```
end"""


def test_shown_outputs_are_what_the_cli_prints_now():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "shown_outputs.py"), "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, "run `python scripts/shown_outputs.py` and commit:\n" + proc.stderr


def test_blocks_are_found_with_their_body_span():
    lines = PAGE.split("\n")
    found = list(shown.blocks(ROOT / "README.md", lines))
    assert [(b.kind, b.arg, b.start, b.end) for b in found] == [
        ("output", "solar specs | head -2", 3, 5),
        ("file", "docs/examples/api_module.py", 8, 8),
    ]


def test_rewrite_replaces_stale_bodies_and_names_them():
    lines = PAGE.split("\n")
    found = list(shown.blocks(ROOT / "README.md", lines))
    outputs = {"solar specs | head -2": "$ solar specs | head -2\nnew line"}
    new, stale = shown.rewrite(lines, found, outputs)
    assert stale == found
    source = (ROOT / "docs/examples/api_module.py").read_text().rstrip("\n").split("\n")
    assert new == [*lines[:3], "$ solar specs | head -2", "new line", *lines[5:8], *source, *lines[8:]]
    again, none = shown.rewrite(new, list(shown.blocks(ROOT / "README.md", new)), outputs)
    assert (again, none) == (new, [])


@pytest.mark.parametrize(
    "command, words, pipe",
    [
        ("solar specs", ["solar", "specs"], None),
        ("solar ir examples/matmul.py | tail -3", ["solar", "ir", "examples/matmul.py"], ("tail", 3)),
        ('python x.py --problems "1[12]_*" | head -20', ["python", "x.py", "--problems", "1[12]_*"], ("head", 20)),
    ],
)
def test_split_pipe(command, words, pipe):
    assert shown.split_pipe(command) == (words, pipe)


@pytest.mark.parametrize(
    "command, message",
    [
        ("ls -l", "must start with `solar` or `python`"),
        ("solar specs | grep H100", "only `| head -N` or `| tail -N`"),
    ],
)
def test_unsupported_commands_are_refused(command, message):
    with pytest.raises(SystemExit, match=message):
        shown.split_pipe(command)


@pytest.mark.parametrize(
    "text, message",
    [
        ("<!-- output: solar specs -->\nno fence", "must be followed by a fenced block"),
        ("<!-- output: solar specs -->\n```\nnever closed", "is never closed"),
    ],
)
def test_malformed_blocks_are_refused(text, message):
    with pytest.raises(SystemExit, match=message):
        list(shown.blocks(ROOT / "README.md", text.split("\n")))

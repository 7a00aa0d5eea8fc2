"""The command outputs shown in README.md and docs/, produced by running the real CLI: a fenced
block after `<!-- output: COMMAND -->` holds `$ COMMAND` and what it prints; a fenced block after
`<!-- file: PATH -->` holds that file. `--check` exits 1 listing every block that differs.

    python scripts/shown_outputs.py            # rewrite the blocks in place
    python scripts/shown_outputs.py --check    # exit 1 if a shown output is stale

COMMAND is `solar ...` or `python ...`, optionally followed by `| head -N` or `| tail -N`; it runs
from a scratch folder that links the repository's top-level entries (so written files land there),
with a console of WIDTH columns.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 100
TIMEOUT_S = 600
MARKER = re.compile(r"^<!-- (output|file): (.+?) -->$")
FENCE = re.compile(r"^(```+)")
PIPES = {"head": lambda lines, n: lines[:n], "tail": lambda lines, n: lines[-n:]}


@dataclass(frozen=True)
class Block:
    """One shown block: the marker's kind and argument, and the line span of its fenced body."""

    path: Path
    kind: str  # "output" or "file"
    arg: str
    start: int  # index of the first body line (after the opening fence)
    end: int  # index of the closing fence

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.start}: {self.kind}: {self.arg}"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path, lines: list[str]) -> Iterator[Block]:
    """Every marker in `lines` followed (on the next line) by a fenced block."""
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m:
            continue
        fence = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if not fence:
            raise SystemExit(f"{path.relative_to(ROOT)}:{i + 1}: a marker must be followed by a fenced block")
        close = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == fence.group(1)), None)
        if close is None:
            raise SystemExit(f"{path.relative_to(ROOT)}:{i + 2}: fenced block is never closed")
        yield Block(path, m.group(1), m.group(2).strip(), i + 2, close)


def split_pipe(command: str) -> tuple[list[str], tuple[str, int] | None]:
    """The command's words and its optional `| head -N` / `| tail -N`."""
    program, _, pipe = command.partition("|")
    words = shlex.split(program)
    if not words or words[0] not in ("solar", "python"):
        raise SystemExit(f"shown command must start with `solar` or `python`: {command}")
    if not pipe.strip():
        return words, None
    m = re.fullmatch(r"\s*(head|tail) -(\d+)\s*", pipe)
    if not m:
        raise SystemExit(f"only `| head -N` or `| tail -N` may follow a shown command: {command}")
    return words, (m.group(1), int(m.group(2)))


def link_repository(where: Path) -> None:
    """Link the repository's top-level entries into `where`, so a command's relative paths work
    and the files it writes stay out of the checkout."""
    for entry in ROOT.iterdir():
        if entry.name != ".git":
            (where / entry.name).symlink_to(entry)


def run(command: str) -> str:
    """`$ command` and what it prints (stdout and stderr together, trailing spaces dropped)."""
    words, pipe = split_pipe(command)
    argv = [sys.executable, "-m", "solar.cli", *words[1:]] if words[0] == "solar" else [sys.executable, *words[1:]]
    env = {**os.environ, "COLUMNS": str(WIDTH), "LINES": "50", "PYTHONPATH": str(ROOT), "NO_COLOR": "1",
           "TERM": "dumb", "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory(prefix="solar-shown-") as cwd:
        link_repository(Path(cwd))
        proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=TIMEOUT_S)
    text = proc.stdout.replace(cwd + "/", "").replace(cwd, ".")
    lines = [line.rstrip() for line in text.rstrip("\n").splitlines()]
    if pipe:
        lines = PIPES[pipe[0]](lines, pipe[1])
    return "\n".join([f"$ {command}", *lines])


def body(block: Block, outputs: dict[str, str]) -> str:
    if block.kind == "file":
        return (ROOT / block.arg).read_text().rstrip("\n")
    return outputs[block.arg]


def collect() -> list[tuple[Path, list[str], list[Block]]]:
    found = []
    for path in pages():
        lines = path.read_text().split("\n")
        found.append((path, lines, list(blocks(path, lines))))
    return found


def produce(commands: set[str], jobs: int) -> dict[str, str]:
    """Each distinct command run once, `jobs` at a time."""
    ordered = sorted(commands)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(zip(ordered, pool.map(run, ordered)))


def rewrite(lines: list[str], bs: list[Block], outputs: dict[str, str]) -> tuple[list[str], list[Block]]:
    """`lines` with every block's body as produced now, and the blocks that differed."""
    new, stale = list(lines), []
    for b in reversed(bs):  # from the end, so earlier spans keep their indices
        text = body(b, outputs)
        if "\n".join(lines[b.start : b.end]) != text:
            stale.append(b)
            new[b.start : b.end] = text.split("\n")
    return new, stale[::-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 listing the blocks that differ; write nothing")
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once (default 2)")
    args = parser.parse_args(argv)
    found = collect()
    outputs = produce({b.arg for _, _, bs in found for b in bs if b.kind == "output"}, args.jobs)
    stale = []
    for path, lines, bs in found:
        new, differ = rewrite(lines, bs, outputs)
        stale += differ
        if differ and not args.check:
            path.write_text("\n".join(new))
    for b in stale:
        print(f"{b.where()}: {'differs' if args.check else 'rewritten'}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())

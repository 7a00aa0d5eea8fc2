"""The bad-input corpus (tests/badinput/): every case is run through the `solar` CLI and must give
its expected exit code, exactly one stderr line matching its pattern (none when it expects none), no
traceback anywhere, and finish within LIMIT_S. tests/badinput/README.md describes the case format.

Cases run cheaply: WORKERS worker processes import solar, torch and jax once and run their share of
the cases through `solar.cli.main` in-process (stdout and stderr captured); only the cases marked
`process: subprocess` (os._exit, hangs, signals, state a case would leave behind) get a process of
their own (`python -m solar.cli ...`). Run alone: `python -m pytest -q tests/test_badinput.py`."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "badinput"
DATA = CORPUS / "_data"
LIMIT_S = 60.0
WORKERS = 2
MIN_CASES = 150
MARK = "@@badinput-result "
KEYS = ("case", "run", "exit", "line", "stdout", "process", "signal", "setup", "file", "unless")
_HEADER = re.compile(r"^\s*#\s*(" + "|".join(KEYS) + r")\s*:\s?(.*?)\s*$")


@dataclass
class Case:
    id: str
    path: Path  # the case file (or the .case manifest)
    data: Path  # the file `{file}` names
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def exit(self) -> int:
        return int(self.fields["exit"])

    @property
    def subprocess(self) -> bool:
        return self.fields.get("process") == "subprocess" or "signal" in self.fields

    def argv(self, tmp: Path) -> list[str]:
        subst = {
            "file": str(self.data),
            "dir": str(self.path.parent),
            "data": str(DATA),
            "tmp": str(tmp),
            "ok_model": str(DATA / "ok_model.py"),
            "ok_jax": str(DATA / "ok_jax.py"),
            "ok_ir": str(DATA / "ok_program.ir"),
            "ok_spec": str(DATA / "ok_spec" / "H100-SXM.yaml"),
        }
        return shlex.split(self.fields["run"].format(**subst))


def _header(path: Path) -> dict[str, str]:
    fields: dict[str, str] = {}
    try:
        head = path.read_bytes()[:8192].decode("latin-1").splitlines()[:40]
    except OSError:
        return fields
    for line in head:
        m = _HEADER.match(line)
        if m:
            fields[m.group(1)] = m.group(2)
    return fields


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CORPUS.rglob("*")):
        if (
            not path.is_file()
            or "_data" in path.relative_to(CORPUS).parts
            or path.name == "README.md"
        ):
            continue
        if path.suffix in (".pyc",) or "__pycache__" in path.parts:
            continue
        fields = _header(path)
        rel = path.relative_to(CORPUS).as_posix()
        if "case" not in fields:
            if any(part.endswith(".files") for part in path.relative_to(CORPUS).parts[:-1]):
                continue  # a support file of a multi-file case (a folder tree of its own)
            raise AssertionError(
                f"{rel}: no `# case:` header (support files go in _data/ or NAME.files/)"
            )
        data = path.parent / fields["file"] if "file" in fields else path
        cases.append(Case(rel, path, data, fields))
    return cases


# ---- running one case ---------------------------------------------------------------------------


def _setup(case: Case, tmp: Path) -> None:
    for step in filter(None, (s.strip() for s in case.fields.get("setup", "").split(";"))):
        what, _, arg = step.partition(" ")
        target = Path(arg.format(tmp=tmp, dir=case.path.parent))
        if what == "mkdir":
            target.mkdir(parents=True)
        elif what == "fifo":
            os.mkfifo(target)
        elif what == "touch":
            target.write_text("existing\n")
        elif what == "symloop":
            target.symlink_to(target)
        elif what == "big":
            with target.open("wb") as f:
                f.truncate(17 << 20)
        else:
            raise AssertionError(f"{case.id}: unknown setup {what!r}")


def run_inprocess(argv: list[str]) -> tuple[int, str, str]:
    from solar.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse's --help
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001 - escaping main() is the bug the corpus looks for
            traceback.print_exc()
            rc = 1
    return rc, out.getvalue(), err.getvalue()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_subprocess(case: Case, argv: list[str], tmp: Path) -> tuple[int, str, str]:
    """`python -m solar.cli ARGV` in a process (group) of its own. A `signal: NAME` case's model
    creates the file $SOLAR_BADINPUT_READY once it runs; the signal is sent then."""
    ready = tmp / "ready"
    env = dict(os.environ, PYTHONPATH=str(ROOT), SOLAR_BADINPUT_READY=str(ready))
    inherited = signal.getsignal(signal.SIGINT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "solar.cli", *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # an ignored SIGINT is inherited across exec (a test runner's worker may have it so), and
        # Python then keeps ignoring it: the child starts as a shell's foreground command would
        preexec_fn=_default_sigint,
    )
    sig = case.fields.get("signal")
    try:
        if sig:
            start = time.monotonic()
            while not ready.exists() and proc.poll() is None and time.monotonic() - start < LIMIT_S:
                time.sleep(0.1)
            proc.send_signal(getattr(signal, f"SIG{sig}"))
        out, err = proc.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return -9, out, err + f"\n[corpus: killed after {LIMIT_S:g} s; the runner's SIGINT was {inherited}]"
    return proc.returncode, out, err


def run_case(case: Case, inprocess: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="solar-badinput-") as tmp:
        _setup(case, Path(tmp))
        argv = case.argv(Path(tmp))
        start = time.monotonic()
        rc, out, err = run_inprocess(argv) if inprocess else run_subprocess(case, argv, Path(tmp))
        return {
            "id": case.id,
            "rc": rc,
            "out": out,
            "err": err,
            "seconds": time.monotonic() - start,
        }


def problems(case: Case, result: dict) -> list[str]:
    """What is wrong with one case's outcome (empty: as expected)."""
    bad = []
    rc, out, err = result["rc"], result["out"], result["err"]
    if rc != case.exit:
        bad.append(f"exit {rc}, expected {case.exit}")
    if "Traceback (most recent call last)" in out + err:
        bad.append("a traceback")
    lines = [line for line in err.splitlines() if line.strip()]
    pattern = case.fields.get("line")
    if pattern is None:
        if lines:
            bad.append(f"stderr not empty: {lines[:3]}")
    elif len(lines) != 1:
        bad.append(f"{len(lines)} stderr lines, expected one: {lines[:4]}")
    elif not re.search(pattern, lines[0]):
        bad.append(f"stderr line {lines[0]!r} does not match {pattern!r}")
    expect_out = case.fields.get("stdout", "empty" if case.exit != 0 else "any")
    if expect_out == "empty" and out.strip():
        bad.append(f"stdout not empty: {out[:200]!r}")
    elif expect_out == "json":
        try:
            json.loads(out)
        except ValueError as exc:
            bad.append(f"stdout is not JSON ({exc}): {out[:200]!r}")
    elif expect_out not in ("any", "empty", "json") and not re.search(expect_out, out):
        bad.append(f"stdout does not match {expect_out!r}: {out[:200]!r}")
    if result["seconds"] > LIMIT_S:
        bad.append(f"took {result['seconds']:.1f} s (limit {LIMIT_S:g} s)")
    return bad


# ---- the worker: many cases in one process ------------------------------------------------------


def _worker(ids: list[str]) -> None:
    import solar.cli
    import solar.frontends.torch

    with contextlib.suppress(ImportError):
        import solar.frontends.jax.loader  # noqa: F401
    cases = {c.id: c for c in load_cases()}
    for case_id in ids:
        result = run_case(cases[case_id], inprocess=True)
        sys.__stdout__.write(MARK + json.dumps(result) + "\n")
        sys.__stdout__.flush()


def run_corpus(cases: list[Case]) -> dict[str, dict]:
    inproc = [c.id for c in cases if not c.subprocess]
    shares = [inproc[k::WORKERS] for k in range(WORKERS)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.test_badinput", *share],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for share in shares
        if share
    ]
    results: dict[str, dict] = {}
    for w in workers:
        out, err = w.communicate(timeout=LIMIT_S * max(1, len(inproc)))
        for line in out.splitlines():
            if line.startswith(MARK):  # user code may write to the real stdout too
                r = json.loads(line[len(MARK) :])
                results[r["id"]] = r
        if w.returncode != 0:
            results["<worker>"] = {"rc": w.returncode, "err": err[-2000:]}
    sub = [c for c in cases if c.subprocess]
    with ThreadPoolExecutor(WORKERS) as pool:
        for r in pool.map(lambda c: run_case(c, inprocess=False), sub):
            results[r["id"]] = r
    return results


def test_corpus_is_large_and_well_formed():
    cases = load_cases()
    assert len(cases) >= MIN_CASES, f"{len(cases)} cases"
    for c in cases:
        assert {"run", "exit"} <= c.fields.keys(), c.id
        assert c.data.exists() or "setup" in c.fields or "{file}" not in c.fields["run"], c.id
        if "line" in c.fields:
            re.compile(c.fields["line"])


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def test_corpus():
    cuda = _cuda()
    cases = [c for c in load_cases() if not (c.fields.get("unless") == "cuda" and cuda)]
    results = run_corpus(cases)
    assert "<worker>" not in results, results.get("<worker>")
    failures = []
    for c in cases:
        r = results.get(c.id)
        if r is None:
            failures.append(f"{c.id}: no result (its worker died)")
            continue
        failures += [f"{c.id}: {p}" for p in problems(c, r)]
    assert not failures, "\n".join(failures)


if __name__ == "__main__":
    _worker(sys.argv[1:])

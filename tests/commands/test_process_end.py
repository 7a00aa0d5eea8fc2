"""How a `solar` process that ran user code ends: after its result whatever threads the code left,
without a word from a process the code forked, with one line when the code's real memory passes
--max-memory, and with the file's error (not an interrupt) when the code raises KeyboardInterrupt
itself. The model files are those of the bad-input corpus (tests/badinput/model)."""

from __future__ import annotations

import gc
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from solar.commands.args import memory_size
from solar.commands.entry import finish, parser, run
from solar.errors import ModelFileError
from solar.frontends import usercode

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "badinput" / "model"
#: generous: the machine may be loaded; a hang is what these tests catch, never a slow run.
LIMIT_S = 600


def _solar(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *argv], capture_output=True, text=True, cwd=ROOT,
        timeout=LIMIT_S, check=False,
    )


def _analyze(model: str, *flags: str) -> subprocess.CompletedProcess:
    return _solar("analyze", str(MODELS / model), "--arch", "H100-SXM", "--json", *flags)


@pytest.mark.parametrize(
    "model", ["thread_never_ends.py", "thread_prints_forever.py", "fork_at_import.py", "fork_child_returns.py"]
)
def test_the_process_ends_with_one_report_and_nothing_on_stderr(model):
    out = _analyze(model)  # the pipes close once every process holding them has ended
    assert (out.returncode, out.stderr) == (0, "")
    assert json.loads(out.stdout)["arch"] == "H100-SXM"  # one report: a forked child printed none


AT_EXIT = """import atexit
import torch

log = open({log!r}, "w")  # left open: the end of the process closes it
log.write("written at import\\n")
atexit.register(lambda: open({mark!r}, "w").write("atexit ran\\n"))


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]
"""


def test_without_threads_left_the_process_exits_as_usual(tmp_path):
    log, mark = tmp_path / "log.txt", tmp_path / "mark.txt"
    model = tmp_path / "at_exit.py"
    model.write_text(AT_EXIT.format(log=str(log), mark=str(mark)))
    out = _solar("analyze", str(model), "--arch", "H100-SXM", "--json")
    assert (out.returncode, out.stderr) == (0, "")
    assert json.loads(out.stdout)["arch"] == "H100-SXM"
    assert (log.read_text(), mark.read_text()) == ("written at import\n", "atexit ran\n")


@pytest.mark.parametrize("user_file,frozen", [(False, True), (True, False)])
def test_finish_leaves_the_objects_alive_to_the_end_unless_a_user_file_ran(monkeypatch, tmp_path, user_file, frozen):
    monkeypatch.setattr(usercode, "_files_run", set())
    if user_file:
        usercode.call(lambda: None, "get_inputs()", tmp_path / "m.py")
    assert usercode.files_run() == ({str((tmp_path / "m.py").resolve())} if user_file else set())
    assert gc.get_freeze_count() == 0
    try:
        with pytest.raises(SystemExit) as ended:
            finish(3)
        assert ended.value.code == 3
        assert (gc.get_freeze_count() > 0) == frozen  # frozen: no collection at shutdown walks them
    finally:
        gc.unfreeze()


#: (model file, --max-memory, the limit as the line says it): one allocation that returns (the guard's
#: check at its end) and allocations that never end (the watchdog thread).
MEMORY = [("allocates_real_memory.py", "100M", "100 MB"), ("allocates_without_end.py", "150M", "150 MB")]


@pytest.mark.parametrize("model,limit,said", MEMORY)
def test_real_memory_past_the_limit_is_one_line_naming_the_file(model, limit, said):
    out = _analyze(model, "--max-memory", limit)
    assert (out.returncode, out.stdout) == (2, "")
    (line,) = out.stderr.splitlines()
    assert line.startswith(f"solar: error: {model}: importing the model file allocated ")
    assert f"of real memory, over the --max-memory {said} limit; solar analyses on fake tensors" in line


def test_without_a_command_the_usage_goes_to_stderr():
    out = _solar()
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith("usage: solar ") and len(out.stderr.splitlines()) == 1


SIZES = [
    ("0", 0), ("500M", 500 * 10**6), ("8G", 8 * 10**9), ("8gb", 8 * 10**9), ("1.5GiB", 3 * 2**29),
    ("64KiB", 2**16), ("2T", 2 * 10**12),
]


@pytest.mark.parametrize("text,nbytes", SIZES)
def test_memory_sizes(text, nbytes):
    assert memory_size(text) == nbytes


@pytest.mark.parametrize("text", ["8", "lots", "-1G", "1e400G", "5 parsecs", ""])
def test_a_size_without_a_known_unit_is_refused(text):
    with pytest.raises(Exception, match="is not a size; give one with a unit"):
        memory_size(text)


def _raise_keyboard_interrupt():
    raise KeyboardInterrupt


def test_a_keyboard_interrupt_of_the_code_itself_is_its_error_only_where_signals_are_told_apart():
    with usercode.stop_signals(), pytest.raises(ModelFileError, match="raised KeyboardInterrupt, though no Ctrl-C arrived"):
        usercode.call(_raise_keyboard_interrupt, "get_inputs()", None)
    with pytest.raises(KeyboardInterrupt):  # the Python API: a real Ctrl-C looks the same
        usercode.call(_raise_keyboard_interrupt, "get_inputs()", None)


@pytest.mark.parametrize("signum,code,line", [(signal.SIGINT, 130, "solar: interrupted"), (signal.SIGTERM, 143, "solar: terminated")])
def test_a_stop_signal_passes_through_user_code(signum, code, line):
    def stopped():
        raise usercode.STOP_SIGNALS[signum]()

    with usercode.stop_signals(), pytest.raises(usercode.Signalled) as caught:
        usercode.call(stopped, "get_inputs()", None)
    assert (caught.value.exit_code, caught.value.line) == (code, line)


def test_memory_past_the_limit_outside_user_code_says_to_raise_it(monkeypatch):
    sizes = iter([10**9, 10**9 + 3 * 10**6])
    monkeypatch.setattr(usercode, "resident_bytes", lambda: next(sizes))
    monkeypatch.setattr(usercode, "MEMORY_POLL_S", 3600.0)  # the watchdog stays asleep
    with usercode.memory_limit(2 * 10**6):
        assert usercode.over_memory_limit() == (
            "the analysis used 3 MB of real memory, over the --max-memory 2 MB limit; raise "
            "--max-memory (0: no limit)"
        )
    assert usercode.over_memory_limit() is None  # no limit outside the block


def test_no_command_in_process_is_exit_2_with_usage(capsys):
    assert run(parser([]), []) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("usage: solar")

"""The fork server's warm-up module: what every worker inherits from it."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("tqdm")

CHECK = """
import threading
import solar.kernelbench.warm
import tqdm
lock = tqdm.tqdm.get_lock()
print(type(lock).__name__, isinstance(lock, type(threading.RLock())))
"""


def test_workers_inherit_a_thread_lock_for_tqdm_not_a_semaphore():
    # torch.fx's interpreter makes a tqdm bar; with tqdm's default lock each forked worker would
    # register a POSIX semaphore that os._exit never releases ("leaked semaphore objects").
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "True"

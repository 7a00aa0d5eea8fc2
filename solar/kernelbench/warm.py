"""Imported only by the kernelbench fork server (solar.kernelbench.zygote.PRELOAD): importing it runs
`solar analyze` on two tiny programs so that the lazy imports of tracing and analysis are done
before the server forks per-problem workers: one the meta trace takes, one in bfloat16 that it
leaves to torch.export (so that torch._dynamo, fake tensors and sympy are imported once here, not
in every worker whose problem needs them). It goes through the workers' own entry
(solar.kernelbench.zygote.run_cli), and never raises: a failed warm-up only makes the workers slower.

It also hides the GPUs from the server and its children (CUDA_VISIBLE_DEVICES=""), before torch is
imported (nothing imported above that line imports torch): analysis never uses a GPU, and a fork
server that had initialised CUDA would leave every child unable to trace ("Cannot re-initialize CUDA in forked subprocess").

Its folder is named after the server's pid (solar.kernelbench.zygote.WARM_PREFIX), so that a server
killed during the warm-up has its folder removed by whoever killed it."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import signal
import socket
import tempfile
import threading
import warnings
from pathlib import Path

from solar.kernelbench.zygote import run_cli

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before anything in this process imports torch

# Each forked worker re-runs the runner's main module (`python -m solar.cli`) as __mp_main__, as
# multiprocessing does; when this server has imported solar.cli already, runpy warns once per worker
# that the module is in sys.modules. The re-run is harmless (the CLI's main is guarded): the
# warning is hidden here, in the server, whose filters every worker inherits.
warnings.filterwarnings("ignore", message=r".*found in sys\.modules after import of package", category=RuntimeWarning)



def share_tqdm_lock() -> None:
    """Give tqdm (used by torch.fx's interpreter, even with its bar disabled) a thread lock in the
    server, which every worker inherits. Otherwise each worker makes tqdm's multiprocessing lock, a
    POSIX semaphore registered with the batch's resource tracker; a worker ends with os._exit, never
    unregisters it, and the tracker warns of "leaked semaphore objects" when the batch ends. A
    worker is one process: a thread lock is all tqdm needs there."""
    if importlib.util.find_spec("tqdm") is None:
        return
    import tqdm

    tqdm.tqdm.set_lock(threading.RLock())


TINY_PROGRAM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, w):
        return torch.softmax(torch.relu(x @ w) + 1.0, dim=-1).sum(0)


def get_inputs():
    return [torch.randn(8, 8, dtype=DTYPE), torch.randn(8, 8, dtype=DTYPE)]


def get_init_inputs():
    return []
"""


#: the warm-up gives up after this long (the fork server forks nothing until it is done).
LIMIT_S = 120


class _TooLong(Exception):
    pass


def _give_up(signum: int, frame: object) -> None:
    raise _TooLong


def warm_up() -> None:
    previous = signal.signal(signal.SIGALRM, _give_up)
    signal.alarm(LIMIT_S)
    try:
        prefix = f"solar-kb-warm-{os.getpid()}@{socket.gethostname()}-"
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            for dtype in ("float32", "bfloat16"):  # the meta trace's route, then torch.export's
                path = Path(tmp, f"warm_{dtype}.py")
                path.write_text(TINY_PROGRAM.replace("import torch\n", f"import torch\nDTYPE = torch.{dtype}\n", 1))
                sink = io.StringIO()
                with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                    run_cli(["analyze", str(path), "--arch", "H100-SXM", "--json"])
    except BaseException:  # noqa: BLE001, S110 - see the module docstring
        pass
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


share_tqdm_lock()
warm_up()

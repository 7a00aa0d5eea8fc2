"""A batch started in a folder that holds a `solar/` package of its own still imports the installed
solar in every worker, forked or fresh."""

from __future__ import annotations

import pytest

from solar.kernelbench.plan import RunConfig, resolve_archs
from solar.kernelbench.problems import find_problems
from solar.kernelbench.results import RESULTS_FILE, read_rows
from solar.kernelbench.runner import run_analysis
from solar.kernelbench.zygote import stop_server
from tests.kernelbench.helpers import RELU, write_suite


@pytest.mark.parametrize("isolation", ["fork", "subprocess"])
def test_a_solar_folder_in_the_current_directory_does_not_shadow_solar(
    tmp_path, monkeypatch, isolation
):
    root = write_suite(tmp_path / "suite", {"level1/1_ReLU.py": RELU})
    here = tmp_path / "here"
    (here / "solar" / "kernelbench").mkdir(parents=True)
    for module in ("__init__.py", "kernelbench/__init__.py", "kernelbench/warm.py"):
        (here / "solar" / module).write_text('"""Another project named solar."""\n')
    monkeypatch.chdir(here)
    stop_server()  # the fork server, if one runs, was started elsewhere
    config = RunConfig(
        problems=tuple(find_problems(root, ())),
        archs=resolve_archs(["H100-SXM"]),
        out=tmp_path / "out",
        jobs=1,
        timeout_s=120.0,
        isolation=isolation,
    )
    run_analysis(config, show_progress=False)
    row = read_rows(tmp_path / "out" / RESULTS_FILE)[0][("level1/1_ReLU.py", "H100-SXM")]
    assert (row.status, row.error) == ("ok", None)

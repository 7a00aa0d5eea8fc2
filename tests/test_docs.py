"""The docs site: the generated result pages match the committed result files, the site builds in
strict mode, and the README stays a front door."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = sys.modules.setdefault(name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


gen_docs = _script("gen_docs")


def test_generated_result_pages_are_current():
    assert gen_docs.stale() == [], "run `python scripts/gen_docs.py` and commit the pages"


def test_a_changed_or_missing_page_is_reported(tmp_path):
    pages = sorted(gen_docs.PAGES)
    for page in pages:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, tmp_path / page)
    assert gen_docs.stale(tmp_path) == []
    (tmp_path / pages[0]).write_text((tmp_path / pages[0]).read_text() + "hand edit\n")
    (tmp_path / pages[1]).unlink()
    assert sorted(gen_docs.stale(tmp_path)) == pages


def test_check_exits_1_naming_a_stale_page(monkeypatch, capsys):
    monkeypatch.setattr(gen_docs, "stale", lambda: ["docs/results/speed.md"])
    assert gen_docs.main(["--check"]) == 1
    assert "docs/results/speed.md: differs" in capsys.readouterr().err


def test_every_page_is_generated_from_committed_files():
    for page, make in gen_docs.PAGES.items():
        text = make()
        assert text.startswith(gen_docs.BANNER), page
        for path in [w.strip("`") for w in text.split() if w.startswith("`benchmarks/results/")]:
            assert (ROOT / path.rstrip("`,;:.)")).exists(), (page, path)


def _build(root: Path, site: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    # no --quiet: it drops the warnings that strict mode counts, and a broken link would pass
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=root, capture_output=True, text=True, env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )


def test_site_builds_in_strict_mode(tmp_path):
    proc = _build(ROOT, tmp_path / "site")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "page, text, message",
    [
        ("index.md", "[a page](NOPE.md)\n", "'NOPE.md', but the target is not found"),
        ("ORPHAN.md", "# not in the nav\n", "ORPHAN.md"),
    ],
)
def test_a_broken_link_or_a_page_outside_the_nav_fails_the_build(tmp_path, page, text, message):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with open(tmp_path / "docs" / page, "a") as f:
        f.write(text)
    proc = _build(tmp_path, tmp_path / "site")
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "command",
    [
        "python3 -m venv .venv && .venv/bin/pip install -q -c constraints.txt -e . && .venv/bin/solar analyze examples/matmul.py --arch H100-SXM",
        "python3 -m venv .venv && .venv/bin/pip install -q -c constraints.txt -e '.[dev]' && .venv/bin/python -m pytest -q -n 2",
    ],
)
def test_readme_is_a_front_door_with_the_two_commands(command):
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    assert f"```\n{command}\n```" in readme


@pytest.mark.parametrize(
    "marker",
    [
        "<!-- output: solar analyze examples/",  # a model file
        "<!-- output: python docs/examples/api_module.py -->",  # an in-memory module
        "<!-- output: solar analyze hf:",  # an HF config
        "<!-- output: solar kernelbench ",  # a KernelBench folder
    ],
)
def test_readme_has_each_quick_start_with_a_shown_output(marker):
    assert marker in (ROOT / "README.md").read_text()

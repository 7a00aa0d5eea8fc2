"""Fixtures of the LLM frontend tests: a configuration pointing at a scripted server, with a cache
directory of its own in which the worked examples (built once per session) are already stored."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from solar.frontends.llm import LLMConfig


@pytest.fixture(scope="session")
def examples_dir(tmp_path_factory) -> Path:
    from solar.frontends.llm import examples

    root = tmp_path_factory.mktemp("llm-examples")
    examples.load(root)  # builds and stores them
    return root


@pytest.fixture
def cache_dir(tmp_path) -> Path:
    return tmp_path / "llm-cache"


@pytest.fixture
def with_examples(cache_dir, examples_dir) -> Path:
    """The cache directory with the worked examples already in it (for whole-program tests)."""
    shutil.copytree(examples_dir, cache_dir, dirs_exist_ok=True)
    return cache_dir


@pytest.fixture
def make_config(cache_dir):
    def make(url: str, **overrides) -> LLMConfig:
        options = dict(cache_dir=cache_dir, backoff_s=0.01, timeout_s=10.0, retries=2)
        options.update(overrides)
        return LLMConfig(url, "scripted-model", "test-key", **options)

    return make

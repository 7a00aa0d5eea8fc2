"""`solar analyze/ir --frontend ... --llm-*` and `solar llm-cache list|show|clear` with the
scripted server; configuration from flags and the environment."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from solar.cli import main
from solar.errors import UsageError
from solar.frontends.llm.config import config_from
from solar.ir.parser import parse_program
from tests.frontends.llm import programs
from tests.frontends.llm.server import ScriptedServer, reply

EXAMPLE = str(Path(__file__).resolve().parents[3] / "examples" / "llm" / "data_dependent.py")


@pytest.fixture(autouse=True)
def no_env(monkeypatch) -> None:
    for name in (
        "SOLAR_LLM_BASE_URL",
        "SOLAR_LLM_MODEL",
        "SOLAR_LLM_API_KEY",
        "OPENAI_API_KEY",
        "SOLAR_LLM_CACHE",
    ):
        monkeypatch.delenv(name, raising=False)


def test_analyze_with_the_scripted_server(with_examples, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the provenance line unwrapped
    with ScriptedServer([reply(programs.DATA_DEPENDENT)]) as server:
        flags = [
            "--llm-base-url",
            server.url,
            "--llm-model",
            "m1",
            "--llm-cache",
            str(with_examples),
        ]
        assert main(["analyze", EXAMPLE, "--json", *flags]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["provenance"][0]["source"] == "llm" and data["provenance"][0]["model"] == "m1"
        assert len(data["provenance"][0]["shapes"]) >= 2
        assert any(
            a.startswith("IR of data_dependent.py (whole program): written by LLM m1")
            for a in data["assumptions"]
        )
        assert main(["analyze", EXAMPLE, "--verbose", *flags]) == 0  # the table, from the cache: no request
        assert "from the cache, re-verified" in capsys.readouterr().out
        assert main(["ir", EXAMPLE, *flags]) == 0
        text = capsys.readouterr().out
        assert len(server.requests) == 1
    assert text.startswith("# IR of data_dependent.py (whole program): written by LLM m1")
    assert parse_program(text).name == "data_dependent"  # the provenance lines are comments
    assert main(["llm-cache", "list", "--llm-cache", str(with_examples)]) == 0
    listing = capsys.readouterr().out
    assert (
        listing.startswith("1 accepted translation(s)")
        and "data_dependent.py (whole program)" in listing
    )
    key = listing.splitlines()[1].split()[0]
    assert main(["llm-cache", "show", key, "--llm-cache", str(with_examples)]) == 0
    shown = capsys.readouterr().out
    assert (
        "# matched at BATCH=64, FEATURES=128" in shown
        and parse_program(shown).name == "data_dependent"
    )
    assert main(["llm-cache", "clear", "--llm-cache", str(with_examples)]) == 0
    assert "removed 2 file(s)" in capsys.readouterr().out  # the translation and the examples


def test_traced_program_says_so(capsys) -> None:
    matmul = str(Path(EXAMPLE).parents[1] / "matmul.py")
    assert main(["ir", matmul]) == 0  # all traced: the IR as before, no header
    assert capsys.readouterr().out.startswith("program matmul {")
    assert main(["analyze", matmul, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["provenance"] == [
        {"part": "the whole program", "source": "traced", "model": "", "attempts": 0, "requests": 0,
         "max_error": 0.0, "shapes": [], "cached": False}
    ]
    assert "IR of the whole program: traced" in data["assumptions"]


def test_without_an_endpoint_the_error_has_a_hint(capsys) -> None:
    assert main(["analyze", EXAMPLE]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        len(err.splitlines()) == 1
        and "could not trace the model" in err
        and "SOLAR_LLM_BASE_URL" in err
    )
    assert main(["analyze", EXAMPLE, "--frontend", "llm"]) == 2
    assert "--frontend llm needs an endpoint" in capsys.readouterr().err


def test_show_unknown_key(tmp_path, capsys) -> None:
    assert main(["llm-cache", "show", "abc", "--llm-cache", str(tmp_path)]) == 2
    assert "no cache entries match 'abc'" in capsys.readouterr().err


def test_config_from_flags_and_environment(monkeypatch) -> None:
    assert config_from() is None
    monkeypatch.setenv("SOLAR_LLM_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("SOLAR_LLM_MODEL", "qwen")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    c = config_from(attempts=5)
    assert (c.base_url, c.model, c.api_key, c.attempts, c.temperature) == (
        "http://localhost:11434/v1",
        "qwen",
        "sk-test",
        5,
        0.0,
    )
    monkeypatch.setenv("SOLAR_LLM_API_KEY", "solar-key")  # solar's own variable wins
    assert (
        config_from(model="other").api_key == "solar-key"
        and config_from(model="other").model == "other"
    )
    monkeypatch.delenv("SOLAR_LLM_MODEL")
    with pytest.raises(UsageError, match="needs both an endpoint and a model"):
        config_from()
    with pytest.raises(UsageError, match="--llm-attempts must be at least 1"):
        config_from(model="m", attempts=0)


@pytest.mark.parametrize(
    "value, message",
    [
        (120.0, None),
        (0.5, None),
        (0.0, "--llm-timeout 0.0: a request deadline is seconds > 0"),
        (-1.0, "--llm-timeout -1.0: a request deadline is seconds > 0"),
        (float("nan"), "--llm-timeout nan: a request deadline"),
        (float("inf"), "--llm-timeout inf: a request deadline"),
    ],
)
def test_the_request_deadline_is_positive_and_finite(value, message) -> None:
    if message is None:
        assert config_from("http://127.0.0.1:9/v1", "m", timeout_s=value).timeout_s == value
        return
    with pytest.raises(UsageError, match=message):
        config_from("http://127.0.0.1:9/v1", "m", timeout_s=value)


def test_an_unwritable_cache_fails_before_any_request(capsys) -> None:
    # no server listens on port 9: a request would be a connection error, not this line
    argv = ["analyze", EXAMPLE, "--frontend", "llm", "--llm-base-url", "http://127.0.0.1:9/v1",
            "--llm-model", "m", "--llm-cache", "/proc/solar-llm-cache"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    # the reason in parentheses is the system's (ENOENT for root, EACCES for others)
    assert re.fullmatch(
        r"solar: error: --llm-cache /proc/solar-llm-cache: cannot write there \(.+\); "
        r"name a path in a folder you can write",
        line,
    )


def test_with_an_endpoint_the_default_cache_is_checked_too(monkeypatch, capsys) -> None:
    monkeypatch.setenv("SOLAR_LLM_CACHE", "/proc/solar-llm-cache")
    argv = ["analyze", EXAMPLE, "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("solar: error: --llm-cache /proc/solar-llm-cache: cannot write there (")

"""The translation loop against a scripted OpenAI-compatible server, driven by the real openai
client: what is accepted, what goes back to the model, and what is never done with a reply."""

from __future__ import annotations

import numpy as np
import pytest

from solar.errors import LLMError
from solar.frontends.llm.client import ChatClient
from solar.frontends.llm.reference import Case
from solar.frontends.llm.synth import Task, synthesise
from tests.frontends.llm.programs import DOUBLE, DOUBLE_WRONG
from tests.frontends.llm.server import ScriptedServer, Step, reply


def _cases():
    rng = np.random.default_rng(0)
    for shape in ((4, 3), (2, 5), (6, 1)):
        x = rng.standard_normal(shape).astype(np.float32)
        yield Case(f"x: {list(shape)}", (x,), {}, (2 * x,), 2e-4)


def _task(content: str = "y = 2 * x") -> Task:
    messages = ({"role": "system", "content": "write IR"}, {"role": "user", "content": content})
    return Task("program", "double", content, messages, _cases)


def _run(steps, make_config, **options):
    with ScriptedServer(steps) as server:
        config = make_config(server.url, **options)
        client = ChatClient(config)
        try:
            return synthesise(_task(), config, client), server.requests, client
        except LLMError as exc:
            return exc, server.requests, client


def test_correct_reply(make_config) -> None:
    accepted, requests, _ = _run([reply(DOUBLE)], make_config)
    assert len(requests) == 1
    assert requests[0]["temperature"] == 0 and requests[0]["model"] == "scripted-model"
    assert accepted.provenance.attempts == 1 and accepted.provenance.max_error == 0.0
    assert len(accepted.provenance.shapes) == 3  # matched at every binding
    assert accepted.program.name == "double"


def test_fences_and_chatter_are_ignored(make_config) -> None:
    text = f"Sure! Here is the IR you asked for.\n\n```ir\n{DOUBLE}```\n\nIt doubles x. {{not IR}}"
    accepted, requests, _ = _run([reply(text)], make_config)
    assert accepted.provenance.attempts == 1 and len(requests) == 1


def test_malformed_ir_gets_the_parse_error_back(make_config) -> None:
    bad = DOUBLE.replace("y[i, j] = x[i, j] * 2.0", "y[i, j] = x[i, j] ** 2.0")
    accepted, requests, _ = _run([reply(bad), reply(DOUBLE)], make_config)
    assert accepted.provenance.attempts == 2
    feedback = requests[1]["messages"][-1]["content"]
    assert "line 7" in feedback and "powers are written pow(a, b)" in feedback


def test_wrong_result_then_right_after_the_diff(make_config) -> None:
    accepted, requests, _ = _run([reply(DOUBLE_WRONG), reply(DOUBLE)], make_config)
    assert accepted.provenance.attempts == 2 and len(requests) == 2
    assert requests[1]["messages"][-2]["content"] == DOUBLE_WRONG  # the conversation is kept
    feedback = requests[1]["messages"][-1]["content"]
    assert "output y: max relative error" in feedback and "expected y[" in feedback
    assert "the IR gave" in feedback and "x: [4, 3]" in feedback


def test_python_and_commands_in_a_reply_are_never_run(make_config, tmp_path) -> None:
    marker = tmp_path / "pwned"
    text = (
        "Run this first:\n```python\nimport pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran')\n```\n"
        f"Then run `touch {marker}` in a shell.\n"
        f"__import__('os').system('touch {marker}')\n"
    )
    result, requests, _ = _run([reply(text)] * 2, make_config, attempts=2)
    assert isinstance(result, LLMError) and "no IR" in str(result) and "2 attempt(s)" in str(result)
    assert "no complete IR program" in requests[1]["messages"][-1]["content"]
    assert not marker.exists()
    # with an IR block beside the code, the IR is used and the code still is not
    accepted, _, _ = _run([reply(text + "\n" + DOUBLE)], make_config)
    assert accepted.provenance.attempts == 1 and not marker.exists()


def test_huge_reply_is_bounded(make_config) -> None:
    huge = "x" * 300_000 + DOUBLE
    result, requests, _ = _run([reply(huge)], make_config, attempts=1, max_reply_chars=100_000)
    assert isinstance(result, LLMError) and "over the bound of 100000" in str(result)
    accepted, requests, _ = _run([reply(huge), reply(DOUBLE)], make_config, max_reply_chars=100_000)
    assert accepted.provenance.attempts == 2
    assert "reply with the IR block only" in requests[1]["messages"][-1]["content"]


def test_huge_body_is_not_read_whole(make_config) -> None:
    huge = "y" * 5_000_000  # 5 MB: reading stops a little past 4 bytes per allowed character
    result, _, client = _run([reply(huge)], make_config, attempts=1, max_reply_chars=1000)
    assert isinstance(result, LLMError) and "bytes (or more), over the bound of 1000" in str(result)
    assert client.usage.tokens == 0


def test_timeout(make_config) -> None:
    slow = Step(text=DOUBLE, delay_s=2.0)
    result, requests, client = _run([slow, slow], make_config, timeout_s=0.2, retries=1)
    assert isinstance(result, LLMError)
    assert "request timed out after 2 tries" in str(result)
    assert client.usage.requests == 2


def test_rate_limit_then_success(make_config) -> None:
    steps = [
        Step(status=429, text="slow down", headers={"retry-after": "0"}),
        Step(status=503),
        reply(DOUBLE),
    ]
    accepted, requests, client = _run(steps, make_config)
    assert len(requests) == 3 and client.usage.requests == 3
    assert accepted.provenance.requests == 3 and accepted.provenance.attempts == 1


def test_client_error_is_not_retried(make_config) -> None:
    result, requests, _ = _run([Step(status=401, text="bad key")], make_config)
    assert isinstance(result, LLMError) and "HTTP 401" in str(result) and len(requests) == 1


def test_token_budget(make_config) -> None:
    result, requests, _ = _run([reply(DOUBLE_WRONG)] * 3, make_config, token_budget=200)
    assert isinstance(result, LLMError) and "token budget of 200 spent" in str(result)
    assert len(requests) == 2  # 150 tokens each: the third request is never sent
    assert requests[0]["max_tokens"] == 200 and requests[1]["max_tokens"] == 50


def test_cache_hit_makes_no_request(make_config) -> None:
    first, _, _ = _run([reply(DOUBLE)], make_config)
    assert not first.provenance.cached
    again, requests, _ = _run([], make_config)  # an empty script: any request would fail
    assert requests == [] and again.provenance.cached and again.provenance.requests == 0
    assert again.text == first.text


def test_stale_cache_entry_is_translated_again(make_config, cache_dir) -> None:
    from solar.frontends.llm.cache import Store

    _run([reply(DOUBLE)], make_config)
    store = Store(cache_dir)
    (entry,) = store.entries()
    store.put(type(entry)(**{**entry.__dict__, "ir": DOUBLE_WRONG}))  # now wrong: re-verify fails
    accepted, requests, _ = _run([reply(DOUBLE)], make_config)
    assert len(requests) == 1 and not accepted.provenance.cached


def test_one_binding_is_not_enough(make_config) -> None:
    one = lambda: [next(_cases())]
    task = Task("program", "double", "one", ({"role": "user", "content": "x"},), one)
    with ScriptedServer([reply(DOUBLE)]) as server:
        with pytest.raises(LLMError, match="ran at only 1 shape binding"):
            synthesise(task, make_config(server.url))
        assert server.requests == []  # refused before spending a request


def test_hardcoded_sizes_are_caught(make_config) -> None:
    fixed = DOUBLE.replace("f32[N, M]", "f32[4, 3]").replace("0..N", "0..4").replace("0..M", "0..3")
    result, requests, _ = _run([reply(fixed)], make_config, attempts=1)
    assert isinstance(result, LLMError) and "write sizes as symbols" in str(result)


def test_free_symbol_is_named(make_config) -> None:
    fixed = DOUBLE.replace("f32[N, M]", "f32[4, 3]")
    result, _, _ = _run([reply(fixed)], make_config, attempts=1)
    assert isinstance(result, LLMError) and "size symbol(s) M, N are no dimension" in str(result)

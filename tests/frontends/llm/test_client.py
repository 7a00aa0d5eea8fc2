"""The chat client against a scripted server: one deadline bounds a whole request however slowly the
server sends (headers or body dripped a byte at a time), and a response body that nests or numbers
past solar.bounded's limits is one LLMError line, not a RecursionError or a ValueError."""

from __future__ import annotations

import re
import threading

import pytest

from solar.errors import LLMError
from solar.frontends.llm.client import ChatClient
from tests.frontends.llm.server import ScriptedServer, Step

MESSAGES = [{"role": "user", "content": "write IR"}]
# Far above the 1 s deadline the drip tests set: a request still running then is a hang.
CEILING_S = 60.0


def _complete(steps, make_config, **options) -> BaseException | object:
    """What `complete` returns or raises, run in a thread given CEILING_S (a hang fails the test)."""
    outcome: dict = {}
    with ScriptedServer(steps) as server:
        client = ChatClient(make_config(server.url, **options))

        def call() -> None:
            try:
                outcome["value"] = client.complete(MESSAGES)
            except BaseException as exc:  # noqa: BLE001 - the test inspects it
                outcome["value"] = exc

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(CEILING_S)
        assert not worker.is_alive(), f"the request was still running after {CEILING_S:g} s"
    return outcome["value"]


@pytest.mark.parametrize("part", ["headers", "body"])
def test_one_deadline_bounds_a_request_the_server_drips(part, make_config) -> None:
    drip = Step(drip=part, drip_s=0.2)
    result = _complete([drip, drip], make_config, timeout_s=1.0, retries=1)
    assert isinstance(result, LLMError)
    message = str(result)
    assert "request timed out after 2 tries (1 s each, the whole request; raise --llm-timeout" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "body, message",
    [
        (b"[" * 100_000, r"the response: JSON nested too deeply"),
        (b'{"choices": [], "usage": {"total_tokens": ' + b"9" * 5000 + b"}}", r"the response: a number of 5000 digits \(at most 40\)"),
        (b"<html>busy</html>", r"the response:1:1: not JSON"),
        (b'{"choices": 3}', r"the response is not a chat completion"),
    ],
    ids=["deep-nesting", "5000-digit-number", "html", "no-choices"],
)
def test_a_malformed_response_is_one_line(body, message, make_config) -> None:
    result = _complete([Step(body=body)], make_config, retries=0)
    assert isinstance(result, LLMError)
    assert "\n" not in str(result)
    assert re.search(message, str(result)), str(result)

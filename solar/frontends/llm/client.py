"""One chat request to an OpenAI-compatible endpoint through the `openai` client, at temperature 0,
with one deadline for the whole request (however slowly the server sends), retries with exponential
backoff on 429 / 5xx / timeouts / lost connections, a reply size bound, and the token spend of one
program counted against its budget. The reply is returned as text and nothing else is done with it
here."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from solar.bounded import loads_json
from solar.errors import LLMError
from solar.frontends.llm.config import LLMConfig

Message = dict[str, str]


@dataclass
class Usage:
    """What one program (or one missing op) cost: requests sent (retries included) and tokens."""

    requests: int = 0
    tokens: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Reply:
    text: str
    tokens: int


def _tokens_estimate(messages: list[Message], text: str) -> int:
    return (sum(len(m["content"]) for m in messages) + len(text)) // 4 + 1


@dataclass
class ChatClient:
    config: LLMConfig
    usage: Usage = field(default_factory=Usage)
    _client: object = None

    def _openai(self):
        if self._client is None:
            try:
                import openai
            except ImportError:  # pragma: no cover - a dev dependency
                raise LLMError(
                    "the LLM frontend needs the openai package: pip install 'solar-sol[llm]'"
                ) from None
            self._client = openai.OpenAI(
                base_url=self.config.base_url,
                api_key=self.config.api_key,
                timeout=self.config.timeout_s,
                max_retries=0,  # retried here, so that every request is counted
            )
        return self._client

    def complete(self, messages: list[Message]) -> Reply:
        """The model's reply to `messages`; LLMError when the budget is spent, the endpoint keeps
        failing, or the reply is too long."""
        import openai

        left = self.config.token_budget - self.usage.tokens
        if left <= 0:
            raise LLMError(
                f"token budget of {self.config.token_budget} spent ({self.usage.requests} requests); "
                "raise it or simplify the program"
            )
        retryable = (
            openai.RateLimitError,
            openai.InternalServerError,
            openai.APITimeoutError,
            openai.APIConnectionError,
            DeadlinePassed,
        )
        wait = self.config.backoff_s
        for attempt in range(self.config.retries + 1):
            self.usage.requests += 1
            start = time.monotonic()
            try:
                body = self._within_deadline(messages, min(self.config.max_reply_tokens, left))
            except retryable as exc:
                self.usage.seconds += time.monotonic() - start
                if attempt == self.config.retries:
                    raise LLMError(
                        f"{self._where()}: {_describe(exc)} after {attempt + 1} tries{self._deadline_note(exc)}"
                    ) from None
                time.sleep(max(wait, _retry_after(exc)))
                wait *= 2
                continue
            except openai.APIStatusError as exc:
                raise LLMError(f"{self._where()}: {_describe(exc)}") from None
            except openai.OpenAIError as exc:
                raise LLMError(
                    f"{self._where()}: {type(exc).__name__}: {str(exc).splitlines()[0]}"
                ) from None
            self.usage.seconds += time.monotonic() - start
            return self._reply(messages, body)
        raise AssertionError("unreachable")

    def _within_deadline(self, messages: list[Message], max_tokens: int) -> bytes:
        """The response body of one request, or DeadlinePassed once config.timeout_s has passed
        since it was sent, whatever the server does (the client's own timeout bounds each read
        only, so a server that drips bytes would hold it forever). The request runs in a thread of
        its own; one past the deadline is abandoned (its reads stop at the next chunk) and the
        client is rebuilt for the next try."""
        deadline = time.monotonic() + self.config.timeout_s
        client = self._openai()
        outcome: dict[str, object] = {}

        def request() -> None:
            try:
                create = client.chat.completions.with_streaming_response.create
                with create(
                    model=self.config.model,
                    messages=messages,
                    temperature=self.config.temperature,
                    max_tokens=max_tokens,
                ) as raw:
                    outcome["body"] = self._read_bounded(raw, deadline)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=request, name="solar-llm-request", daemon=True)
        worker.start()
        worker.join(self.config.timeout_s)
        if worker.is_alive():
            self._client = None  # the abandoned request keeps its connection; the next try gets a new one
            raise DeadlinePassed()
        if "error" in outcome:
            raise outcome["error"]  # type: ignore[misc]
        return outcome["body"]  # type: ignore[return-value]

    def _read_bounded(self, raw, deadline: float) -> bytes:
        """The response body, read in chunks and abandoned past the size bound (a reply of
        max_reply_chars characters, 4 bytes each at most, plus the JSON around it) or the deadline."""
        limit = 4 * self.config.max_reply_chars + (1 << 16)
        body = bytearray()
        for chunk in raw.iter_bytes():
            body += chunk
            if len(body) > limit:
                raise ReplyTooLong(len(body), self.config.max_reply_chars, unit="bytes (or more)")
            if time.monotonic() > deadline:
                raise DeadlinePassed()
        return bytes(body)

    def _reply(self, messages: list[Message], body: bytes) -> Reply:
        """The reply text and its token count, from the JSON body (read as data only)."""
        data = loads_json(body, f"{self._where()}: the response", LLMError)
        try:
            choices = data.get("choices") or []
            text = (choices[0].get("message") or {}).get("content") or "" if choices else ""
            used = (data.get("usage") or {}).get("total_tokens")
        except (ValueError, AttributeError, TypeError, IndexError):
            raise LLMError(
                f"{self._where()}: the response is not a chat completion (JSON with choices)"
            ) from None
        if not isinstance(text, str):
            raise LLMError(f"{self._where()}: the reply's content is not text")
        tokens = (
            int(used) if isinstance(used, int) and used > 0 else _tokens_estimate(messages, text)
        )
        self.usage.tokens += tokens
        if len(text) > self.config.max_reply_chars:
            raise ReplyTooLong(len(text), self.config.max_reply_chars)
        return Reply(text, tokens)

    def _deadline_note(self, exc: BaseException) -> str:
        import openai

        if isinstance(exc, (DeadlinePassed, openai.APITimeoutError)):
            return f" ({self.config.timeout_s:g} s each, the whole request; raise --llm-timeout for a slow server)"
        return ""

    def _where(self) -> str:
        return f"LLM endpoint {self.config.base_url} (model {self.config.model})"


class DeadlinePassed(Exception):
    """One request ran past its deadline (retried as a timeout is)."""


class ReplyTooLong(LLMError):
    """A reply over the size bound: refused without being read further."""

    def __init__(self, size: int, limit: int, unit: str = "characters") -> None:
        super().__init__(
            f"the reply has {size} {unit}, over the bound of {limit} characters; it was not read"
        )
        self.size = size


def _describe(exc) -> str:
    import openai

    if isinstance(exc, (DeadlinePassed, openai.APITimeoutError)):
        return "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect ({str(exc).splitlines()[0]})"
    status = getattr(exc, "status_code", "?")
    return f"HTTP {status}: {str(getattr(exc, 'message', exc)).splitlines()[0][:200]}"


def _retry_after(exc) -> float:
    """Seconds a 429/503 response asks to wait (Retry-After), capped at one minute."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(float(value), 60.0) if value else 0.0
    except ValueError:
        return 0.0

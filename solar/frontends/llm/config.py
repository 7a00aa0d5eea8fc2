"""Where the LLM frontend sends its requests and how much it may spend: endpoint, model, key,
timeouts, retries, the token budget per program, attempts, and the cache directory. Read from flags
first, then the environment (SOLAR_LLM_BASE_URL, SOLAR_LLM_MODEL, SOLAR_LLM_API_KEY or
OPENAI_API_KEY)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from solar.errors import UsageError

ENV_BASE_URL = "SOLAR_LLM_BASE_URL"
ENV_MODEL = "SOLAR_LLM_MODEL"
ENV_KEYS = ("SOLAR_LLM_API_KEY", "OPENAI_API_KEY")
ENV_CACHE = "SOLAR_LLM_CACHE"


def default_cache_dir() -> Path:
    """$SOLAR_LLM_CACHE, else $XDG_CACHE_HOME/solar/llm, else ~/.cache/solar/llm."""
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "solar" / "llm"


def check_timeout(seconds: float) -> float:
    """A request deadline: seconds, finite and > 0 (one deadline bounds the whole request)."""
    if not (math.isfinite(seconds) and seconds > 0):
        raise UsageError(f"--llm-timeout {seconds!r}: a request deadline is seconds > 0 (e.g. 120)")
    return seconds


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = "none"  # local servers (vLLM, Ollama) accept any key
    timeout_s: float = 120.0  # the deadline of one request, however the server sends its reply
    retries: int = (
        4  # further tries of one request after a 429, a 5xx, a timeout or a lost connection
    )
    backoff_s: float = (
        1.0  # first wait; doubles each retry (a server's Retry-After wins when longer)
    )
    token_budget: int = 200_000  # prompt + completion tokens per program (or per missing op)
    max_reply_tokens: int = 8192
    max_reply_chars: int = 100_000  # a longer reply is refused unread
    attempts: int = 3  # rounds of reply -> check -> feedback
    cache_dir: Path | None = None  # None: default_cache_dir()
    temperature: float = 0.0

    @property
    def cache_path(self) -> Path:
        return Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()


def config_from(
    base_url: str | None = None,
    model: str | None = None,
    attempts: int | None = None,
    cache_dir: str | Path | None = None,
    timeout_s: float | None = None,
) -> LLMConfig | None:
    """The configuration from flags, falling back to the environment; None when no endpoint is
    configured (no base URL and no model anywhere)."""
    url = base_url or os.environ.get(ENV_BASE_URL)
    name = model or os.environ.get(ENV_MODEL)
    if not url and not name:
        return None
    if not url or not name:
        missing = (
            "--llm-base-url (or SOLAR_LLM_BASE_URL)"
            if not url
            else "--llm-model (or SOLAR_LLM_MODEL)"
        )
        raise UsageError(f"the LLM frontend needs both an endpoint and a model; set {missing}")
    key = next((os.environ[k] for k in ENV_KEYS if os.environ.get(k)), "none")
    extra: dict = {}
    if attempts is not None:
        if attempts < 1:
            raise UsageError(f"--llm-attempts must be at least 1, got {attempts}")
        extra["attempts"] = attempts
    if timeout_s is not None:
        extra["timeout_s"] = check_timeout(timeout_s)
    return LLMConfig(url, name, key, cache_dir=Path(cache_dir) if cache_dir else None, **extra)

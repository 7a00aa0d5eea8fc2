"""The translation loop: ask, extract the IR block, parse, check at every shape binding, and send
what failed back, at most `attempts` rounds. Accepted only when every affordable binding matches and
at least two do. A cached translation costs no request and is re-checked the same way."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from solar.errors import IRSyntaxError, IRVerifyError, LLMError, NotAffineError
from solar.frontends.llm import cache as cache_mod
from solar.frontends.llm.check import Outcome, check_case
from solar.frontends.llm.client import ChatClient, Message, ReplyTooLong
from solar.frontends.llm.config import LLMConfig
from solar.frontends.llm.prompt import feedback_message
from solar.frontends.llm.reference import Case
from solar.frontends.loaded import Provenance
from solar.frontends.llm.reply import NoProgram, extract_program
from solar.ir.nodes import Program
from solar.ir.parser import parse_program

MIN_BINDINGS = 2
MAX_CASES = 4  # real sizes (when small), a variant, the same with small inputs, another variant


@dataclass(frozen=True)
class Accepted:
    program: Program  # over size symbols
    text: str
    provenance: Provenance


@dataclass(frozen=True)
class Task:
    kind: str  # "program" | "op"
    part: str  # what the provenance names
    content: str  # hashed for the cache: the program's source or the op's signature
    messages: tuple[Message, ...]
    cases: Callable[[], Iterable[Case]]


def _judge(program: Program, cases: list[Case]) -> tuple[list[Outcome], list[str]]:
    outcomes = [check_case(program, c) for c in cases]
    problems = [o.message for o in outcomes if not o.ok and not o.skipped]
    passed = [o for o in outcomes if o.ok]
    if not problems and len(passed) < MIN_BINDINGS:
        problems.append(
            f"only {len(passed)} shape binding(s) could be checked (the others are too large for the "
            "interpreter); at least two are needed"
        )
    return outcomes, problems


def _accept(
    task: Task,
    text: str,
    program: Program,
    outcomes: list[Outcome],
    config: LLMConfig,
    attempts: int,
    requests: int,
    cached: bool,
    seconds: float,
) -> Accepted:
    passed = [o for o in outcomes if o.ok]
    prov = Provenance(
        task.part,
        "llm",
        config.model,
        attempts,
        requests,
        max(o.error for o in passed),
        tuple(o.label for o in passed),
        cached,
        seconds,
    )
    return Accepted(program, text, prov)


def synthesise(task: Task, config: LLMConfig, client: ChatClient | None = None) -> Accepted:
    """A checked IR for `task`, from the cache or from the model (LLMError when none is found)."""
    start = time.monotonic()
    client = client or ChatClient(config)
    store = cache_mod.Store(config.cache_path)
    key = cache_mod.key_of(task.kind, task.content, config.model)
    cases = list(itertools.islice(task.cases(), MAX_CASES))
    if len(cases) < MIN_BINDINGS:
        raise LLMError(
            f"{task.part}: the original ran at only {len(cases)} shape binding(s); the LLM frontend needs "
            "two (a file varies its integer size constants >= 8; make sizes module constants)"
        )
    hit = store.get(key)
    if hit is not None:
        try:
            program = parse_program(hit.ir)
            outcomes, problems = _judge(program, cases)
        except (IRSyntaxError, NotAffineError):
            problems = ["unparsable"]
        if not problems:
            return _accept(
                task,
                hit.ir,
                program,
                outcomes,
                config,
                hit.attempts,
                0,
                True,
                time.monotonic() - start,
            )
        store.drop(key)  # stale (e.g. the IR changed meaning): translate again
    messages = list(task.messages)
    last = ""
    for attempt in range(1, config.attempts + 1):
        try:
            reply = client.complete(messages)
        except ReplyTooLong as exc:
            messages.append({"role": "assistant", "content": "(reply withheld: too long)"})
            messages.append(
                {
                    "role": "user",
                    "content": feedback_message([f"{exc}; reply with the IR block only"]),
                }
            )
            last = str(exc)
            continue
        messages.append({"role": "assistant", "content": reply.text})
        try:
            text = extract_program(reply.text)
            program = parse_program(text)
            outcomes, problems = _judge(program, cases)
        except (NoProgram, IRSyntaxError, NotAffineError, IRVerifyError) as exc:
            problems = [str(exc)]
        if not problems:
            accepted = _accept(
                task,
                text,
                program,
                outcomes,
                config,
                attempt,
                client.usage.requests,
                False,
                time.monotonic() - start,
            )
            store.put(
                cache_mod.Entry(
                    key,
                    task.kind,
                    task.part,
                    config.model,
                    text,
                    attempt,
                    [[o.label, o.error] for o in outcomes if o.ok],
                    cache_mod.now(),
                )
            )
            return accepted
        last = problems[0].splitlines()[0]
        messages.append({"role": "user", "content": feedback_message(problems)})
    raise LLMError(
        f"{task.part}: no IR from {config.model} matched the original in {config.attempts} attempt(s) "
        f"({client.usage.requests} requests); last problem: {last}"
    )

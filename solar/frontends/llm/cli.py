"""Command-line pieces of the LLM frontend: the --frontend/--llm-* flags of `solar analyze` and
`solar ir`, and `solar llm-cache list|show|clear`."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from solar.errors import UsageError
from solar.frontends.llm.cache import Store
from solar.frontends.llm.config import check_timeout, config_from, default_cache_dir
from solar.userfiles import check_writable_dir


def add_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("frontend", "which frontend turns the program into IR")
    g.add_argument(
        "--frontend",
        choices=("auto", "torch", "jax", "llm"),
        default="auto",
        help="auto (default): the tracer, and an LLM for what it cannot do when an endpoint is set; "
        "llm: the LLM writes the whole program's IR",
    )
    g.add_argument(
        "--llm-base-url",
        default=None,
        metavar="URL",
        help="OpenAI-compatible endpoint (env SOLAR_LLM_BASE_URL)",
    )
    g.add_argument(
        "--llm-model",
        default=None,
        metavar="NAME",
        help="model name (env SOLAR_LLM_MODEL); key from SOLAR_LLM_API_KEY or OPENAI_API_KEY",
    )
    g.add_argument(
        "--llm-attempts",
        type=_attempts,
        default=None,
        metavar="N",
        help="rounds of reply -> check -> feedback (default 3)",
    )
    g.add_argument(
        "--llm-cache",
        default=None,
        metavar="DIR",
        help="cache of accepted translations (default ~/.cache/solar/llm)",
    )
    g.add_argument(
        "--llm-timeout",
        type=_deadline,
        default=None,
        metavar="S",
        help="seconds one request may take in all, however slowly the server answers (default 120)",
    )


def _attempts(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of attempts") from None
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text!r}: attempts are 1..100 (default 3)")
    return value


def _deadline(text: str) -> float:
    try:
        return check_timeout(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def check(args: argparse.Namespace) -> None:
    """Before any work: the cache folder can be written (accepted translations are stored there),
    when --llm-cache names one or an endpoint is set (then the default one)."""
    llm = config(args)
    if args.llm_cache is not None or llm is not None:
        path = args.llm_cache if args.llm_cache is not None else llm.cache_path
        check_writable_dir(path, "--llm-cache", UsageError)


def config(args: argparse.Namespace):
    return config_from(
        args.llm_base_url, args.llm_model, args.llm_attempts, args.llm_cache, args.llm_timeout
    )


def register(sub: argparse._SubParsersAction) -> None:
    """`solar llm-cache list|show|clear`."""
    c = sub.add_parser(
        "llm-cache", help="list, show or clear the LLM frontend's accepted translations"
    )
    c.add_argument("action", choices=("list", "show", "clear"))
    c.add_argument("key", nargs="?", default=None, help="for show: a key or a unique prefix of one")
    c.add_argument(
        "--llm-cache",
        default=None,
        metavar="DIR",
        help="cache directory (default ~/.cache/solar/llm)",
    )
    c.set_defaults(fn=cmd_cache)


def cmd_cache(args: argparse.Namespace) -> int:
    store = Store(Path(args.llm_cache) if args.llm_cache else default_cache_dir())
    if args.action == "list":
        entries = store.entries()
        print(f"{len(entries)} accepted translation(s) in {store.root}")
        for e in entries:
            when = datetime.datetime.fromtimestamp(e.created).strftime("%Y-%m-%d %H:%M")
            print(
                f"  {e.key[:12]}  {e.kind:7}  {e.what}  model={e.model}  attempts={e.attempts}  {when}"
            )
        return 0
    if args.action == "show":
        if not args.key:
            raise UsageError("`solar llm-cache show KEY` needs a key (see `solar llm-cache list`)")
        e = store.find(args.key)
        print(
            f"# {e.kind} {e.what}, model {e.model}, {e.attempts} attempt(s), solar {e.solar_version}"
        )
        for label, error in e.checks:
            print(f"# matched at {label}: max relative error {error:.2g}")
        print(e.ir, end="")
        return 0
    print(f"removed {store.clear()} file(s) from {store.root}")
    return 0

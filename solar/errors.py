"""The one error family of solar. The CLI prints these as one line (exit 2); anything else is a bug."""

from __future__ import annotations


class SolarError(Exception):
    """Base of every error solar reports to a user: the message says what, where and what to do."""


class UnsupportedOpError(SolarError):
    """A frontend met an op that has no lowering."""


class NotAffineError(SolarError):
    """An access or guard is not (quasi-)affine in the loop variables."""


class IRSyntaxError(SolarError):
    """IR text that does not parse."""


class IRVerifyError(SolarError):
    """An IR program that is malformed (shapes, bounds, use before definition, dtypes)."""


class SpecError(SolarError):
    """A hardware spec file that is malformed, or an unknown GPU name."""


class ModelFileError(SolarError):
    """A model file that cannot be loaded, or that does not follow the file convention."""


class TraceError(ModelFileError):
    """The tracer (torch.export) could not trace a program that loads and builds fine."""


class LLMError(SolarError):
    """The LLM frontend could not obtain a verified program."""


class UsageError(SolarError):
    """Bad flags or arguments."""


class AnalysisTimeout(SolarError):
    """The analysis ran past its wall-clock limit (`--timeout`)."""


def message_line(exc: BaseException | str) -> str:
    """The one line the CLI prints for an error: its first non-blank line, whitespace collapsed
    (later lines, e.g. the statement or the caret under a syntax error, are detail)."""
    for line in str(exc).splitlines():
        if line.strip():
            return " ".join(line.split())
    return type(exc).__name__ if isinstance(exc, BaseException) else ""

"""The files a user names: reading them (model files, spec YAMLs, IR text), the one place solar
opens them, and checking before any work that an output path can be written. Every way a path can
be wrong — missing, a directory, unreadable, binary, not in its declared encoding, a null byte, too
large, not writable — is one `error(...)` line naming the file (and the line where that is known)
and saying what to pass instead."""

from __future__ import annotations

import codecs
import io
import os
import tempfile
import tokenize
from collections.abc import Callable
from pathlib import Path

from solar.errors import SolarError

# Larger than any hand-written model, spec or IR file (the whole suite's largest is ~20 KB).
MAX_BYTES = 16 << 20

ErrorType = Callable[[str], SolarError]


def read_bytes(path: str | Path, what: str, error: ErrorType, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file, or `error(one line)` saying why not. `what` names the kind of
    file expected ("a Python model file", "a spec YAML", ...)."""
    p = Path(path)
    shown = str(path)
    try:
        if p.is_dir():
            raise error(f"{shown}: is a directory; pass the path of {what}")
        if not p.exists():
            raise error(f"{shown}: no such file; pass the path of {what}")
        if not p.is_file():
            raise error(
                f"{shown}: not a regular file (a device, socket or pipe); pass the path of {what}"
            )
        size = p.stat().st_size
        if size > max_bytes:
            raise error(
                f"{shown}: {size} bytes is too large for {what} (limit {max_bytes}); check the path"
            )
        with p.open("rb") as f:
            return f.read(max_bytes + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise error(
            f"{shown}: cannot read ({reason}); pass the path of {what} you can read"
        ) from None


def _null_byte(text: str, shown: str, what: str, error: ErrorType) -> None:
    pos = text.find("\0")
    if pos >= 0:
        line = text.count("\n", 0, pos) + 1
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        raise error(f"{shown}:{line}:{column}: a null byte; {what} is text, not binary data")


def _bad_encoding(
    data: bytes, exc: UnicodeDecodeError, shown: str, encoding: str, what: str
) -> str:
    line = data.count(b"\n", 0, exc.start) + 1
    encoding = "UTF-8" if codecs.lookup(encoding).name == "utf-8" else encoding
    return (
        f"{shown}:{line}: byte 0x{data[exc.start]:02x} is not {encoding} text; {what} must be "
        f"{encoding} text (is this a binary file?)"
    )


def read_text(path: str | Path, what: str, error: ErrorType) -> str:
    """A UTF-8 text file (a BOM is allowed), with the checks of read_bytes."""
    data = read_bytes(path, what, error)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(_bad_encoding(data, exc, str(path), "UTF-8", what)) from None
    _null_byte(text, str(path), what, error)
    return text


def read_python(path: str | Path, error: ErrorType) -> str:
    """The source of a Python file, decoded as Python would (PEP 263 coding cookie, else UTF-8)."""
    what = "a Python model file"
    data = read_bytes(path, what, error)
    shown = str(path)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # not UTF-8 in its first lines, or an unknown coding cookie
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise error(_bad_encoding(data, bad, shown, "UTF-8", what)) from None
        raise error(f"{shown}: {getattr(exc, 'msg', exc)}; fix the coding line") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise error(_bad_encoding(data, exc, shown, encoding, what)) from None
    text = text.removeprefix("\ufeff")
    _null_byte(text, shown, what, error)
    return text


# ---- output paths: checked before the work that would write them ---------------------------------


def _cannot_write(what: str, shown: str, exc: OSError, error: ErrorType) -> SolarError:
    reason = exc.strerror or type(exc).__name__
    return error(f"{what} {shown}: cannot write there ({reason}); name a path in a folder you can write")


def check_writable(path: str | Path, what: str, error: ErrorType) -> None:
    """That a file can be written at `path` (`what`: the flag, e.g. "--plot"), found by trying:
    an existing file is opened for appending, a new one created and removed; nothing is changed.
    Otherwise `error(one line)`."""
    p, shown = Path(path), str(path)
    if p.is_dir():
        raise error(f"{what} {shown}: is a directory; name the file to write")
    if p.exists() and not p.is_file():
        raise error(f"{what} {shown}: not a regular file (a device, socket or pipe); name a file to write")
    if not p.exists() and not p.parent.is_dir():
        raise error(f"{what} {shown}: folder {str(p.parent)!r} does not exist; create it or name another")
    try:
        if p.exists():
            os.close(os.open(p, os.O_WRONLY | os.O_APPEND))
        else:
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            os.unlink(p)
    except OSError as exc:
        raise _cannot_write(what, shown, exc, error) from None


def check_writable_dir(path: str | Path, what: str, error: ErrorType) -> None:
    """That `path` is a folder files can be written in, or can be created as one (its nearest
    existing ancestor a folder that can be written), found by trying: a temporary file (or folder)
    is made there and removed. Otherwise `error(one line)`."""
    p, shown = Path(path), str(path)
    if p.exists() and not p.is_dir():
        raise error(f"{what} {shown}: exists and is not a folder; pass a folder")
    existing = p
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise error(f"{what} {shown}: {existing} is not a folder; pass a folder")
    try:
        if existing == p:
            fd, probe = tempfile.mkstemp(dir=p, prefix=".solar-write-check-")
            os.close(fd)
            os.unlink(probe)
        else:
            os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".solar-write-check-"))
    except OSError as exc:
        raise _cannot_write(what, shown, exc, error) from None

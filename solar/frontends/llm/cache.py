"""Accepted translations on disk, one JSON file per content hash of what was translated (a
program's source or an op's signature), the model and the solar version. A hit costs no request;
the caller re-verifies it before use."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from solar.version import __version__
from solar.errors import UsageError


@dataclass(frozen=True)
class Entry:
    key: str
    kind: str  # "program" | "op"
    what: str  # the file name or the op
    model: str
    ir: str  # the accepted IR, over size symbols
    attempts: int
    checks: list  # [label, max error] per shape binding it matched at
    created: float
    solar_version: str = __version__


def key_of(kind: str, content: str, model: str) -> str:
    return hashlib.sha256(f"{kind}\0{content}\0{model}\0{__version__}".encode()).hexdigest()


@dataclass(frozen=True)
class Store:
    root: Path

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def get(self, key: str) -> Entry | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            return Entry(**json.loads(path.read_text()))
        except (ValueError, TypeError, RecursionError):
            return None  # damaged: treated as a miss and overwritten

    def put(self, entry: Entry) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self._path(entry.key).with_suffix(".tmp")
            tmp.write_text(json.dumps(asdict(entry), indent=1))
            tmp.replace(self._path(entry.key))
        except OSError as exc:
            raise UsageError(
                f"--llm-cache {self.root}: cannot store a translation ({exc.strerror or type(exc).__name__}); "
                "pass a folder you can write"
            ) from None

    def drop(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def entries(self) -> list[Entry]:
        if not self.root.is_dir():
            return []
        out = [
            self.get(p.stem)
            for p in sorted(self.root.glob("*.json"))
            if not p.name.startswith("examples-")
        ]
        return sorted((e for e in out if e is not None), key=lambda e: e.created)

    def find(self, prefix: str) -> Entry:
        matches = [e for e in self.entries() if e.key.startswith(prefix)]
        if len(matches) != 1:
            raise UsageError(
                f"{'no' if not matches else len(matches)} cache entries match {prefix!r} in {self.root}; "
                "`solar llm-cache list` shows the keys"
            )
        return matches[0]

    def clear(self) -> int:
        if not self.root.is_dir():
            return 0
        n = 0
        for p in self.root.glob("*.json"):
            p.unlink()
            n += 1
        return n


def now() -> float:
    return time.time()

"""What every gallery study writes: a markdown table (the README shows it) and a plot beside it."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def markdown_table(header: list[str], rows: list[list[object]]) -> str:
    def cell(x: object) -> str:
        return f"{x:.4g}" if isinstance(x, float) else str(x)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def write_report(name: str, title: str, body: str) -> Path:
    """examples/studies/out/NAME.md with the title and body."""
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    path = out / f"{name}.md"
    path.write_text(f"# {title}\n\n{body}")
    return path


def plot_path(name: str) -> Path:
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    return out / f"{name}.png"


def microseconds(seconds: float) -> float:
    return seconds * 1e6

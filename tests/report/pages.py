"""Reading solar's HTML pages back with html.parser: every table's header and row widths (colspan
counted), the sortable tables, <details> blocks, scripts and outside references."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Table:
    classes: tuple[str, ...]
    head: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)  # cell texts, a colspan cell repeated
    widths: list[int] = field(default_factory=list)  # cells per row, colspan counted
    cell: list[str] | None = None
    in_head: bool = False


@dataclass
class Page:
    tables: list[Table] = field(default_factory=list)
    details: int = 0
    scripts: list[str] = field(default_factory=list)  # inline script texts
    script_sources: list[str] = field(default_factory=list)  # <script src=...> (none allowed)
    links: list[str] = field(default_factory=list)  # <link> tags (none allowed)
    ids: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # text outside tables, in order


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.stack: list[Table] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.page.ids.append(a["id"] or "")
        if tag == "script":
            if a.get("src"):
                self.page.script_sources.append(a["src"] or "")
            self.in_script = True
            self.page.scripts.append("")
        elif tag == "link":
            self.page.links.append(str(a))
        elif tag == "details":
            self.page.details += 1
        elif tag == "table":
            table = Table(tuple((a.get("class") or "").split()))
            self.page.tables.append(table)
            self.stack.append(table)
        elif not self.stack:
            return
        elif tag == "thead":
            self.stack[-1].in_head = True
        elif tag == "tr":
            self.stack[-1].widths.append(0)
            self.stack[-1].rows.append([])
        elif tag in ("td", "th"):
            t = self.stack[-1]
            span = int(a.get("colspan") or 1)
            if t.in_head:
                t.head.append("")
            else:
                t.widths[-1] += span
                t.rows[-1].extend([""] * span)
            t.cell = t.head if t.in_head else t.rows[-1]

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self.in_script = False
        elif tag == "table" and self.stack:
            self.stack.pop()
        elif tag == "thead" and self.stack:
            self.stack[-1].in_head = False
            self.stack[-1].widths.pop()  # the header row is not a body row
            self.stack[-1].rows.pop()
        elif tag in ("td", "th") and self.stack:
            self.stack[-1].cell = None

    def handle_data(self, data: str) -> None:
        if self.in_script:
            self.page.scripts[-1] += data
        elif self.stack and self.stack[-1].cell is not None:
            self.stack[-1].cell[-1] += data
        elif not self.stack:
            self.page.text.append(data)


def read_page(html: str) -> Page:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.page


def check_page(html: str) -> Page:
    """The page, after checking what every solar page must be: each table as many cells per row
    as header cells, a sortable table only with the sort script, and nothing from outside."""
    page = read_page(html)
    for table in page.tables:
        if "meta" in table.classes:  # a key-value table: no header, two cells a row
            assert table.widths and set(table.widths) == {2}
            continue
        assert table.head, f"a table without a header: {table.rows[:1]}"
        assert table.widths and all(w == len(table.head) for w in table.widths), (
            f"rows of {sorted(set(table.widths))} cells under {len(table.head)} headers {table.head}"
        )
    if any("sortable" in t.classes for t in page.tables):
        assert any("table.sortable" in s and "addEventListener" in s for s in page.scripts)
    assert page.script_sources == [] and page.links == []
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    return page


def text_of(cell: str) -> str:
    return " ".join(cell.split())

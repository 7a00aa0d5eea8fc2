"""Render solar's HTML pages in headless Chromium: a screenshot of each, and whether anything runs
past the page width (a table or image wider than the window that is not inside a scroll box).

    python scripts/check_html.py OUT/report.html model.html --shots /tmp/shots [--width 1400]

Exit status 1 when a page overflows its width. Needs a Chromium binary (`apt-get install chromium`);
not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from html import unescape
from pathlib import Path

BROWSERS = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)

# Runs in the page after load: the page's scroll width, and every element whose right edge passes
# the window while no ancestor scrolls it (what a reader would have to scroll the page for).
PROBE = """<script>
addEventListener("load", function () {
  var width = document.documentElement.clientWidth, over = [];
  function scrolls(e) {
    for (var p = e.parentElement; p; p = p.parentElement) {
      var s = getComputedStyle(p).overflowX;
      if (s === "auto" || s === "scroll" || s === "hidden") return true;
    }
    return false;
  }
  document.querySelectorAll("body *").forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width && r.right > width + 1 && !scrolls(e)) {
      over.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
        (e.className ? "." + String(e.className).split(" ")[0] : "") +
        " right=" + Math.round(r.right) + " '" + (e.textContent || "").trim().slice(0, 40) + "'");
    }
  });
  var inside = [];
  document.querySelectorAll("div.scroll").forEach(function (d) {
    if (d.scrollWidth <= d.clientWidth) return;
    var th = d.querySelectorAll(":scope > table > thead > tr > th"), cols = [];
    th.forEach(function (h) { cols.push(h.textContent.trim() + " " + Math.round(h.getBoundingClientRect().width)); });
    inside.push(d.scrollWidth + ">" + d.clientWidth + " [" + cols.join(", ") + "]");
  });
  var pre = document.createElement("pre");
  pre.id = "solar-probe";
  pre.textContent = JSON.stringify({
    window: width, page: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight, overflowing: over.slice(0, 12),
    overflow_count: over.length, scroll_boxes_scrolling: inside,
    tables: document.querySelectorAll("table").length,
    details: document.querySelectorAll("details").length
  });
  document.body.appendChild(pre);
});
</script>"""


# Opens the first N <details> of the page before it is measured and shot (N set in place of OPEN).
OPENER = """<script>
document.addEventListener("DOMContentLoaded", function () {
  Array.prototype.slice.call(document.querySelectorAll("details"), 0, OPEN)
    .forEach(function (d) { d.open = true; });
});
</script>"""


def with_scripts(page: Path, work: Path, tag: str, *scripts: str) -> Path:
    """A copy of the page with `scripts` added at the end of its body."""
    copy = work / f"{tag}-{page.name}"
    html = page.read_text(encoding="utf-8")
    copy.write_text(html.replace("</body>", "".join(scripts) + "</body>", 1), encoding="utf-8")
    return copy


def browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    sys.exit("no Chromium found: apt-get install -y chromium")


def chromium(binary: str, profile: Path, *args: str, timeout_s: float = 120) -> str:
    run = subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,  # Chromium's exit status says little; the output is checked
    )
    return run.stdout


def probe(binary: str, page: Path, width: int, height: int, work: Path, opener: str) -> dict:
    """Load a copy of the page with PROBE added and read back what it measured."""
    copy = with_scripts(page, work, "probe", opener, PROBE)
    dom = chromium(
        binary,
        work / "profile",
        f"--window-size={width},{height}",
        "--virtual-time-budget=10000",
        "--dump-dom",
        copy.as_uri(),
    )
    match = re.search(r'<pre id="solar-probe">(.*?)</pre>', dom, re.DOTALL)
    if not match:
        sys.exit(f"{page}: the probe did not run (Chromium printed {len(dom)} characters)")
    return json.loads(unescape(match.group(1)))


def screenshot(
    binary: str, page: Path, width: int, height: int, shot: Path, work: Path, opener: str
) -> None:
    copy = with_scripts(page, work, "shot", opener)
    chromium(
        binary,
        work / "profile",
        f"--window-size={width},{height}",
        "--virtual-time-budget=10000",
        f"--screenshot={shot}",
        copy.as_uri(),
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pages", nargs="+", type=Path, help="HTML files")
    p.add_argument("--shots", type=Path, default=None, help="folder for PNG screenshots")
    p.add_argument("--width", type=int, default=1400, help="window width in CSS pixels")
    p.add_argument("--height", type=int, default=2000, help="screenshot height (0: the whole page)")
    p.add_argument("--open", type=int, default=0, metavar="N", help="open the first N <details>")
    args = p.parse_args(argv)
    binary = browser()
    opener = OPENER.replace("OPEN", str(args.open)) if args.open else ""
    bad = 0
    with tempfile.TemporaryDirectory(prefix="solar-html-") as tmp:
        work = Path(tmp)
        for page in args.pages:
            found = probe(binary, page.resolve(), args.width, args.height or 2000, work, opener)
            over = found["page"] > found["window"] or found["overflow_count"]
            bad += bool(over)
            print(
                f"{page}: {'OVERFLOWS' if over else 'fits'} a {found['window']} px window "
                f"(page {found['page']} px wide, {found['height']} px tall; {found['tables']} tables, "
                f"{found['details']} details; scroll boxes that scroll: "
                f"{', '.join(found['scroll_boxes_scrolling']) or 'none'})"
            )
            for line in found["overflowing"]:
                print(f"  past the edge: {line}")
            if args.shots:
                args.shots.mkdir(parents=True, exist_ok=True)
                shot = args.shots / f"{page.parent.name}-{page.stem}.png"
                height = args.height or found["height"]
                screenshot(binary, page.resolve(), args.width, height, shot, work, opener)
                print(f"  screenshot: {shot} ({args.width}x{height})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

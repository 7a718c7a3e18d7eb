"""Reports laid out by a real browser: every committed report (reports/*/report.html)
and a fresh one of every example scenario in the Makefile's list, rendered by headless
Chromium in a 1,200 px wide window, must show every table whole: no table wider than
the box that holds it (``scrollWidth`` against ``clientWidth``), no page wider than the
window, no image wider than the page, no table cut into "(continued)" parts that would
have fitted whole; and a fresh one at 800 px no image or page wider than the window.
What the browser cannot see inside a picture (legends, line colours) is
tests/test_report_look.py.

Skipped, saying why, where no Chromium (or Playwright) can be found; under CI that
fails instead (tests/requires.py).  Set ``SIMKIT_SCREENSHOTS=DIR`` to keep a full-page
screenshot of each report there.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from requires import requires_module, requires_tool

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 1200
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# What the page measures: every table against its wrapper (and the wrapper against the
# section it sits in), the page against the window, every image against the page.
MEASURE = """() => {
  const out = [];
  for (const t of document.querySelectorAll('table')) {
    const box = t.parentElement;
    const name = (t.querySelector('caption') || t.rows[0]).textContent.trim().slice(0, 60);
    const head = t.tHead ? [...t.tHead.rows[0].cells] : [];
    const text = head.filter(c => c.classList.contains('t') && !c.classList.contains('long'));
    out.push({what: 'table', name, width: t.getBoundingClientRect().width,
              scroll: box.scrollWidth, client: box.clientWidth,
              room: box.parentElement.clientWidth,
              text: text.reduce((a, c) => a + c.getBoundingClientRect().width, 0)});
  }
  for (const img of document.querySelectorAll('img')) {
    out.push({what: 'image', name: img.alt, width: img.getBoundingClientRect().width,
              scroll: img.getBoundingClientRect().width, client: document.body.clientWidth,
              room: document.body.clientWidth});
  }
  const d = document.documentElement;
  out.push({what: 'page', name: document.title, width: d.scrollWidth, scroll: d.scrollWidth,
            client: d.clientWidth, room: d.clientWidth});
  return out;
}"""

pytestmark = pytest.mark.slow  # a real browser: make test, not make check


def _scenarios() -> list[str]:
    text = (ROOT / "Makefile").read_text()
    m = re.search(r"REPORT_SCENARIOS\s*:=\s*((?:[^\n]*\\\n)*[^\n]*)", text)
    assert m, "the Makefile lists no REPORT_SCENARIOS"
    return m.group(1).replace("\\\n", " ").split()


@pytest.fixture(scope="module")
def browser():
    sync_api = requires_module("playwright.sync_api", "pip install playwright")
    executable = requires_tool(
        "chromium", "chromium-browser", "google-chrome", hint="Debian: apt-get install chromium"
    )
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=ARGS)
        yield b
        b.close()


def _check(browser, html: Path, shot_name: str, width: int = WIDTH, cuts: bool = True) -> None:
    """At ``width`` (1,200 px): every table, image and the page within its box, and (with
    ``cuts``) no table cut into "(continued)" parts that would have fitted whole.  At a
    narrower window the tables may scroll in their boxes; images and the page must still
    fit."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(html.resolve().as_uri())
        boxes = page.evaluate(MEASURE)
        folder = os.environ.get("SIMKIT_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(folder) / f"{shot_name}.png"), full_page=True)
    finally:
        page.close()
    tables = [b for b in boxes if b["what"] == "table"]
    assert tables, f"{html}: no table at all"
    checked = boxes if width >= WIDTH else [b for b in boxes if b["what"] != "table"]
    wide = [
        f"{b['what']} {b['name']!r}: {b['scroll']} px in {b['client']} px"
        for b in checked
        if b["scroll"] > b["client"] or b["width"] > b["room"] + 0.5
    ]
    assert not wide, f"{html} at {width} px: " + "; ".join(wide)
    if width < WIDTH or not cuts:
        return
    # a "(continued)" part must have been needed: the parts side by side (the repeated
    # text columns once) would not have fitted the box
    for before, part in zip(tables, tables[1:], strict=False):
        if part["name"].endswith("(continued)"):
            whole = before["width"] + part["width"] - part["text"]
            assert whole > part["client"], (
                f"{html}: {part['name']!r} is cut although {whole:.0f} px fit {part['client']} px"
            )


COMMITTED = sorted((ROOT / "reports").glob("*/report.html"))


@pytest.mark.parametrize("html", COMMITTED, ids=[p.parent.name for p in COMMITTED])
def test_committed_reports_fit_1200_px(browser, html):
    # (regenerated by `make reports`; the cut of a table is checked on fresh ones)
    _check(browser, html, f"committed_{html.parent.name}", cuts=False)


def test_every_report_scenario_is_committed():
    assert {p.parent.name for p in COMMITTED} == set(_scenarios())


@pytest.mark.parametrize("name", _scenarios())
def test_fresh_reports_fit_1200_px(browser, tmp_path, name):
    from simkit.analysis.report_runs import make_report

    rendered = make_report(ROOT / "scenarios" / f"{name}.toml", 3000, 5)
    path = rendered.write(tmp_path / name)
    _check(browser, path, f"fresh_{name}")
    _check(browser, path, f"fresh_{name}_800", width=800)


def test_a_too_wide_table_is_caught(browser, tmp_path):
    """The measurement itself: a table wider than its box must fail the check."""
    from simkit.output.report_document.page import CSS

    cells = "".join(f"<td>{'9' * 40}</td>" for _ in range(8))
    html = tmp_path / "wide.html"
    html.write_text(
        f"<!DOCTYPE html><html><head><style>{CSS}</style></head><body>"
        f'<div class="wrap"><table><tr>{cells}</tr></table></div></body></html>'
    )
    with pytest.raises(AssertionError, match="px in"):
        _check(browser, html, "wide")

"""A report as one self-contained HTML page and as Markdown with PNG files beside it.

The page reads top down: the verdict (side table and at most four sentences), the
scenario, the findings, turn order, attacks and answers, the cost and benefit of every
policy, the sweep, the remaining metrics, the method and the notes.  Tables fit a
1,200 px window without scrolling (headers that wrap, a table cut into "(continued)"
parts only where it would not fit, numbers aligned on the decimal point); a group's
colour in the tables is its colour in the plots (darkened where a line on white needs
it).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from simkit.output.report_document.tables import Table

if TYPE_CHECKING:
    from simkit.output.report_document.build import Page
    from simkit.output.report_document.figures import Plot

FIGURE_SPACE = "\u2007"  # as wide as a digit
PUNCTUATION_SPACE = "\u2008"  # as wide as a full stop

CSS = """
:root { --ink: #1f2328; --muted: #59636e; --rule: #d8dee4; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       color: var(--ink); margin: 0 auto; max-width: 1080px; padding: 1.2em 1.6em 3em; }
h1 { font-size: 1.65em; margin: .2em 0 .1em; }
h2 { font-size: 1.3em; margin: 1.9em 0 .5em; padding-bottom: .2em;
     border-bottom: 1px solid var(--rule); }
h3 { font-size: 1.05em; margin: 1.3em 0 .35em; }
p, li { max-width: 50em; }
.meta { color: var(--muted); margin-top: 0; }
.verdict { background: var(--soft); border: 1px solid var(--rule); border-radius: 6px;
           padding: .2em 1.2em 1em; margin-top: 1em; }
.verdict h2 { border: 0; margin-top: .6em; }
.verdict p.sentence { margin: .35em 0; }
.wrap { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: .4em 0 .4em; font-size: 13px;
        font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 0 0 .3em; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--rule); }
th { vertical-align: bottom; text-align: right; font-weight: 600; white-space: normal;
     max-width: 12em; }
th .unit { display: block; font-weight: 400; color: var(--muted); font-size: 11.5px; }
td { text-align: right; white-space: nowrap; }
th.t, td.t { text-align: left; }
td.long { white-space: normal; min-width: 14em; max-width: 34em; }
tr.member td.t:first-child { padding-left: 2em; color: var(--muted); }
td .e { display: inline-block; text-align: left; color: var(--muted); padding-left: .3em;
        font-size: 11.5px; }
.sw { display: inline-block; width: .75em; height: .75em; border-radius: 2px;
      margin-right: .45em; vertical-align: -.05em; }
.note { color: var(--muted); font-size: 13px; margin: .2em 0 1em; }
figure { margin: .6em 0 1.6em; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 13px; color: var(--muted); max-width: 60em; }
ul.findings li { margin-bottom: .3em; }
ol.notes { font-size: 13px; color: var(--muted); }
code { font-size: 13px; }
"""


# --------------------------------------------------------------------------- HTML
def _split(text: str) -> tuple[str, str]:
    value, sep, error = text.partition(" ± ")
    return value, ("± " + error) if sep else ""


def _decimals(value: str) -> int:
    m = re.fullmatch(r"[+\-−]?\d+(?:\.(\d+))?%?", value.strip())
    if m is None:
        return -1
    return len(m.group(1) or "")


def _numeric_column(cells: Sequence[str]) -> list[str]:
    """Cells of one numeric column as HTML, aligned on the decimal point: values padded
    with figure spaces to the most decimals, the ± parts in boxes of one width."""
    parts = [_split(c) for c in cells]
    places = max((_decimals(v) for v, _ in parts), default=0)
    width = max((len(e) for _, e in parts), default=0)
    out = []
    for value, error in parts:
        d = _decimals(value)
        shown = html.escape(value)
        if 0 <= d < places:
            dot = PUNCTUATION_SPACE if d == 0 else ""
            shown += dot + FIGURE_SPACE * (places - d)
        if width:
            shown += (
                f'<span class="e" style="min-width:{width + 0.8:.1f}ch">{html.escape(error)}</span>'
            )
        out.append(shown)
    return out


# Widths the page lays tables out in (13 px tabular digits): a table whose estimated
# width exceeds BUDGET is cut into several, each repeating the text columns.
# The estimate runs 7-14% above what Chromium lays out at 1,200 px (the example reports:
# 679 -> 616, 984 -> 866, 1,094 -> 1,025 px), and a table whose headers may wrap further
# still fits the 1,032 px column: a table is cut only when its estimate exceeds BUDGET.
BUDGET = 1100.0  # px
DIGIT = 7.6  # px per character of a cell
SMALL_DIGIT = 6.8  # px per character of its ± part (11.5 px)
HEADER_MAX = 156.0  # px: a header wraps beyond 12em
PAD = 18.0  # px of cell padding


def _cell_width(text: str) -> float:
    value, error = _split(text)
    return len(value) * DIGIT + len(error) * SMALL_DIGIT


def _width(table: Table, j: int) -> float:
    cells = [r[j] for r in table.rows]
    body = max((_cell_width(c) for c in cells), default=0.0)
    if j == 0:
        body += 20  # the colour swatch
    # a header takes its whole width up to 12em, then wraps (bold 13 px, unit 11.5 px)
    head = min(HEADER_MAX, max(len(table.header[j]) * 8.0, len(table.units[j]) * 6.4))
    if table.extra.get("wide_last") and j == len(table.header) - 1:
        body = min(body, 34 * 15.0)  # wraps beyond 34em
    return max(body, head) + PAD


def column_parts(table: Table, budget: float = BUDGET) -> list[list[int]]:
    """The value columns of each table the page shows for ``table``: all of them, or as
    even parts as the width allows (every part repeats the text columns)."""
    text = table.text_columns
    fixed = sum(_width(table, j) for j in range(text))
    values = list(range(text, len(table.header)))
    widths = {j: _width(table, j) for j in values}
    room = max(budget - fixed, max(widths.values(), default=0.0))
    total = sum(widths.values())
    parts_needed = max(1, -(-int(total) // int(room)))
    target = total / parts_needed
    parts: list[list[int]] = [[]]
    used = 0.0
    for j in values:
        w = widths[j]
        if parts[-1] and (used + w > room or (used >= target and len(parts) < parts_needed)):
            parts.append([])
            used = 0.0
        parts[-1].append(j)
        used += w
    return [p for p in parts if p] or [[]]


def html_table(table: Table, colours: dict[str, str] | None = None) -> str:
    """The table as HTML, cut into several where it would be too wide for the page."""
    parts = column_parts(table)
    if len(parts) == 1:
        return _html_table(table, colours)
    out = []
    text = list(range(table.text_columns))
    for k, cols in enumerate(parts):
        keep = text + cols
        part = Table(
            table.title + (" (continued)" if k else ""),
            [table.header[j] for j in keep],
            [table.units[j] for j in keep],
            [[r[j] for j in keep] for r in table.rows],
            table.text_columns,
            table.members,
            table.note if k == len(parts) - 1 else "",
            table.key,
            table.extra,
        )
        out.append(_html_table(part, colours))
    return "".join(out)


def _html_table(table: Table, colours: dict[str, str] | None = None) -> str:
    e = html.escape
    n = len(table.header)
    text = table.text_columns
    head = []
    long = table.extra.get("wide_last")
    for j, (h, u) in enumerate(zip(table.header, table.units, strict=True)):
        cls = ' class="t"' if j < text or (long and j == n - 1) else ""
        unit = f'<span class="unit">{e(u)}</span>' if u else ""
        head.append(f"<th{cls}>{e(h)}{unit}</th>")
    columns = [[r[j] for r in table.rows] for j in range(n)]
    align = table.extra.get("align", True)
    rendered = [
        [e(c) for c in col] if j < text or not align else _numeric_column(col)
        for j, col in enumerate(columns)
    ]
    body = []
    for i, row in enumerate(table.rows):
        cells = []
        for j in range(n):
            cls = "t" if j < text else ""
            if long and j == n - 1:
                cls = "t long"
            content = rendered[j][i]
            name = row[0].removesuffix(" (each)")
            if j == 0 and colours and name in colours and i not in table.members:
                content = f'<span class="sw" style="background:{colours[name]}"></span>' + content
            cells.append(f'<td class="{cls}">{content}</td>' if cls else f"<td>{content}</td>")
        tr = ' class="member"' if i in table.members else ""
        body.append(f"<tr{tr}>{''.join(cells)}</tr>")
    caption = f"<caption>{e(table.title)}</caption>" if table.title else ""
    note = f'<p class="note">{e(table.note)}</p>' if table.note else ""
    return (
        f'<div class="wrap"><table>{caption}<thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>{note}"
    )


def _figure_html(p: Plot) -> str:
    e = html.escape
    uri = "data:image/png;base64," + base64.b64encode(p.png).decode("ascii")
    return (
        f'<figure><img alt="{e(p.title)}" src="{uri}">'
        f"<figcaption><b>{e(p.title)}.</b> {e(p.caption)}</figcaption></figure>"
    )


def render_html(page: Page) -> str:
    """One self-contained page: inline CSS, images as data: URIs, no external links."""
    e = html.escape
    colours = page.swatches
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(page.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{e(page.title)}</h1>",
        f'<p class="meta">{e(page.meta)}</p>',
    ]
    for section in page.sections:
        if section.boxed:
            out.append('<section class="verdict">')
        else:
            out.append("<section>")
        out.append(f"<h2>{e(section.title)}</h2>")
        for kind, item in section.items:
            if kind == "text":
                out.append(f"<p>{e(item)}</p>")
            elif kind == "sentences":
                out += [f'<p class="sentence">{e(x)}</p>' for x in item]
            elif kind == "list":
                out.append(
                    '<ul class="findings">' + "".join(f"<li>{e(x)}</li>" for x in item) + "</ul>"
                )
            elif kind == "h3":
                out.append(f"<h3>{e(item)}</h3>")
            elif kind == "table":
                out.append(html_table(item, colours))
            elif kind == "plot":
                out.append(_figure_html(item))
            elif kind == "notes":
                out.append(
                    '<ol class="notes">' + "".join(f"<li>{e(t)}</li>" for _, t in item) + "</ol>"
                )
            elif kind == "files":
                out.append(
                    "<p>Data (tidy CSV, full precision, beside this file): "
                    + ", ".join(f"<code>{e(n)}</code>" for n in item)
                    + ".</p>"
                )
        out.append("</section>")
    out.append("</body></html>\n")
    return "\n".join(out)


# --------------------------------------------------------------------------- Markdown
# Characters that Markdown reads as markup wherever they stand (CommonMark lets a backslash
# escape any ASCII punctuation): a name or a description is shown as written, never as HTML,
# code, a link, emphasis, a heading or a table cell break.
_MD_ALWAYS = re.compile(r"([\\`*\[\]<>|~#])")
# "_" opens or closes emphasis only at a word's edge ("party_vs_wolves" is safe as it is).
_MD_EDGE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# "&amp;", "&#60;": an entity would be decoded.
_MD_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")


def md_text(text: str) -> str:
    """``text`` escaped for Markdown: every character that could start markup is
    backslash-escaped, so a viewer shows the text as written and renders no HTML."""
    text = _MD_ALWAYS.sub(r"\\\1", str(text))
    text = _MD_EDGE_UNDERSCORE.sub(r"\\_", text)
    return _MD_ENTITY.sub(r"\\&", text)


def _md(text: str) -> str:
    return md_text(text)


def md_table(table: Table) -> str:
    heads = [f"{h} ({u})" if u else h for h, u in zip(table.header, table.units, strict=True)]
    align = ["---" if j < table.text_columns else "---:" for j in range(len(heads))]
    lines = [
        "| " + " | ".join(_md(h) for h in heads) + " |",
        "| " + " | ".join(align) + " |",
    ]
    for i, row in enumerate(table.rows):
        cells = list(row)
        if i in table.members:
            cells[0] = "  ↳ " + cells[0]
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    out = ([f"**{md_text(table.title)}**", ""] if table.title else []) + lines
    if table.note:
        out += ["", f"*{md_text(table.note)}*"]
    return "\n".join(out)


def render_markdown(page: Page) -> str:
    m = md_text
    parts = [f"# {m(page.title)}", "", m(page.meta), ""]
    for section in page.sections:
        parts += [f"## {m(section.title)}", ""]
        for kind, item in section.items:
            if kind == "text":
                parts += [m(item), ""]
            elif kind == "sentences":
                parts += [" ".join(m(x) for x in item), ""]
            elif kind == "list":
                parts += [f"- {m(x)}" for x in item] + [""]
            elif kind == "h3":
                parts += [f"### {m(item)}", ""]
            elif kind == "table":
                parts += [md_table(item), ""]
            elif kind == "plot":
                parts += [
                    f"![{m(item.title)}]({item.name})",
                    "",
                    f"*{m(item.title)}.* {m(item.caption)}",
                    "",
                ]
            elif kind == "notes":
                parts += [f"{mark} {m(text)}" for mark, text in item] + [""]
            elif kind == "files":
                parts += ["Data (tidy CSV): " + ", ".join(f"[{n}]({n})" for n in item) + ".", ""]
    return "\n".join(parts)


__all__ = ["CSS", "html_table", "md_table", "md_text", "render_html", "render_markdown", "Any"]

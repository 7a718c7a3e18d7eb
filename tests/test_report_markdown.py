"""report.md shows names and free text as written: no Markdown viewer turns a hostile name
into HTML, a link, emphasis or a heading, and names are never rewritten as policy words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simkit.cli import main
from simkit.output.report_document.names import value_words
from simkit.output.report_document.page import md_text

HOSTILE = '''
[scenario]
name = "<b>Hostile</b> *names*"
system = "readiness"
description = """# not a heading
<iframe src=x></iframe> &amp; ~~strike~~ [link](javascript:alert(1)) `code` __init__"""

[[combatant]]
name = "<script>alert(1)</script>"
side = "<img src=x onerror=alert(2)>"
readiness = 3
hold = "until_attacked"
target = "Wolf_Alpha:2"

[[combatant]]
name = "*bold* [x](javascript:alert(3))"
side = "<img src=x onerror=alert(2)>"
readiness = 2

[[combatant]]
name = "Wolf_Alpha:2"
side = "_wolves_ & |pipes|"
readiness = 2

[[combatant]]
name = "`code`<svg onload=alert(4)>"
side = "_wolves_ & |pipes|"
readiness = 2
count = 2
'''
# An HTML tag that a Markdown renderer would pass through: "<" not escaped, then a tag start.
RAW_TAG = re.compile(r"(?<!\\)<[A-Za-z/!?]")


@pytest.fixture(scope="module")
def hostile_md(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("hostile")
    path = d / "hostile.toml"
    path.write_text(HOSTILE, encoding="utf-8")
    out = d / "out"
    assert main(["report", str(path), "--rounds", "3000", "--seed", "7", "--out", str(out)]) == 0
    return (out / "report.md").read_text(encoding="utf-8")


def test_no_tag_from_a_name_survives_in_report_md(hostile_md):
    # the names are in the file, every "<" of them escaped
    assert "\\<script\\>alert(1)\\</script\\>" in hostile_md
    assert "\\<img src=x onerror=alert(2)\\>" in hostile_md
    assert RAW_TAG.findall(hostile_md) == []


def test_a_markdown_renderer_makes_no_html_from_names(hostile_md):
    mistune = pytest.importorskip("mistune")  # installed with the notebooks extra
    html = mistune.html(hostile_md)
    for tag in ("<script", "<svg", "<iframe", "<b>", "<del", "<s>", "<code"):
        assert tag not in html, tag
    # the only images are the report's own plots
    images = re.findall(r'<img src="([^"]*)"', html)
    assert images == re.findall(r"!\[[^\]]*\]\(([^)]*)\)", hostile_md)
    assert all(src.endswith(".png") for src in images)
    assert 'href="javascript' not in html
    # our own markup still renders: headings, tables and the italic table notes
    assert "<h2>Verdict</h2>" in html
    assert "<table>" in html
    # the description's "# not a heading" is a paragraph, not a heading
    assert "<h1>not a heading" not in html
    assert "# not a heading" in html


def test_a_target_name_reads_as_written(hostile_md):
    assert "target Wolf_Alpha:2" in hostile_md
    assert "Wolf Alpha 2" not in hostile_md
    # a policy value still reads as words
    assert "hold until attacked" in hostile_md


@pytest.mark.parametrize(
    "value, words",
    [
        ("until_attacked", "until attacked"),
        ("hasty_up_to:2", "hasty up to 2"),
        ("Wolf_Alpha:2", "Wolf_Alpha:2"),
        ("Gunnar", "Gunnar"),
        (True, "yes"),
        (1.5, "1.5"),
    ],
)
def test_value_words_rewrites_policy_words_only(value, words):
    assert value_words(value) == words


def test_a_free_text_field_is_never_rewritten():
    from simkit.systems.base import COMMON_FIELDS

    assert value_words("wolf_alpha", COMMON_FIELDS["target"]) == "wolf_alpha"
    assert value_words("wolf_alpha") == "wolf alpha"  # without the field: a policy word


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "a *b* _c_ __d__ `e` [f](g) ![h](i) ~~j~~ | k # l &amp; &#60; \\ m",
        "party_vs_wolves.toml",
        "_leading and trailing_",
    ],
)
def test_md_text_is_read_back_as_written(text):
    mistune = pytest.importorskip("mistune")
    html = mistune.html(md_text(text)).strip()
    assert html.startswith("<p>") and html.endswith("</p>")
    import html as html_module

    assert html_module.unescape(html[3:-4]) == text


def test_md_text_leaves_plain_words_alone():
    assert md_text("party_vs_wolves.toml, 1,000,000 rounds ± 2%") == (
        "party_vs_wolves.toml, 1,000,000 rounds ± 2%"
    )


def test_committed_example_reports_need_no_escaping():
    """The example scenarios' names hold no markup, so their report.md is unchanged."""
    root = Path(__file__).resolve().parents[1]
    for md in sorted(root.glob("reports/*/report.md")):
        text = md.read_text(encoding="utf-8")
        assert "\\" not in text, md

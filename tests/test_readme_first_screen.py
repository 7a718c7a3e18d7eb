"""The README's first screen: the two set-up commands, then a first session and where to
read on; the performance figures in docs/performance.md, linked; the license an SPDX
string."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def sections() -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in README.splitlines():
        if line.startswith("## "):
            out.append((line[3:], []))
        else:
            out[-1][1].append(line)
    return out


def test_the_set_up_is_two_commands_before_anything_else():
    top = sections()[0][1]
    commands = [line.strip() for line in top if line.startswith("    ")]
    assert [c.split("#")[0].strip() for c in commands] == ["make demo", "make test"]


def test_a_first_session_comes_next_and_says_where_to_read_on():
    names = [name for name, _ in sections()[1:]]
    assert names[0] == "A first session" and names.index("What simkit is") == 1
    session = "\n".join(sections()[1][1])
    assert "simkit run " in session and "simkit report " in session
    assert "Where to read on" in session
    for target in re.findall(r"\]\((docs/[^)#]+)\)", session):
        assert (ROOT / target).is_file(), target
    lines = README.splitlines()
    assert lines.index("## What simkit is") < 60  # the session fits a first screen or so


def test_performance_figures_live_in_docs_performance():
    performance = dict(sections())["Performance"]
    assert len([line for line in performance if line.strip()]) <= 20
    assert "[docs/performance.md](docs/performance.md)" in "\n".join(performance)
    moved = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert "`make bench` prints every figure below" in moved
    assert "| readiness (rounds/s) |" in moved and "interleave.py" in moved
    assert "`make bench` prints every figure below" not in README


def test_the_license_is_an_spdx_string():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert isinstance(project["license"], str) and project["license"] == "MIT"

"""A missing tool skips a test on a developer machine and fails it under CI."""

from __future__ import annotations

import pytest
from requires import requires_module, requires_tool


@pytest.mark.parametrize("value", ["", "false", "0"])
def test_a_missing_tool_skips_outside_ci(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception, match="no-such-tool is not installed \\(a hint\\)"):
        requires_tool("no-such-tool", hint="a hint")
    with pytest.raises(pytest.skip.Exception, match="no_such_module is not installed"):
        requires_module("no_such_module")


@pytest.mark.parametrize("value", ["true", "1", "TRUE"])
def test_a_missing_tool_fails_under_ci(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="no-such-tool is not installed.*CI is set"):
        requires_tool("no-such-tool")
    with pytest.raises(pytest.fail.Exception, match="no_such_module is not installed.*CI is set"):
        requires_module("no_such_module")


def test_a_present_tool_is_found_beside_the_interpreter_or_on_path(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert requires_tool("no-such-tool", "python3").endswith("python3")
    assert requires_module("json").dumps([1]) == "[1]"

"""The shape of the package: layers, the registry as the only way to a system, a light
``import simkit``, and documentation derived from the registries."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from requires import requires_tool

from simkit import systems
from simkit.output import docs

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "simkit"


def test_layer_contracts_hold():
    """import-linter: layers only import downward; nothing names a system's package."""
    lint = requires_tool("lint-imports", hint="pip install import-linter")
    proc = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "0 broken" in proc.stdout


# and the small standard-library helpers the command reads its options and signals with
CLI_MAY_IMPORT = (
    "simkit.api",
    "simkit.output",
    "simkit.scenario.errors",
    "simkit._signals",
    "simkit.digits",
    "simkit.bounded",
)


def _simkit_imports(path: Path) -> list[tuple[int, str]]:
    """Every simkit module ``path`` imports (at any depth of the file), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                module = f"{node.module}.{a.name}"
                is_module = (PACKAGE.parent / module.replace(".", "/")).with_suffix(".py").exists()
                is_package = (PACKAGE.parent / module.replace(".", "/")).is_dir()
                found.append((node.lineno, module if is_module or is_package else node.module))
    return [(line, m) for line, m in found if m == "simkit" or m.startswith("simkit.")]


def test_the_command_line_imports_only_the_api_output_and_scenario_errors():
    """cli.py parses, checks --out, calls simkit.api and prints through simkit.output;
    the package itself (for __version__) is the only other simkit name it may use."""
    imports = _simkit_imports(PACKAGE / "cli.py")
    assert any(m == "simkit.api" for _, m in imports)
    assert any(m.startswith("simkit.output.render") for _, m in imports)
    wrong = [
        f"cli.py:{line}: {m}"
        for line, m in imports
        if m != "simkit" and not any(m == a or m.startswith(a + ".") for a in CLI_MAY_IMPORT)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_import_contract_of_the_command_line_is_in_pyproject():
    """The same rule for import-linter (which also sees imports this test cannot)."""
    text = (ROOT / "pyproject.toml").read_text()
    i = text.index('source_modules = ["simkit.cli"]')
    contract = text[text.rindex("[[tool.importlinter.contracts]]", 0, i) : text.index("[[", i)]
    assert 'type = "forbidden"' in contract
    for layer in ("analysis", "engine", "metrics", "scenario", "systems", "bench", "explorer"):
        assert f'"simkit.{layer}"' in contract
    assert 'ignore_imports = ["simkit.cli -> simkit.scenario.errors"]' in contract


def test_no_system_is_named_outside_the_systems_package():
    names = set(systems.names())
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.is_relative_to(PACKAGE / "systems"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not found, "\n".join(found)


def test_import_simkit_is_light():
    code = (
        "import sys, simkit\n"
        "heavy = [m for m in ('pandas', 'matplotlib', 'simkit.output.report_document', "
        "'simkit.analysis', 'numba') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_simkit_run_does_not_import_pandas_or_matplotlib():
    code = (
        "import sys\n"
        "from simkit.cli import main\n"
        "main(['run', 'scenarios/duel_of_equals.toml', '--rounds', '1000', '--workers', '1'])\n"
        "print([m for m in ('pandas', 'matplotlib') if m in sys.modules], file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().endswith("[]"), proc.stderr


def _section(text: str, start: str) -> str:
    i = text.index(start)
    j = text.index("\n\n", i)
    return text[i : j + 1]


def test_the_readme_metric_table_is_the_registry():
    readme = (ROOT / "README.md").read_text()
    table = docs.metric_table()
    first_line = table.splitlines()[0]
    assert first_line in readme, "README.md has no metric table"
    assert _section(readme, first_line) == table


@pytest.mark.parametrize("system", list(systems.names()))
def test_the_readme_field_and_rule_tables_are_the_schemas(system):
    readme = (ROOT / "README.md").read_text()
    for table in (docs.field_table(system), docs.rule_table(system)):
        assert table in readme, f"README.md lacks this table of {system}:\n{table}"


def test_the_readme_common_field_table_is_the_schema():
    assert docs.field_table(None) in (ROOT / "README.md").read_text()

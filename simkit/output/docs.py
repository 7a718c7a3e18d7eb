"""Documentation derived from the registries (the README's metric and field tables).

``tests/test_architecture.py`` checks that README.md contains exactly these tables, so
the README cannot drift from the code.
"""

from __future__ import annotations

from simkit import systems
from simkit.metrics import ACTION_ECONOMY, public_metrics, ratio_metrics
from simkit.systems.base import COMMON_FIELDS, REQUIRED, Field


def _systems_of(name: str, family: str, scope: str) -> list[str]:
    out = []
    for s in systems.all_systems():
        counts = set(s.counts) | set(s.scenario_counts)
        have = name in counts or any(c.startswith(name + ".") for c in counts)
        if not have:
            have = any(r[0].partition(".")[0] == name for r in ratio_metrics(s.counts))
        if family == "combatant" or name == "actions_dist":
            have = True  # acts_before and actions_dist: every system
        if have:
            out.append(s.name)
    return out


def metric_table() -> str:
    """The README's table of metrics: name, kind, unit, meaning, systems."""
    lines = ["| metric | kind | unit | meaning | systems |", "|---|---|---|---|---|"]
    every = len(systems.names())
    for m in public_metrics():
        name = {"combatant": f"{m.name}.X", "k": f"{m.name}.k"}.get(m.family, m.name)
        where = _systems_of(m.name, m.family, m.scope)
        if not where:
            continue
        shown = "all" if len(where) == every else ", ".join(where)
        kind = "probability" if m.is_probability else m.kind
        scope = " (scenario)" if m.scope == "scenario" else ""
        lines.append(f"| `{name}`{scope} | {kind} | {m.unit} | {m.meaning} | {shown} |")
    e = ACTION_ECONOMY
    lines.append(f"| `{e.name}` (side) | ratio | {e.unit} | {e.meaning} | all |")
    return "\n".join(lines) + "\n"


def _allowed(spec: Field) -> str:
    return spec.describe()


def _default(spec: Field) -> str:
    if spec.default is REQUIRED:
        return "required"
    if isinstance(spec.default, bool):
        return "true" if spec.default else "false"
    if isinstance(spec.default, str):
        return f'"{spec.default}"'
    return str(spec.default)


def field_table(system_name: str | None = None) -> str:
    """The README's table of the fields of one system (or the common fields)."""
    if system_name is None:
        fields = COMMON_FIELDS
    else:
        fields = systems.get(system_name).fields
    lines = ["| field | allowed | default | meaning |", "|---|---|---|---|"]
    for name, spec in fields.items():
        lines.append(f"| `{name}` | {_allowed(spec)} | {_default(spec)} | {spec.meaning} |")
    return "\n".join(lines) + "\n"


def rule_table(system_name: str) -> str:
    """The README's table of the [rules] of one system."""
    rules = systems.get(system_name).rules
    lines = ["| rule | allowed | default | meaning |", "|---|---|---|---|"]
    for name, spec in rules.items():
        lines.append(f"| `{name}` | {_allowed(spec)} | {_default(spec)} | {spec.meaning} |")
    return "\n".join(lines) + "\n"

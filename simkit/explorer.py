"""``simkit.explore(path)``: an interactive explorer of one scenario for JupyterLab.

Controls (ipywidgets) for every field of the scenario's system, per group (its main
initiative field first; read from the system's schema, ``System.fields``), and every
rule of the system (``System.rules``).  A value the system does not allow (readiness
99) is refused with the validator's message, shown above the tables; the control goes
back to the value in force, and the tables keep the last scenario that could be played.
Every change re-plays the scenario with the same seed (common random numbers, 200,000
rounds by default) and updates the side table, the group table and one plot, each beside the paired
difference to the scenario as written (same dice, so the difference is the change's
effect, with its paired 95% interval; a control set back to its written value gives
exactly 0).

A ``count`` group has one set of controls (its members are identical); singles have
their own.  The explorer is a plain object: ``set("Wolf", "readiness", 3)``,
``tables()`` and ``differences("side")`` drive and read it without a browser, and the
widget box returned by :func:`explore` exposes its parts (``box.controls``,
``box.tables``, ``box.image``, ``box.metric``, ``box.reset``) so that tests can drive
the widgets themselves.
"""

from __future__ import annotations

import html as html_text
import time
from pathlib import Path
from typing import Any

from simkit import systems
from simkit.analysis.compare import paired_table
from simkit.analysis.result import Result
from simkit.analysis.run import as_scenario
from simkit.engine import seed_sequence, seed_value, simulate
from simkit.metrics import t_quantile_975
from simkit.output.notebook import STYLE, table_html
from simkit.output.numbers import format_difference, format_estimate
from simkit.output.terminal import header_of
from simkit.scenario import Scenario, ScenarioError, check_value, with_changes

ROUNDS = 200_000
BATCHES = 64
SIDE_METRICS = (
    "actions",
    "action_economy",
    "first_action",
    "attacks_received",
    "undefended",
    "hasty_only",
)
GROUP_METRICS = ("first_action", "actions", "attacked_before_acting", "undefended", "hasty_share")
RULES = "rules"


class Explorer:
    """The state behind the widgets: the scenario as written, the current changes, and
    both runs (as written, and changed) on the same dice.

    Parameters
    ----------
    scenario : Scenario
        The scenario as written.
    rounds : int
        Rounds of every run (both runs play the same rounds).
    seed : int, optional
        Default: the scenario's seed.

    Attributes
    ----------
    changes : dict
        ``{group: {field: value}}`` of the controls that differ from the scenario.
    rules : dict
        ``{rule: value}`` likewise.
    result, base_result : Result
        The changed run and the run as written.
    error : str
        Why the last change could not be applied ("" if it could); the tables then
        still show the last scenario that could be played.
    elapsed_s, cpu_s : float
        Wall and CPU time (this process, every thread) of the last update.
    """

    def __init__(self, scenario: Scenario, rounds: int = ROUNDS, seed: int | None = None) -> None:
        self.base = scenario
        self.system = systems.get(scenario.system)
        self.rounds = rounds
        self.seq = seed_sequence(scenario.seed if seed is None else seed)
        self.changes: dict[str, dict[str, Any]] = {}
        self.rules: dict[str, Any] = {}
        self.batch = max(1, rounds // BATCHES)
        self.raw_base = simulate(scenario, rounds, self.seq, batch_rounds=self.batch)
        self.base_result = Result.from_raw(scenario, seed_value(self.seq), self.raw_base)
        self.current = scenario
        self.raw = self.raw_base
        self.result = self.base_result
        self.error = ""
        self.elapsed_s = 0.0
        self.cpu_s = 0.0
        self._differences: dict[str, Any] = {}

    # ------------------------------------------------------------------ controls
    def controls(self) -> list[tuple[str, str, Any, Any]]:
        """(who, field, spec, written value) of every control: per group every field of
        the system's schema that has a value (its main field first; ``opening`` only in
        fights, R8a); then every rule, as ``"rules"``."""
        out = []
        fields = self.system.fields
        for group in self.base.groups:
            member = self.base.combatants[self.base.members(group)[0]]
            names = [self.system.stat_field(member.params, member.given), *fields]
            if not self.base.fight_rounds:  # R8a: the opening of a fight needs fights
                names = [n for n in names if n != "opening"]
            for name in dict.fromkeys(names):
                if member.params.get(name) is not None:  # vtm: rating or dexterity, wits
                    out.append((group, name, fields[name], member.params[name]))
        for name, spec in self.system.rules.items():
            out.append((RULES, name, spec, self.base.rules[name]))
        return out

    def written(self, who: str, field: str) -> Any:
        """The value of a control in the scenario as written."""
        if who == RULES:
            return self.base.rules[field]
        return self.base.combatants[self.base.members(who)[0]].params[field]

    def value(self, who: str, field: str) -> Any:
        """The value of a control now (changed or as written)."""
        chosen = self.rules if who == RULES else self.changes.get(who, {})
        return chosen.get(field, self.written(who, field))

    def set(self, who: str, field: str, value: Any) -> bool:
        """Change one control and re-play (``who`` is a group name or ``"rules"``).

        A number its field does not allow (readiness 99) is refused: False, ``error``
        says why, nothing changes.  A value the field allows but the scenario cannot be
        played with (a combination a rule forbids) is kept, ``error`` says why, and the
        tables keep the last playable scenario until another change makes it playable.
        Setting a control back to its written value removes the change."""
        spec = (self.system.rules if who == RULES else self.system.fields)[field]
        # a number out of its field's range (a menu offers only allowed values; a field
        # that takes other forms, a list of names, is left to the validator below)
        problem = check_value(spec, value)[1] if spec.kind in (int, float) else None
        if problem:
            self.error = f"{who}.{field}: {problem}; not applied"
            return False
        chosen = self.rules if who == RULES else self.changes.setdefault(who, {})
        if value == self.written(who, field):
            chosen.pop(field, None)
        else:
            chosen[field] = value
        if who != RULES and not chosen:
            del self.changes[who]
        self.update()
        return True

    def reset(self) -> None:
        """Every control back to the scenario as written (one re-play)."""
        self.changes, self.rules = {}, {}
        self.update()

    def change_text(self) -> str:
        """The changes in force, as ``--set`` would spell them."""
        parts = [
            f"{who}.{f}={'[' + ', '.join(v) + ']' if isinstance(v, tuple) else v}"
            for who, fs in self.changes.items()
            for f, v in fs.items()
        ]
        parts += [f"{RULES}.{f}={v}" for f, v in self.rules.items()]
        return ", ".join(parts)

    def update(self) -> None:
        """Re-play the scenario with the current changes on the same dice."""
        start, cpu = time.perf_counter(), time.process_time()
        try:
            scenario = with_changes(self.base, rules=self.rules, combatants=self.changes)
        except ScenarioError as exc:
            self.error = str(exc).removeprefix(f"{self.base.source}: ")
            return
        self.error = ""
        self.current = scenario
        self.raw = simulate(scenario, self.rounds, self.seq, batch_rounds=self.batch)
        self.result = Result.from_raw(scenario, seed_value(self.seq), self.raw)
        self._differences = {}
        self.elapsed_s = time.perf_counter() - start
        self.cpu_s = time.process_time() - cpu

    # ------------------------------------------------------------------ outputs
    def differences(self, level: str) -> Any:
        """Paired differences (changed - as written) per ``level`` (``"combatant"``,
        ``"group"`` or ``"side"``), with 95% intervals (batch means, Student t)."""
        if level not in self._differences:
            table = paired_table(self.raw_base, self.raw, self.base_result, self.result, level)
            k = len(self.raw.batches or [])
            t = t_quantile_975(k - 1) if k > 1 else float("nan")
            table["ci_low"] = table.difference - t * table.se_paired
            table["ci_high"] = table.difference + t * table.se_paired
            self._differences[level] = table
        return self._differences[level].copy()

    def tables(self) -> dict[str, list[list[str]]]:
        """The side and group tables as rows of text: who, metric, as written, now,
        change (paired difference ± its 95% half-width; "·" where the interval covers 0,
        "0" where the two runs agree exactly)."""
        out = {}
        for level, metrics in (("side", SIDE_METRICS), ("group", GROUP_METRICS)):
            now = {(r[0], r[1]): r for r in self.result.level_rows(level)}
            before = {(r[0], r[1]): r for r in self.base_result.level_rows(level)}
            diff = self.differences(level)
            diff = {(getattr(r, level), r.metric): r for r in diff.itertuples(index=False)}
            body = []
            for who in self.result.layout.level_names(level):
                for m in metrics:
                    if (who, m) not in now:
                        continue
                    r, b, d = now[(who, m)], before.get((who, m)), diff.get((who, m))
                    body.append(
                        [
                            who,
                            header_of(m, level),
                            "" if b is None else format_estimate(m, b[2], b[3]),
                            format_estimate(m, r[2], r[3]),
                            _change(m, d),
                        ]
                    )
            out[level] = body
        return out

    def plot_metrics(self) -> list[str]:
        """The side metrics the plot can show."""
        present = {r[1] for r in self.result.level_rows("side")}
        return [m for m in SIDE_METRICS if m in present]

    def figure(self, metric: str = "actions") -> Any:
        """``metric`` per side, as written and now, with the paired difference."""
        from simkit.output.plots import comparison_bars

        return comparison_bars(self.base_result, self.result, self.differences("side"), metric)

    def png(self, metric: str = "actions") -> bytes:
        """:meth:`figure` as PNG bytes (what the widget shows)."""
        from simkit.output.plots import figure_png

        return figure_png(self.figure(metric))

    def html(self) -> str:
        tables = self.tables()
        header = ["", "metric", "as written", "now", "change (same dice)"]
        parts = [STYLE]
        if self.error:
            parts.append(f'<p style="color:#b00">{html_text.escape(self.error)}</p>')
        changes = html_text.escape(self.change_text()) or "none (the scenario as written)"
        parts.append(
            f"<p><b>{html_text.escape(self.base.name)}</b>: {self.rounds:,} rounds, "
            f"the same dice as the scenario as written; changes: {changes}; "
            f"last update {self.elapsed_s:.2f} s</p>"
        )
        parts += ["<b>Sides</b>", table_html(header, _once(tables["side"]), 2)]
        parts += ["<b>Groups</b> (each header says how a group's members make its row)"]
        parts += [table_html(header, _once(tables["group"]), 2)]
        parts.append(
            '<div class="simkit-c">± = 95% interval half-width; change = now − as written, '
            "paired on the same dice; · no detectable difference.</div>"
        )
        return "".join(parts)

    def _repr_html_(self) -> str:
        return self.html()


def _once(rows: list[list[str]]) -> list[list[str]]:
    """Rows with each name shown on its first row only."""
    out, last = [], None
    for row in rows:
        out.append(["" if row[0] == last else row[0], *row[1:]])
        last = row[0]
    return out


def _change(metric: str, d: Any) -> str:
    """A paired difference as text: "0" if exactly none, "·" if its interval covers 0."""
    if d is None or d.difference != d.difference:
        return ""
    if d.difference == 0 and d.se_paired == 0:
        return "0"
    if d.ci_low <= 0 <= d.ci_high:
        return "·"
    return format_difference(metric, d.difference, (d.ci_high - d.ci_low) / 2)


def explore(
    scenario_or_path: Scenario | str | Path, rounds: int = ROUNDS, seed: int | None = None
) -> Any:
    """An interactive explorer of a scenario (ipywidgets; for JupyterLab).

    Returns the widget box.  Its ``.explorer`` attribute is the :class:`Explorer`
    behind it; ``.controls`` maps ``"who.field"`` (``"Wolf.readiness"``,
    ``"rules.order"``) to its widget, ``.tables`` is the HTML of the tables, ``.image``
    the plot (PNG), ``.metric`` the plot's metric and ``.reset`` the button that sets
    every control back to the scenario as written.
    """
    import ipywidgets as w

    ex = Explorer(as_scenario(scenario_or_path), rounds, seed)
    tables = w.HTML(ex.html())
    metrics = ex.plot_metrics()
    metric = w.Dropdown(
        options=[(header_of(m), m) for m in metrics],
        value="actions" if "actions" in metrics else metrics[0],
        description="plot",
    )
    image = w.Image(value=ex.png(metric.value), format="png")
    quiet = [False]  # set while the reset button moves the controls

    def refresh() -> None:
        tables.value = ex.html()
        image.value = ex.png(metric.value)

    controls: dict[str, Any] = {}
    rows: list[Any] = []
    last = None
    for who, field, spec, value in ex.controls():
        if who != last:
            title = "rules" if who == RULES else _group_title(ex.base, who)
            rows.append(w.HTML(f"<b>{html_text.escape(title)}</b>"))
            last = who
        allies = _allies(ex.base, who) if who != RULES and spec.names else []
        control = _control(w, field, spec, value, allies)
        if control is None:
            continue

        def changed(change: Any, who: str = who, field: str = field, box: Any = control) -> None:
            if quiet[0]:
                return
            if not ex.set(who, field, change["new"]):  # refused: say why, show what holds
                quiet[0] = True
                try:
                    box.value = ex.value(who, field)
                finally:
                    quiet[0] = False
                tables.value = ex.html()
                return
            refresh()

        control.observe(changed, names="value")
        controls[f"{who}.{field}"] = control
        rows.append(control)

    reset = w.Button(description="back to as written")

    def on_reset(_: Any) -> None:
        quiet[0] = True
        try:
            for key, control in controls.items():
                who, _, field = key.rpartition(".")
                control.value = ex.written(who, field)
        finally:
            quiet[0] = False
        ex.reset()
        refresh()

    reset.on_click(on_reset)
    metric.observe(lambda _: setattr(image, "value", ex.png(metric.value)), names="value")
    box = w.HBox([w.VBox([*rows, reset]), w.VBox([tables, metric, image])])
    box.explorer = ex  # type: ignore[attr-defined]
    box.controls = controls  # type: ignore[attr-defined]
    box.tables = tables  # type: ignore[attr-defined]
    box.image = image  # type: ignore[attr-defined]
    box.metric = metric  # type: ignore[attr-defined]
    box.reset = reset  # type: ignore[attr-defined]
    return box


def _group_title(scenario: Scenario, group: str) -> str:
    n = len(scenario.members(group))
    return f"{group} ×{n}" if n > 1 else group


def _allies(scenario: Scenario, group: str) -> list[str]:
    """The names a group's names field may list (readiness guard, R7a): its side's other
    combatants and groups (its own count group: the other copies)."""
    member = scenario.combatants[scenario.members(group)[0]]
    out = [c.name for c in scenario.combatants if c.side == member.side and c.group != group]
    groups = [c.group for c in scenario.combatants if c.side == member.side and c.group != c.name]
    return list(dict.fromkeys(out + groups))


def _control(w: Any, field: str, spec: Any, value: Any, names: list[str] | None = None) -> Any:
    """The widget of one field: a dropdown for choices, a number box for integers (a
    slider would clamp 99 to its end silently; the explorer refuses it with a message),
    a slider for shares, a checkbox for flags; a number acts when entered or released
    (one re-play per change).  A field that also takes names (``guard = ["Mira"]``)
    offers each of ``names`` alone."""
    style = {"description_width": "initial"}
    if spec.choices:
        options: list[Any] = [(str(c), c) for c in spec.choices]
        options += [(f"for {n}", (n,)) for n in names or ()]
        if value not in [v for _, v in options]:
            label = f"for {', '.join(value)}" if isinstance(value, tuple) else str(value)
            options.append((label, value))  # e.g. defend = "hasty_up_to:2"
        return w.Dropdown(options=options, value=value, description=field, style=style)
    if spec.kind is bool:
        return w.Checkbox(value=bool(value), description=field, style=style)
    if spec.kind is int:
        allowed = f"{spec.low}..{spec.high}" if spec.high is not None else f"{spec.low} or more"
        return w.IntText(
            value=value,
            description=f"{field} ({allowed})",
            continuous_update=False,
            style=style,
        )
    if spec.kind is float:
        return w.FloatSlider(
            value=value,
            min=spec.low or 0.0,
            max=spec.high or 1.0,
            step=0.05,
            description=field,
            continuous_update=False,
            style=style,
        )
    return None


__all__ = ["Explorer", "explore"]

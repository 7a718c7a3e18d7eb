"""A report put together: its page (sections of sentences, tables and plots) and every
file it writes, from one :class:`~simkit.analysis.report_runs.ReportData` (no simulation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simkit import systems
from simkit.output.files import OutputDir
from simkit.output.report_document import findings as words
from simkit.output.report_document import tables
from simkit.output.report_document.data import csv_tables
from simkit.output.report_document.names import Footnotes, strip_rule_ids
from simkit.output.report_document.page import render_html, render_markdown
from simkit.output.report_document.readings import Numbers
from simkit.output.spreadsheet import frame_csv

if TYPE_CHECKING:
    from simkit.analysis.report_runs import ReportData
    from simkit.output.report_document.figures import Plot


@dataclass
class Section:
    title: str
    items: list[tuple[str, Any]] = field(default_factory=list)
    boxed: bool = False

    def add(self, kind: str, item: Any) -> None:
        if item:
            self.items.append((kind, item))


@dataclass
class Page:
    title: str
    meta: str
    sections: list[Section]
    swatches: dict[str, str]


@dataclass(frozen=True)
class Report:
    """A rendered report: its verdict, findings and every file, by name, as bytes."""

    data: ReportData
    findings: list[str]
    files: dict[str, bytes] = field(repr=False)
    verdict: list[str] = field(default_factory=list)

    def write(self, out_dir: str | Path) -> Path:
        """Write every file into the result directory ``out_dir`` as a whole; returns the
        path of report.html."""
        OutputDir(out_dir, "out_dir").write(self.files)
        return Path(out_dir) / "report.html"


def build_report(data: ReportData) -> Report:
    """Render verdict, findings, plots, HTML, Markdown and CSV (no simulation)."""
    from simkit.output import plots
    from simkit.output.report_document import figures as figure_module

    numbers = Numbers(data.result)
    notes = Footnotes()
    verdict = words.verdict(numbers)
    if data.best_policies is not None:
        verdict = verdict[:3] + [words.equilibrium_sentence(data.best_policies)]
    found = words.group_findings(numbers, notes)
    from simkit.output.report_document.fight_rounds import fight_findings

    found += fight_findings(data.result, notes)  # R8a: the opening and after
    policy_sentences = {id(e): words.policy_findings(e, numbers, notes) for e in data.policies}
    sweep_sentences = (
        words.side_sweep_findings(data, numbers)
        if data.sweeps
        else words.grid_findings(data, numbers)
        if data.sweep is not None
        else []
    )
    figs = [f for f in figure_module.figures(data, numbers) if f.png]
    palette = plots.palette(data.scenario)
    swatches = {numbers.label(g): palette.group[g] for g in numbers.groups}
    swatches.update({s: palette.side[s] for s in numbers.sides if s not in swatches})
    page = _page(data, numbers, notes, verdict, found, policy_sentences, sweep_sentences, figs)
    page.swatches = swatches
    files: dict[str, bytes] = {}
    for name, table in csv_tables(data).items():
        files[name] = frame_csv(table).encode("utf-8")
    for f in figs:
        files[f.name] = f.png
    files["report.md"] = render_markdown(page).encode("utf-8")
    files["report.html"] = render_html(page).encode("utf-8")
    every = found + [s for e in data.policies for s in policy_sentences[id(e)]] + sweep_sentences
    return Report(data, every, files, verdict)


def _meta(data: ReportData) -> str:
    from simkit import __version__

    s = data.scenario
    return (
        f"System {s.system}, {len(s.combatants)} combatants on {len(s.sides)} sides, "
        f"{data.result.rounds:,} rounds per run, seed {data.result.seed}, scenario file "
        f"{Path(s.source).name}, simkit {__version__}. Every ± is a 95% confidence-interval "
        "half-width."
    )


def _page(
    data: ReportData,
    numbers: Numbers,
    notes: Footnotes,
    verdict: list[str],
    found: list[str],
    policy_sentences: dict[int, list[str]],
    sweep_sentences: list[str],
    figs: list[Plot],
) -> Page:
    s = data.scenario
    system = systems.get(s.system)
    by_section: dict[str, list[Plot]] = {}
    for f in figs:
        by_section.setdefault(f.section, []).append(f)
    group_tables, zero = tables.group_tables(numbers)
    themed = {t.title.split(" (")[0]: [] for t in group_tables}
    for t in group_tables:
        themed[t.title.split(" (")[0]].append(t)
    sections = []

    top = Section("Verdict", boxed=True)
    top.add("table", tables.side_table(numbers))
    top.add("sentences", verdict)
    sections.append(top)

    scen = Section("Scenario")
    scen.add("text", s.description)
    scen.add("table", tables.combatant_table(data, numbers))
    scen.add("text", tables.rules_text(data))
    sections.append(scen)

    main = Section("Findings")
    main.add("list", found)
    for p in by_section.get("order", [])[:1]:
        main.add("plot", p)
    sections.append(main)

    rounds = Section("Round by round")  # R8a: fights of several rounds
    for p in by_section.get("rounds", []):
        rounds.add("plot", p)
    if rounds.items:
        sections.append(rounds)

    order = Section("Turn order")
    for t in themed.get("Who acts when", []):
        order.add("table", t)
    for p in by_section.get("order", [])[1:]:
        order.add("plot", p)
    if order.items:
        sections.append(order)

    attacks = Section("Attacks and defenses")
    for p in by_section.get("attacks", []):
        attacks.add("plot", p)
    for title in ("Attacks and answers", "Hasty defenses"):
        for t in themed.get(title, []):
            attacks.add("table", t)
    if attacks.items:
        sections.append(attacks)

    sections.append(_policy_section(data, numbers, notes, policy_sentences, by_section, system))
    if data.best_policies is not None:
        sections.append(_best_policy_section(data.best_policies))

    sweep = Section("Sweep")
    sweep.add("list", sweep_sentences)
    for p in by_section.get("sweep", []):
        sweep.add("plot", p)
    if data.sweeps:
        sweep.add("table", tables.side_sweep_table(data, numbers))
    elif data.sweep is not None:
        sweep.add("table", tables.grid_table(data, numbers))
    sections.append(sweep)
    if data.sensitivity is not None:
        sections.append(_sensitivity_section(data, by_section))

    more = Section("More metrics")
    for title, ts in themed.items():
        if title in ("Who acts when", "Attacks and answers", "Hasty defenses"):
            continue
        for t in ts:
            more.add("table", t)
    scenario_table = tables.scenario_table(numbers)
    if scenario_table is not None:
        more.add("table", scenario_table)
    if zero:
        from simkit.output.report_document.names import title_of

        fixed = [
            f"{title_of(m).lower()} = {words.est(m, numbers.each(numbers.groups[0], m))}"
            for m in zero
        ]
        more.add(
            "text",
            "The same in every round for everyone, so left out of the tables: "
            + ", ".join(fixed)
            + ".",
        )
    if more.items:
        sections.append(more)

    method = Section("Method")
    method.add("list", _method(data, system))
    method.add("notes", notes.items())
    method.add("files", sorted(n for n in csv_tables_names(data)))
    sections.append(method)
    return Page(f"simkit report: {s.name}", _meta(data), sections, {})


def csv_tables_names(data: ReportData) -> list[str]:
    names = [
        "metrics.csv",
        "sides.csv",
        "groups.csv",
        "acts_before.csv",
        "actions_distribution.csv",
        "holding.csv",
        "sweep.csv",
    ]
    names += ["rounds.csv"] if getattr(data.result, "fights", None) is not None else []
    names += ["tune.csv"] if data.tuning is not None else []
    return names + (["sensitivity.csv"] if data.sensitivity is not None else [])


def _sensitivity_section(data: ReportData, by_section: dict[str, list[Plot]]) -> Section:
    """The answer, the tornado and the table (``analysis/sensitivity.py``)."""
    s = data.sensitivity
    assert s is not None
    section = Section("Sensitivity: what moves the balance")
    section.add("sentences", [s.answer])
    for p in by_section.get("sensitivity", []):
        section.add("plot", p)
    section.add("table", tables.sensitivity_table(data))
    runs = len(s.variants)
    section.add(
        "text",
        f"{runs} variants, each at the report's {s.rounds:,} rounds on the dice of the "
        "scenario as written (a variant that is a point of the sweep above is that run); "
        "simkit sensitivity gives the same table with --rounds and --objective."
        + "".join(f" Skipped: {x}." for x in s.skipped),
    )
    return section


def _policy_section(
    data: ReportData,
    numbers: Numbers,
    notes: Footnotes,
    sentences: dict[int, list[str]],
    by_section: dict[str, list[Plot]],
    system: Any,
) -> Section:
    waiting, ids = strip_rule_ids(system.waiting_words) if system.waiting_words else ("", [])
    others = [p for p in system.policies if p not in system.never_waits()]
    if waiting and others:
        title = f"{waiting.capitalize()} and other policies: cost and benefit"
    elif waiting:
        title = f"{waiting.capitalize()}: cost and benefit"
    elif others:
        title = "Policies: cost and benefit"
    else:
        title = "Waiting"
    section = Section(title)
    if not system.waiting_words:
        section.add(
            "text", f"The {system.name} system has no rule for waiting: everyone acts on its turn."
        )
    elif not any(c.waiting for c in data.plan.changes):
        mark = notes.rule(waiting.capitalize(), ids)
        section.add("text", f"No combatant is {waiting}{mark} in this scenario.")
    if system.policies and not data.plan.changes:
        section.add(
            "text", "Every combatant plays the default policies, so there is nothing to compare."
        )
    for e in data.policies:
        c = e.change
        who = words.holder_label(e, numbers)
        alt = ", ".join(f"{f} {words.value_words(b)}" for f, _, b in c.fields)
        written = ", ".join(f"{f} {words.value_words(a)}" for f, a, _ in c.fields)
        section.add("h3", f"{who}: {written} (against {alt})")
        section.add("sentences", sentences[id(e)])
        section.add("table", tables.policy_table(e, numbers, ""))
    for p in by_section.get("policies", []):
        section.add("plot", p)
    if data.plan.left_out:
        section.add(
            "text",
            f"{len(data.plan.left_out)} more policies are not compared (a report compares at "
            f"most {len(data.plan.changes)}): "
            + ", ".join(c.label for c in data.plan.left_out)
            + ".",
        )
    return section


def copies(n: int) -> str:
    """``1 copy``, ``2 copies``."""
    return f"{n:,} cop{'y' if n == 1 else 'ies'}"


def _best_policy_section(search: Any) -> Section:
    """Every combatant's best policy for its side and what it changes for every side."""
    section = Section("Best policy for every combatant")
    section.add("sentences", words.best_policy_findings(search))
    section.add("table", tables.best_policy_table(search))
    return section


def _method(data: ReportData, system: Any) -> list[str]:
    p = data.plan
    out = [
        f"Every run plays {p.rounds:,} rounds with seed {data.result.seed}, so every run sees "
        "the same dice round by round (common random numbers).",
    ]
    if getattr(data.result, "fights", None) is not None:
        f = data.result.fights
        out.append(
            f"{f.fights * f.fight_rounds:,} rounds = {f.fights:,} fights of {f.fight_rounds} "
            "rounds (the rounds asked for, rounded up to whole fights; a fight's first round is "
            "its opening): the intervals of every number come from the variation between "
            "fights, the independent units, and a policy's or a sweep's batches hold whole "
            "fights."
        )
    if system.method_note:
        out.append(strip_rule_ids(system.method_note)[0])
    if data.policies:
        out.append(
            f"Policies: the scenario as written against {copies(len(data.policies))}, each "
            "with one policy set back to its default (waiting switched off); the differences are "
            f"paired, their intervals from {data.policies[0].comparison.batches} batches "
            "(batch means, Student t)."
        )
    if data.best_policies is not None:
        b = data.best_policies
        out.append(
            f"Best policies: {b.variants} runs of {b.rounds:,} rounds, every value of every "
            "policy field of every combatant (a count group as one) with the others as "
            "written; each side judged by its objective ("
            + "; ".join(o.words for o in b.objectives.values())
            + f"); gains paired over {b.batches} batches (batch means, Student t)."
        )
    if data.sweeps:
        runs = sum(len(v) - 1 for v in data.sweeps.values())
        out.append(
            f"Sweep: {runs} more runs, in each of which every member of one side has its "
            f"{p.stat} changed by −2 … +2, clipped to the allowed range (a change that clipping "
            "makes identical to a smaller one is not run again); each point is paired with the "
            "run as written." + getattr(system, "sweep_note", "")
        )
    elif data.sweep is not None:
        out.append(
            f"Sweep: the grid {', '.join(p.vary)} ({len(data.sweep.results)} points)"
            + (f", tuned for {p.target}" if p.target else "")
            + "; each point's interval is its own."
        )
    out.append(
        "A difference is reported only where its interval excludes 0 (paired) or two "
        "intervals do not overlap; otherwise the report says “no detectable difference”. "
        "Numbers are rounded to the precision their interval supports."
    )
    return out

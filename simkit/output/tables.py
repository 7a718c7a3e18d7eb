"""Text tables of results, for the terminal."""

from __future__ import annotations

from typing import Any

from simkit.output.format import format_estimate


def _grid(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    lines = [
        "  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    for cells in rows:
        lines.append(
            "  ".join(str(x).ljust(w) for x, w in zip(cells, widths, strict=True)).rstrip()
        )
    return lines


def result_table(result: Any) -> str:
    """A readable per-combatant table (mean ± 95% half-width)."""
    per: dict[str, dict[str, tuple[float, float]]] = {}
    for who, metric, mean, se, _, _ in result.rows:
        if who and "." not in metric:
            per.setdefault(who, {})[metric] = (mean, se)
    metrics = list(dict.fromkeys(m for cells in per.values() for m in cells))
    header = ["combatant", "side", *metrics]
    rows = []
    for c in result.scenario.combatants:
        cells = [c.name, c.side]
        for m in metrics:
            cells.append(format_estimate(m, *per[c.name][m]))
        rows.append(cells)
    text = _grid(header, rows)
    for who, metric, mean, se, _, _ in result.rows:
        if not who:
            text.append(f"{metric}: {format_estimate(metric, mean, se)}")
    workers = result.workers
    text.append(
        f"{result.rounds:,} rounds, seed {result.seed}, {result.elapsed_s:.2f} s "
        f"({result.rounds_per_s:,.0f} rounds/s, {workers} worker{'s' if workers != 1 else ''}); "
        "± is the 95% interval half-width"
    )
    return "\n".join(text)


def comparison_table(comparison: Any, all_metrics: bool = False) -> str:
    """A comparison's differences as text (see Comparison.format_table)."""
    from simkit.output.format import format_difference, format_mean, format_ratio

    t = comparison.table
    if not all_metrics:
        t = t[~t.metric.str.contains(".", regex=False)]
    header = ["combatant", "metric", "A", "B", "B - A", "narrower"]
    rows = []
    for r in t.itertuples(index=False):
        half = comparison.t_paired * r.se_paired
        rows.append(
            [
                r.combatant or "(scenario)",
                r.metric,
                format_mean(r.metric, r.mean_a, r.se_unpaired),
                format_mean(r.metric, r.mean_b, r.se_unpaired),
                format_difference(r.metric, r.difference, half),
                format_ratio(r.narrower),
            ]
        )
    lines = [f"A: {comparison.label_a}", f"B: {comparison.label_b}", *_grid(header, rows)]
    lines.append(
        f"{comparison.rounds:,} rounds each, seed {comparison.seed}, {comparison.batches} batches "
        f"of up to {comparison.batch_rounds:,} rounds; ± is the paired 95% half-width (t, "
        f"{comparison.batches - 1} d.f.); probabilities in %, differences in percentage points"
    )
    lines.append(comparison.narrowing_line())
    return "\n".join(lines)

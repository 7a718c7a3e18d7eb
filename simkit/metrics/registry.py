"""The metric registry: every metric simkit reports, declared once.

A kernel fills per-round *counts* (integers) for every combatant; each public metric
is either the per-round mean of one count (``kind = "mean"``; a count that is 0 or 1
in every round is a ``"probability"``) or the ratio of two counts' sums
(``kind = "ratio"``).  Hidden counts exist only to feed ratios.  Everything that
shows a metric -- estimates and their clipping, summary.json, CSV files, tables,
report units, the README's metric table -- reads it from here.

Which system produces which metric is declared by the systems themselves
(``System.counts``); this module knows no system.

Families
--------
``acts_before.X`` (one per other combatant), ``actions_dist.k`` (k = 0 .. the most
actions a combatant can take) and ``hasty_scale_ge.k`` (k = 1 .. 5, from the hidden
counts ``hasty_ge.k``) are declared once as families.

Groups and sides
----------------
Every count is also read per ``count`` group and per side: a ``"mean"`` count is
summed over the members, a ``"probability"`` count becomes "any member" (1 in a
round where at least one member counts 1), and a ratio is the ratio of the summed
counts.  ``acts_before`` and ``actions_dist`` are per combatant only.  The *action
economy* of a side is its actions divided by the actions of all its opponents.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

PROBABILITY = "probability"
MEAN = "mean"
RATIO = "ratio"
KINDS = (PROBABILITY, MEAN, RATIO)

HASTY_SCALES = (1, 2, 3, 4, 5)  # a hasty defense has scale a - d in 1..5 (d6)


@dataclass(frozen=True)
class Metric:
    """One metric (or hidden count).

    Attributes
    ----------
    name : str
        The name used everywhere (``first_action``); a family's name without ``.k``.
    kind : str
        ``"probability"``, ``"mean"`` or ``"ratio"``.
    label : str
        A short human header ("First action").
    unit : str
        What one unit of the value is ("actions", "% of rounds", "pips").
    meaning : str
        One line, in the words of the README's metric table.
    numerator, denominator : str
        For ratios: the counts divided.
    bounded : bool
        A ratio that is a share (0..1): shown in %, interval clipped to [0, 1].
    hidden : bool
        A count that only feeds ratios (not reported on its own).
    family : str
        ``""``, ``"k"`` (``name.k`` for integer k) or ``"combatant"`` (``name.X``).
    scope : str
        ``"combatant"`` or ``"scenario"``.
    aggregate : bool
        Also read per group and per side.
    """

    name: str
    kind: str
    label: str
    unit: str
    meaning: str
    numerator: str = ""
    denominator: str = ""
    bounded: bool = False
    hidden: bool = False
    family: str = ""
    scope: str = "combatant"
    aggregate: bool = True

    @property
    def is_probability(self) -> bool:
        """Shown in %, interval clipped to [0, 1]."""
        return self.kind == PROBABILITY or (self.kind == RATIO and self.bounded)


def _m(*args: object, **kw: object) -> Metric:
    return Metric(*args, **kw)  # type: ignore[arg-type]


_METRICS: tuple[Metric, ...] = (
    _m(
        "first_action",
        PROBABILITY,
        "First action",
        "% of rounds",
        "P(it takes the round's first action; a simultaneous first slot counts for each)",
    ),
    _m(
        "acts_before",
        PROBABILITY,
        "Acts before",
        "% of rounds",
        "P(its first action of the round comes strictly before X's; X taking no action "
        "counts as later)",
        family="combatant",
        aggregate=False,
    ),
    _m(
        "actions",
        MEAN,
        "Actions",
        "actions per round",
        "own actions taken (not defenses), extra actions included",
    ),
    _m(
        "actions_dist",
        PROBABILITY,
        "Actions = k",
        "% of rounds",
        "P(it takes exactly k actions of its own in the round)",
        family="k",
        aggregate=False,
    ),
    _m(
        "no_action",
        PROBABILITY,
        "No action",
        "% of rounds",
        "P(it takes no own action in the round)",
    ),
    _m(
        "attacked_before_acting",
        PROBABILITY,
        "Attacked before acting",
        "% of rounds",
        "P(it is attacked before its first own action, or attacked and never acts)",
    ),
    _m(
        "defenses",
        MEAN,
        "Defenses",
        "defenses per round",
        "defenses made (for itself or, as a guard, for an ally)",
    ),
    _m(
        "hasty_defenses",
        MEAN,
        "Hasty defenses",
        "hasty defenses per round",
        "hasty defenses made (its die lower than the attack's)",
    ),
    _m(
        "hasty_scale_total",
        MEAN,
        "Hasty scale total",
        "pips per round",
        "sum of the difficulty scales of its hasty defenses",
        hidden=True,
    ),
    _m(
        "hasty_share",
        RATIO,
        "Hasty share",
        "% of defenses",
        "hasty_defenses / defenses (ratio of the two means)",
        numerator="hasty_defenses",
        denominator="defenses",
        bounded=True,
    ),
    _m(
        "hasty_scale",
        RATIO,
        "Hasty scale",
        "pips",
        "mean difficulty scale of a hasty defense (sum of scales / hasty_defenses)",
        numerator="hasty_scale_total",
        denominator="hasty_defenses",
    ),
    _m(
        "hasty_ge",
        MEAN,
        "Hasty defenses of scale >= k",
        "hasty defenses per round",
        "hasty defenses of scale at least k",
        family="k",
        hidden=True,
    ),
    _m(
        "hasty_scale_ge",
        RATIO,
        "Hasty scale >= k",
        "% of hasty defenses",
        "P(a hasty defense it makes has scale >= k), k = 1..5",
        numerator="hasty_ge",
        denominator="hasty_defenses",
        bounded=True,
        family="k",
    ),
    _m(
        "expired_dice",
        MEAN,
        "Expired dice",
        "dice per round",
        "dice still unspent (held) when the round ends",
    ),
    _m(
        "guard_defenses",
        MEAN,
        "Guard defenses",
        "defenses per round",
        "responses it makes for an ally (R7)",
    ),
    _m(
        "on_edge",
        PROBABILITY,
        "On edge",
        "% of rounds",
        "P(it ends a round on edge: a stalemate round, R8)",
    ),
    _m(
        "edge_wound",
        MEAN,
        "Edge wound",
        "wound per round",
        "mean wound size per round from stalemates (R8): on_edge x its wound",
    ),
    _m(
        "aborts",
        MEAN,
        "Aborts",
        "actions per round",
        "actions given up for a defense (V5)",
    ),
    _m(
        "known_declarations",
        MEAN,
        "Known declarations",
        "opponents",
        "opponents whose declaration it knew when declaring (V3)",
    ),
    _m(
        "known_intents",
        MEAN,
        "Known intents",
        "opponents",
        "opponents whose first action it learns (P3)",
    ),
    _m(
        "intent_disclosed",
        PROBABILITY,
        "Intent disclosed",
        "% of rounds",
        "P(its first action is known to at least one opponent)",
    ),
    _m(
        "attacks_made",
        MEAN,
        "Attacks made",
        "attacks per round",
        "attacks it makes",
    ),
    _m(
        "attacks_received",
        MEAN,
        "Attacks received",
        "attacks per round",
        "attacks aimed at it",
    ),
    _m(
        "undefended",
        MEAN,
        "Undefended",
        "attacks per round",
        "attacks aimed at it that nobody answered",
    ),
    _m(
        "defended",
        MEAN,
        "Defended",
        "attacks per round",
        "attacks aimed at it answered by at least one normal (non-hasty) response",
    ),
    _m(
        "hasty_only",
        MEAN,
        "Hasty only",
        "attacks per round",
        "attacks aimed at it answered only by its own hasty defense",
    ),
    _m(
        "hits",
        MEAN,
        "Hits",
        "attacks per round",
        "attacks aimed at it that would take effect (hit_chance) and met no normal response "
        "(R7, rev 3)",
    ),
    _m(
        "wasted_defenses",
        MEAN,
        "Wasted defenses",
        "defenses per round",
        "responses it made to attacks that would not have taken effect (hit_chance; R7, rev 3)",
    ),
    _m(
        "stalemate",
        PROBABILITY,
        "Stalemate",
        "% of rounds",
        "P(a round in which everyone held, R8)",
        scope="scenario",
    ),
    _m(
        "simultaneous",
        PROBABILITY,
        "Simultaneous",
        "% of rounds",
        "P(at least two combatants share a time slot, V2)",
        scope="scenario",
    ),
)

ACTION_ECONOMY = Metric(
    "action_economy",
    RATIO,
    "Action economy",
    "own actions per opponent action",
    "its side's actions divided by the actions of all its opponents",
    numerator="actions",
    denominator="actions",
    aggregate=False,
)

METRICS: dict[str, Metric] = {m.name: m for m in _METRICS}


class UnknownMetric(KeyError):
    """A metric name the registry does not know."""


def family_of(name: str) -> tuple[str, str]:
    """``("hasty_scale_ge", "3")`` for ``"hasty_scale_ge.3"``; ``(name, "")`` otherwise."""
    base, _, member = name.partition(".")
    return base, member


def metric(name: str) -> Metric:
    """The registry entry of ``name`` (a family member gives its family's entry)."""
    if name == ACTION_ECONOMY.name:
        return ACTION_ECONOMY
    base, _ = family_of(name)
    try:
        return METRICS[base]
    except KeyError:
        raise UnknownMetric(name) from None


def is_probability(name: str) -> bool:
    """True for metrics reported as probabilities (in %, clipped to [0, 1])."""
    try:
        return metric(name).is_probability
    except UnknownMetric:
        return False


def ratio_metrics(counts: Iterable[str]) -> list[tuple[str, str, str]]:
    """Every ratio whose counts are all in ``counts``: (ratio name, numerator, denominator).

    Family ratios come out member by member (``hasty_scale_ge.3`` over ``hasty_ge.3``).
    """
    have = set(counts)
    out = []
    for m in _METRICS:
        if m.kind != RATIO:
            continue
        if m.family == "k":
            for name in sorted(have, key=_family_key):
                base, k = family_of(name)
                if base == m.numerator and k and m.denominator in have:
                    out.append((f"{m.name}.{k}", name, m.denominator))
        elif m.numerator in have and m.denominator in have:
            out.append((m.name, m.numerator, m.denominator))
    return out


def _family_key(name: str) -> tuple[str, int]:
    base, k = family_of(name)
    return base, int(k) if k.isascii() and k.isdigit() else -1  # 3, not ٣


def public_metrics() -> list[Metric]:
    """Every reported metric (hidden counts left out), in registry order."""
    return [m for m in _METRICS if not m.hidden]

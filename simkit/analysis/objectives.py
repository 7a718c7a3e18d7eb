"""What a side wants: an objective, a linear combination of metric references.

    side:party.action_economy
    side:wolves.undefended - side:party.undefended
    side:party.actions - 0.5*side:party.hasty_only

``SIDE=`` before it says whose objective it is (``party=side:wolves.undefended -
side:party.undefended``); without it, the side its first reference names.  Each term
is an optional coefficient (``0.5*`` or ``0.5 *``) and a reference as in a
``tune`` target (``NAME.metric``, ``group:NAME.metric``, ``side:NAME.metric``, see
:mod:`simkit.analysis.targets`); terms are joined by ``+`` or ``-`` with white space on
both sides (``Half-Orc.actions`` stays one name).  Every reference is a ratio of two
sums, ``R_i = N_i / D_i`` (``D_i`` the rounds for a per-round mean), so the objective is
``O = sum_i c_i R_i``.

Its interval (one run).  ``O`` is estimated from the same regeneration cycles as every
metric (:mod:`simkit.metrics.estimates`), not by adding the terms' variances: the
delta-method term of cycle ``c`` is

    u_c = sum_i c_i (y_{N_i,c} - R_i y_{D_i,c}) / D_i

and ``se^2 = C / (C - 1) * sum_c u_c^2``, which needs the cross sums of every pair of
slots the terms read (``Objective.pairs``: give them to the run as ``pairs``).

Its paired difference (two variants on common random numbers).  Both runs keep the
sums of the same batches of rounds (``engine.simulate(..., batch_rounds=...)``); the
per-batch terms ``u_k`` of each run are formed as above and the difference ``O_B -
O_A`` has ``se^2 = K / (K - 1) * sum_k (u_k^B - u_k^A)^2`` with Student's t on ``K - 1``
degrees of freedom: the method of ``simkit compare`` (:mod:`simkit.analysis.compare`).

The default objective of a side (docs/rules-decisions.md, OBJ-1): the attacks the other
sides receive without meeting a normal defense, minus the attacks the side receives
without one, per round (``attacks_received - defended`` where a system counts
``defended``; every attack received where it has no defenses).  It values acting (an
attack not made lands nowhere) and the quality of defenses (a hasty or missing
defense lets an attack through) on the same scale.

API (used by ``simkit policies`` and ``simkit sensitivity``)::

    objective = parse_objective("side:party.actions - 0.5*side:party.hasty_only", scenario)
    objective = default_objective(scenario, "party")
    objective.words                      # the objective in words, for every output
    objective.pairs(layout)              # the cross sums a run must keep
    objective.estimate(run)              # Estimate from the run's regeneration cycles
    objective.evaluate(raw_a, raw_b)     # PairedEstimate of O_B - O_A (batched runs)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from simkit.analysis.targets import LEVEL_PREFIXES, Ref, parse_ref
from simkit.digits import parse_number
from simkit.metrics import (
    COMBATANT,
    GROUP,
    ROUNDS,
    SIDE,
    Z95,
    Estimate,
    Layout,
    metric,
    metric_slots,
    t_quantile_975,
)
from simkit.metrics.estimates import NAN_ESTIMATE
from simkit.scenario import Scenario, ScenarioError, shown, suggest

LENGTH = -1  # the "slot" of the cycle (or batch) length: a per-round mean's denominator
MAX_TERMS = 20
_SLOTS: dict[Any, list[tuple[float, int, int]]] = {}
ROUNDING = 1e-12  # relative: a difference this small is float rounding, never "clear"
MAX_TEXT = 2000


@dataclass(frozen=True)
class Term:
    """``coefficient * reference``."""

    coefficient: float
    ref: Ref

    def text(self, first: bool) -> str:
        c = self.coefficient
        sign = "-" if c < 0 else ("" if first else "+")
        size = abs(c)
        factor = "" if size == 1 else f"{_num(size)}*"
        return (f"{sign} " if sign and not first else sign) + factor + str(self.ref)


@dataclass(frozen=True)
class PairedEstimate:
    """``O_B - O_A`` of two batched runs on common random numbers, with its paired
    interval (Student's t, ``batches - 1`` d.f.)."""

    mean_a: float
    mean_b: float
    difference: float
    se: float
    ci_low: float
    ci_high: float
    batches: int

    @property
    def clear(self) -> bool:
        """The 95% interval excludes 0 (and the difference is more than the rounding of
        two sums of floats: variants that play alike differ by 1e-16, not by chance)."""
        if abs(self.difference) <= ROUNDING * (1.0 + abs(self.mean_a) + abs(self.mean_b)):
            return False
        return self.ci_low > 0 or self.ci_high < 0


@dataclass(frozen=True)
class Objective:
    """A linear combination of references (see the module docstring).

    Attributes
    ----------
    terms : tuple of Term
    text : str
        The objective as text (``side:party.actions - 0.5*side:party.hasty_only``).
    words : str
        What it means, in words, for every output that uses it.
    side : str
        The side whose objective it is (the side of its first reference, or the side
        a default objective is for).
    """

    terms: tuple[Term, ...]
    text: str
    words: str
    side: str

    def negated(self, side: str) -> Objective:
        """The opposite objective (what ``side`` wants when it opposes this one)."""
        terms = tuple(Term(-t.coefficient, t.ref) for t in self.terms)
        words = f"the opposite of {_owner(self.side)} objective ({self.words})"
        return Objective(terms, _text(terms), words, side)

    # ------------------------------------------------------------------ slots
    def _slots(self, layout: Layout) -> list[tuple[float, int, int]]:
        """(coefficient, numerator slot, denominator slot or LENGTH) per term (kept per
        layout shape: the variants of a search share it)."""
        shape = (layout.names, layout.counts, layout.dist_sizes, layout.groups, layout.sides)
        known = _SLOTS.get((self, shape))
        if known is not None:
            return known
        out = []
        for t in self.terms:
            s = _metric_slots(layout, t.ref)
            out.append((t.coefficient, s[0], LENGTH if s[1] == ROUNDS else s[1]))
        if len(_SLOTS) > 256:
            _SLOTS.clear()
        _SLOTS[(self, shape)] = out
        return out

    def pairs(self, layout: Layout) -> tuple[tuple[int, int], ...]:
        """The cross sums a run must keep for :meth:`estimate` (every pair of distinct
        slots the terms read)."""
        slots = sorted({s for _, a, b in self._slots(layout) for s in (a, b) if s != LENGTH})
        return tuple((a, b) for k, a in enumerate(slots) for b in slots[k + 1 :])

    def _weights(self, layout: Layout, total: np.ndarray) -> tuple[float, dict[int, float]]:
        """The objective's value and the weight of every slot in its linearised term,
        from the totals ``total`` (slot sums; ``total[LENGTH]`` is the rounds)."""
        value = 0.0
        weights: dict[int, float] = {}
        for c, a, b in self._slots(layout):
            den = float(total[b])
            if den == 0:
                return math.nan, {}
            r = float(total[a]) / den
            value += c * r
            weights[a] = weights.get(a, 0.0) + c / den
            weights[b] = weights.get(b, 0.0) - c * r / den
        return value, weights

    # ------------------------------------------------------------------ one run
    def estimate(self, run: Any) -> Estimate:
        """The objective of one run (a ``Result`` or ``RawRun``: ``layout`` and ``sums``)
        with its interval from the run's regeneration cycles; the run must keep
        :meth:`pairs`."""
        layout, sums = run.layout, run.sums
        total = np.append(sums.s1.astype(np.float64), float(sums.tot[1]))
        value, w = self._weights(layout, total)
        cycles = int(sums.tot[0])
        if value != value or cycles < 2:
            return NAN_ESTIMATE if value != value else Estimate(value, math.nan, *(2 * [value]))
        index = layout.pair_index
        ss = 0.0
        for a, wa in w.items():
            for b, wb in w.items():
                ss += wa * wb * _cross(sums, index, a, b)
        se = math.sqrt(max(ss, 0.0) * cycles / (cycles - 1))
        return Estimate(value, se, value - Z95 * se, value + Z95 * se)

    # ------------------------------------------------------------------ paired
    def batch_terms(self, raw: Any) -> tuple[float, np.ndarray]:
        """The value of a batched run (``RawRun`` with ``batches``) and its per-batch
        linearised terms ``u_k``."""
        batches = raw.batches or []
        s1 = np.stack([b.s1 for b in batches]).astype(np.float64)
        length = np.array([b.tot[1] for b in batches], dtype=np.float64)
        cols = np.column_stack([s1, length])  # column LENGTH (-1) is the batch length
        value, w = self._weights(raw.layout, cols.sum(axis=0))
        if value != value:
            return value, np.full(len(batches), np.nan)
        u = np.zeros(len(batches))
        for slot, weight in w.items():
            u += weight * cols[:, slot]
        return value, u

    def evaluate(self, raw_a: Any, raw_b: Any) -> PairedEstimate:
        """``O_B - O_A`` of two runs of the same rounds, seed and batches, with the
        paired interval (batch means on common random numbers, as ``simkit compare``)."""
        a, ua = self.batch_terms(raw_a)
        b, ub = self.batch_terms(raw_b)
        return paired(a, ua, b, ub)

    def __str__(self) -> str:
        return self.text


def paired(a: float, ua: np.ndarray, b: float, ub: np.ndarray) -> PairedEstimate:
    """The :class:`PairedEstimate` of ``b - a`` from per-batch linearised terms."""
    k = ua.size
    if k != ub.size:
        raise ValueError(f"paired runs need the same batches, got {k} and {ub.size}")
    u = ub - ua
    se = math.sqrt(k / (k - 1) * float(np.dot(u, u))) if k > 1 else math.nan
    t = t_quantile_975(k - 1) if k > 1 else math.nan
    d = b - a
    return PairedEstimate(a, b, d, se, d - t * se, d + t * se, k)


def _cross(sums: Any, index: dict[tuple[int, int], int], a: int, b: int) -> float:
    """sum over cycles of ``y_a * y_b`` (``LENGTH``: the cycle length)."""
    if a == LENGTH and b == LENGTH:
        return float(sums.tot[2])
    if a == LENGTH or b == LENGTH:
        return float(sums.sl[b if a == LENGTH else a])
    if a == b:
        return float(sums.s2[a])
    k = index.get((a, b), index.get((b, a)))
    if k is None:
        raise KeyError("the run kept no cross sums for this objective (Objective.pairs)")
    return float(sums.sx[k])


def _metric_slots(layout: Layout, ref: Ref) -> tuple[int, int]:
    for s in metric_slots(layout, ref.level):
        if s.who == ref.name and s.metric == ref.metric:
            return s.num, s.den
    raise KeyError(f"no number {ref} in this run")


def _is_ratio(name: str) -> bool:
    try:
        return metric(name).kind == "ratio"
    except KeyError:
        return True


def _owner(side: str) -> str:
    """``party's``, ``monsters'``."""
    return f"{side}'" if side.endswith("s") else f"{side}'s"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _text(terms: tuple[Term, ...]) -> str:
    return " ".join(t.text(k == 0) for k, t in enumerate(terms))


def _words(terms: tuple[Term, ...]) -> str:
    parts = []
    for k, t in enumerate(terms):
        try:
            label = metric(t.ref.metric).label.lower()
        except KeyError:
            label = t.ref.metric
        level = {COMBATANT: "", GROUP: "group ", SIDE: "side "}[t.ref.level]
        size = abs(t.coefficient)
        factor = "" if size == 1 else f"{_num(size)} × "
        sign = "minus " if t.coefficient < 0 else ("plus " if k else "")
        parts.append(f"{sign}{factor}{label} of {level}{t.ref.name}")
    ratios = any(_is_ratio(t.ref.metric) for t in terms)
    return ", ".join(parts) + ("" if ratios else ", per round")


# --------------------------------------------------------------------------- parsing
def split_terms(text: str) -> list[tuple[int, str]]:
    """``'a - 0.5*b + c'`` -> ``[(1, 'a'), (-1, '0.5*b'), (1, 'c')]``: split at each
    ``+`` or ``-`` with white space on both sides (a leading sign needs none after it)."""
    terms: list[tuple[int, str]] = []
    text = text.strip()
    sign = 1
    if text[:1] in "+-":
        sign = -1 if text[0] == "-" else 1
        text = text[1:].lstrip()
    begin = 0
    for k, ch in enumerate(text):
        if ch in "+-" and 0 < k < len(text) - 1 and text[k - 1].isspace() and text[k + 1].isspace():
            terms.append((sign, text[begin:k].strip()))
            sign = -1 if ch == "-" else 1
            begin = k + 1
    terms.append((sign, text[begin:].strip()))
    return terms


def parse_objective(
    text: str, scenario: Scenario, available: dict[str, list[str]], label: str = "--objective"
) -> Objective:
    """``'side:party.actions - 0.5*side:party.hasty_only'`` -> Objective (``SIDE=``
    before it names the side that wants it; default: the side of its first reference).

        ``available`` maps a level to its metric names (``tune.available_metrics``).  A bad
        objective is a ScenarioError naming ``label`` and the text, with the closest name."""
    origin = f"{label} {shown(text)}"
    if not isinstance(text, str) or not text.strip():
        raise ScenarioError(
            f"{origin}: expected references joined by + or -, e.g. "
            "'side:party.actions - 0.5*side:party.hasty_only'"
        )
    if len(text) > MAX_TEXT:
        raise ScenarioError(f"{origin}: longer than {MAX_TEXT} characters")
    owner = None
    if "=" in text:
        owner, _, text = text.partition("=")
        owner = owner.strip()
        if owner not in scenario.sides:
            sides = list(scenario.sides)
            raise ScenarioError(
                f"{origin}: no side {shown(owner)}{suggest(owner, sides)} before '='; "
                f"sides: {', '.join(sides)}"
            )
        if not text.strip():
            raise ScenarioError(f"{origin}: nothing after '{owner}='")
    body = text.rstrip()
    if len(body) > 1 and body[-1] in "+-" and body[-2].isspace():
        raise ScenarioError(f"{origin}: a term is expected after the last {body[-1]!r}")
    parts = split_terms(text)
    if len(parts) > MAX_TERMS:
        raise ScenarioError(f"{origin}: at most {MAX_TERMS} terms")
    terms = []
    for sign, part in parts:
        if not part:
            raise ScenarioError(f"{origin}: an empty term (write 'a - b', a space each side)")
        coefficient = 1.0
        ref_text = part
        left, star, right = part.partition("*")
        if star:
            try:
                coefficient = parse_number(left.strip())
            except ValueError:
                raise ScenarioError(
                    f"{origin}: {shown(left.strip())} is not a number (write COEFFICIENT*REF)"
                ) from None
            if not math.isfinite(coefficient):
                raise ScenarioError(f"{origin}: coefficients must be finite numbers")
            ref_text = right.strip()
        level = LEVEL_PREFIXES.get(ref_text.partition(":")[0], COMBATANT)
        ref = parse_ref(scenario, ref_text, available[level], origin)
        terms.append(Term(sign * coefficient, ref))
    side = owner or _side_of(scenario, terms[0].ref)
    terms_t = tuple(terms)
    return Objective(terms_t, _text(terms_t), _words(terms_t), side)


def _side_of(scenario: Scenario, ref: Ref) -> str:
    if ref.level == SIDE:
        return ref.name
    for c in scenario.combatants:
        if c.name == ref.name or c.group == ref.name:
            return c.side
    return scenario.sides[0]


def default_objective(scenario: Scenario, side: str, metrics: tuple[str, ...]) -> Objective:
    """The default objective of ``side`` (module docstring; docs/rules-decisions.md
    OBJ-1); ``metrics`` are the side-level metric names of the scenario's system."""
    if "attacks_received" not in metrics:
        refs = (Term(1.0, Ref(SIDE, side, "actions")),)
        others = [s for s in scenario.sides if s != side]
        terms = refs + tuple(Term(-1.0 / len(others), Ref(SIDE, s, "actions")) for s in others)
        words = (
            f"{_owner(side)} actions minus its opponents' actions per round (this system "
            "counts no attacks)"
        )
        return Objective(terms, _text(terms), words, side)
    defended = "defended" in metrics
    terms_l: list[Term] = []
    for s in scenario.sides:
        k = -1.0 if s == side else 1.0
        terms_l.append(Term(k, Ref(SIDE, s, "attacks_received")))
        if defended:
            terms_l.append(Term(-k, Ref(SIDE, s, "defended")))
    terms = tuple(terms_l)
    normal = "without meeting a normal defense" if defended else ""
    received = "without one" if defended else ""
    words = (
        f"{_owner(side)} default objective: attacks the other sides receive {normal}, minus "
        f"attacks {side} receives {received}, per round"
    )
    return Objective(terms, _text(terms), " ".join(words.split()).replace(" ,", ","), side)

"""System ``vtm``: how the counts of its rounds are summed (rules.py plays the rules).

Every vtm round is its own regeneration cycle, so a chunk's sums are those of
``flush_cycle(y, 1, ...)`` after every round.  ``compile_scenario`` sorts the slots
of the layout once (``SlotPlan``) and packs what ``_run_chunk`` does every round into
one int64 vector, the *plan* (``counting.pack_plan``; its header ``H_*`` below):
* *constant* slots hold the same value in every round (``actions`` of a combatant
  that cannot abort, ``attacks_made`` with attack_share 0 or 1, ...): their sums are
  ``n * c`` and ``n * c * c``; *alias* slots equal another slot in every round
  (``defenses`` = ``aborts`` = ``defended``, ...) and copy its sums
  (``counting.close_chunk``);
* up to ``HIST_MAX`` combatants (the most whose orders, ``n ** n`` codes, a dense
  histogram of counting.py takes) the rest is *coded*: each round adds 1 to each of
  three codes in one dense histogram (``counting.dense_add``, a code space each): the
  ranks of the first actions (``first_action``, ``acts_before``), the V2 slot
  positions (``known_declarations``, ``simultaneous``; the same code when nobody
  delays or aborts) and, if it has at most ``VALUES_MAX`` values, the values of the
  other varying counts of the combatants (mixed radix).  After the chunk
  ``counting.expander`` turns every code seen back into its counts through the
  decoder here (``code_expander``: the code a round uses, ``finish`` and the
  rules' V3 ``rules.declare``, then the group and side slots, aggregate_round);
* every other slot is *flushed* each round (``s1 += v``, ``s2 += v * v``; 0/1 slots
  ``s1`` only); beyond ``HIST_MAX`` combatants ``acts_before`` is counted into a
  block of its own;
* cross sums of pairs of slots are per-round products where both slots vary.
``compile_scenario(..., plain=True)`` flushes every slot every round; the tests hold
both plans, and the flushed rows of ``trace``, equal bit for bit.

Counts go into the round's row ``y`` through the layout's named slots
(``cs[c * N_COUNTS + ACTIONS]`` is ``Layout.count_slots[c, ACTIONS]``); the group
and side slots come from ``metrics.aggregate_round``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simkit.metrics import Layout
from simkit.systems.base import SHARE_ALWAYS, SHARE_NEVER, TIE_RANDOM
from simkit.systems.counting import (
    DENSE,
    INNER,
    aggregate_round,
    aggregation_entries,
    alias_units,
    binary_slots,
    constant_units,
    expander,
    histogram_kind,
    pack_plan,
    unit_members,
)
from simkit.systems.support import JIT, njit
from simkit.systems.vtm.memory import (
    ABORT_NEVER,
    DELAY_NEVER,
    G_BASE,
    G_N,
    G_ORDER,
    G_SIMULTANEOUS,
    G_SIMULTANEOUS_SLOT,
    P_DIST,
    W_FIRST,
    W_HI,
    W_LO,
    _address,
)

COUNTS = (
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "defenses",
    "aborts",
    "known_declarations",
    "attacks_made",
    "attacks_received",
    "undefended",
    "defended",
)
(
    FIRST_ACTION,
    ACTIONS,
    NO_ACTION,
    ATTACKED_BEFORE_ACTING,
    DEFENSES,
    ABORTS,
    KNOWN,
    ATTACKS_MADE,
    ATTACKS_RECEIVED,
    UNDEFENDED,
    DEFENDED,
) = range(len(COUNTS))
N_COUNTS = len(COUNTS)  # cs[c * N_COUNTS + ACTIONS] is Layout.count_slots[c, ACTIONS]
SCENARIO_COUNTS = ("simultaneous",)
# up to this many combatants the orders are coded: n ** n codes in a dense histogram
HIST_MAX = max(n for n in range(1, 17) if histogram_kind(n**n) == DENSE)  # 6
VALUES_MAX = 1 << 15  # the most codes of the other counts' values (module docstring)
ZERO = np.int64(0)  # an int64 argument, not a literal


# Header of Compiled.plan: where each list starts (the next one's start is its end)
# and what run_chunk does every round.
(
    H_FLUSH,  # slots whose s1 and s2 are added every round
    H_BINARY,  # 0/1 slots whose s1 is added every round (s2 = s1)
    H_SRC,  # aggregation entries every round (Layout.aggregation): sources,
    H_DST,  # destinations,
    H_OP,  # and OP_SUM / OP_ANY
    H_PAIRS,  # (pair number, slot a, slot b) of the per-round cross sums
    H_BEFORE,  # acts_before slots written every round (read by a pair)
    H_VALUE_SLOTS,  # the counts of the values code,
    H_VALUE_WEIGHTS,  # and their weights
    H_VALUE_KINDS,  # for the lanes (H_LANES): 2 i + 1 attacks_received of i, 2 i its abba
    H_END,
    H_DECLARE,  # 1: V3 every round
    H_FINISH,  # 1: _finish every round
    H_CODED,  # 1: first-action, slot and values codes; 0: the acts_before block
    H_RANKED,  # 1: nobody delays or aborts: the first actions come in slot order
    H_ZERO_ALL,  # 1: every count of the row is read: zero them all every round
    H_LANES,  # 1: rounds may be played FAST_LANES side by side (lanes.play_lanes)
) = range(17)
H_SIZE = 17


@dataclass(frozen=True)
class CodedSums:
    """What ``run_chunk`` sums after the chunk: the codes' slots and how to decode them,
    the constant and alias slots (module docstring)."""

    coded: bool  # first-action and V2 slot codes (n <= HIST_MAX)
    values: int  # size of the code of the other counts' values (0: flushed instead)
    first_coded: np.ndarray  # slots that follow from the first-action code
    first_agg: tuple[np.ndarray, np.ndarray, np.ndarray]
    slot_coded: np.ndarray  # slots that follow from the V2 slot code
    slot_agg: tuple[np.ndarray, np.ndarray, np.ndarray]
    value_coded: np.ndarray  # slots that follow from the values code
    value_agg: tuple[np.ndarray, np.ndarray, np.ndarray]
    value_slots: np.ndarray  # the counts of the values code, and their weights
    value_weights: np.ndarray
    const_slots: np.ndarray  # slots with the same value in every round
    const_values: np.ndarray
    alias_slots: np.ndarray  # slots equal to another in every round
    alias_of: np.ndarray
    pairs_round: np.ndarray  # pair numbers whose product is summed every round


class SlotPlan:
    """How the sums of every slot of the layout are made (module docstring, Sums)."""

    def __init__(
        self, scenario, layout: Layout, abort: list[int], share: list[int], delay: list[int],
        total: list[int], tie: int, plain: bool,
    ):  # fmt: skip
        n = layout.n
        self.coded = n <= HIST_MAX and not plain
        cs = layout.count_slots
        attackers: list[list[int]] = [[] for _ in range(n)]
        for a in range(n):
            if share[a] != SHARE_NEVER:
                for t in scenario.targets(a):
                    attackers[t].append(a)
        can_abort = [abort[i] != ABORT_NEVER and bool(attackers[i]) for i in range(n)]
        delayers = any(d != DELAY_NEVER for d in delay)
        most_received = [sum(total[a] for a in attackers[i]) for i in range(n)]
        # constant slots: the same value in every round
        const: dict[int, int] = {}
        for i in range(n):
            if not can_abort[i]:  # V5: nothing given up, every planned action taken
                const[cs[i, ACTIONS]] = total[i]
                const[cs[i, NO_ACTION]] = 0
                for m in (DEFENSES, ABORTS, DEFENDED):
                    const[cs[i, m]] = 0
                for k in range(layout.dist_sizes[i]):
                    const[layout.dist_index(i, k)] = int(k == total[i])
                if share[i] in (SHARE_NEVER, SHARE_ALWAYS):
                    const[cs[i, ATTACKS_MADE]] = total[i] * (share[i] == SHARE_ALWAYS)
            sure = all(  # every attack on i certain and aimed at i alone
                share[a] == SHARE_ALWAYS and not can_abort[a] and scenario.targets(a) == (i,)
                for a in attackers[i]
            )
            if sure:
                const[cs[i, ATTACKS_RECEIVED]] = most_received[i]
                if not can_abort[i]:
                    const[cs[i, UNDEFENDED]] = most_received[i]
            if not attackers[i]:
                const[cs[i, ATTACKED_BEFORE_ACTING]] = 0
        if tie == TIE_RANDOM:  # V2: nobody shares a slot
            const[layout.scenario_index("simultaneous")] = 0
        members, unit_op = unit_members(layout)
        constant_units(members, unit_op, const)
        # aliases: slots equal to another one in every round (copied after the chunk)
        alias: dict[int, int] = {}
        for i in range(n):
            for m in (DEFENSES, DEFENDED):  # V5: every defense is an abort
                alias[cs[i, m]] = cs[i, ABORTS]
            alias[cs[i, NO_ACTION]] = layout.dist_index(i, 0)
            if not can_abort[i]:
                alias[cs[i, UNDEFENDED]] = cs[i, ATTACKS_RECEIVED]
            if share[i] == SHARE_ALWAYS:
                alias[cs[i, ATTACKS_MADE]] = cs[i, ACTIONS]
        alias_units(members, unit_op, alias)
        alias = {a: r for a, r in alias.items() if a not in const and r not in const}
        if plain:
            const, alias = {}, {}
        varying = set(range(layout.size)) - set(const) - set(alias)
        before = set(range(layout.before_offset, layout.before_offset + n * n))
        # coded slots (few combatants): the first-action code, the V2 slot code, and the
        # code of the values of every other varying count of the combatants
        first_coded: set[int] = set()
        slot_coded: set[int] = set()
        value_slots: list[int] = []
        radix: list[int] = []
        if self.coded:
            first_coded = {int(cs[i, FIRST_ACTION]) for i in range(n)} | before
            slot_coded = {int(cs[i, KNOWN]) for i in range(n)}
            slot_coded.add(layout.scenario_index("simultaneous"))
            most = {ATTACKED_BEFORE_ACTING: [1] * n, ACTIONS: total, ABORTS: total,
                    ATTACKS_MADE: total, ATTACKS_RECEIVED: most_received,
                    UNDEFENDED: most_received}  # fmt: skip
            for i in range(n):
                for m, bound in most.items():
                    if int(cs[i, m]) in varying:
                        value_slots.append(int(cs[i, m]))
                        radix.append(bound[i] + 1)
            if int(np.prod(radix, dtype=np.float64)) > VALUES_MAX:
                value_slots, radix = [], []
        value_coded = set(value_slots)
        for i in range(n):  # what follows from the values: no action, the distribution
            if int(cs[i, ACTIONS]) in value_coded:
                value_coded |= {layout.dist_index(i, k) for k in range(layout.dist_sizes[i])}
        for d, ms in members.items():  # units: every member coded in it (or constant)
            for family in (first_coded, slot_coded, value_coded):
                if all(x in family or alias.get(x) in family or x in const for x in ms):
                    family.add(d)
        self.first_coded = sorted(first_coded & varying)
        self.slot_coded = sorted(slot_coded & varying)
        self.value_coded = sorted(value_coded & varying)
        self.value_slots = value_slots
        self.weights = [int(np.prod(radix[:k], dtype=np.int64)) for k in range(len(radix))]
        self.values = int(np.prod(radix, dtype=np.int64)) if radix else 0
        flush = varying - first_coded - slot_coded - value_coded - before
        # pairs: products every round where both slots vary (through aliases)
        pa, pb = layout.pair_indices()
        self.pairs_round = [
            k for k in range(pa.size) if int(pa[k]) not in const and int(pb[k]) not in const
        ]
        read = {int(pa[k]) for k in self.pairs_round} | {int(pb[k]) for k in self.pairs_round}
        self.before_slots = sorted(read & before)
        # every round: V3 and _finish when their slots are flushed or read by a pair
        self.declare = not self.coded or bool(read)
        self.finish = bool(flush) or bool(read)
        self.zero_all = not self.coded or bool(flush) or bool(read)
        # nobody delays or can abort: everyone's first action comes at its turn, so the
        # ranks of the first actions are the slot positions (one code gives both)
        self.ranked = self.coded and not any(can_abort) and not delayers
        needed = flush | read
        self.agg = aggregation_entries(layout, needed)
        binary = binary_slots(layout)
        self.binary = sorted(flush & binary)
        self.flush = sorted(flush - binary)
        self.const = const
        self.alias = alias
        self.first_agg = aggregation_entries(layout, set(self.first_coded))
        self.slot_agg = aggregation_entries(layout, set(self.slot_coded))
        self.value_agg = aggregation_entries(layout, set(self.value_coded))

    def fields(self) -> dict:
        ints = lambda xs: np.array(list(xs), dtype=np.int64)  # noqa: E731
        keys = sorted(self.const)
        aliases = sorted(self.alias)
        return {
            "coded": self.coded,
            "ranked": self.ranked,
            "zero_all": self.zero_all,
            "declare": self.declare,
            "finish": self.finish,
            "flush": ints(self.flush),
            "binary": ints(self.binary),
            "agg": self.agg,
            "pairs_round": ints(self.pairs_round),
            "before_slots": ints(self.before_slots),
            "const_slots": ints(keys),
            "const_values": ints(self.const[k] for k in keys),
            "alias_slots": ints(aliases),
            "alias_of": ints(self.alias[k] for k in aliases),
            "first_coded": ints(self.first_coded),
            "first_agg": self.first_agg,
            "slot_coded": ints(self.slot_coded),
            "slot_agg": self.slot_agg,
            "values": self.values,
            "value_slots": ints(self.value_slots),
            "value_weights": ints(self.weights),
            "value_coded": ints(self.value_coded),
            "value_agg": self.value_agg,
        }


def compile_counts(
    scenario, layout: Layout, abort: list[int], share: list[int], delay: list[int],
    total: list[int], tie: int, plain: bool, lanes,
) -> tuple[np.ndarray, CodedSums, str | None]:  # fmt: skip
    """The plan of a scenario (``H_*`` header, ``counting.pack_plan``), what is summed
    after the chunk, and why the lanes (lanes.py) cannot serve it (None: they can).

    ``lanes(fields, per_round)``: the value kinds for the lanes and their reason
    (``SlotPlan.fields``; ``per_round``: aggregation entries and pair products the plan
    needs every round)."""
    f = SlotPlan(scenario, layout, abort, share, delay, total, tie, plain).fields()
    pa, pb = layout.pair_indices()
    k = f["pairs_round"]
    pairs = np.stack([k, pa[k], pb[k]], axis=1).reshape(-1)
    src, dst, op = f.pop("agg")
    kinds, lanes_off = lanes(f, src.size + k.size)
    plan = pack_plan(
        [f.pop("flush"), f.pop("binary"), src, dst, op, pairs, f.pop("before_slots"),
         f["value_slots"], f["value_weights"], kinds if lanes_off is None else []],
        {H_DECLARE: f.pop("declare"), H_FINISH: f.pop("finish"), H_CODED: f["coded"],
         H_RANKED: f.pop("ranked"), H_ZERO_ALL: f.pop("zero_all"), H_LANES: lanes_off is None},
        H_SIZE,
    )  # fmt: skip
    return plan, CodedSums(**f), lanes_off


# ----------------------------------------------------------------------------- a round's whole
@njit(**JIT)
def finish(m, y, cs, before, start, end):
    """The counts that follow from the round as a whole: first action, no action, the
    distribution of actions, simultaneous, and the ``acts_before`` slots
    ``before[start:end]`` (the caller then fills the group and side slots)."""
    n = m[G_N]
    for i in range(n):
        acts = y[cs[i * N_COUNTS + ACTIONS]]
        y[cs[i * N_COUNTS + FIRST_ACTION]] = m[W_FIRST + i] == m[G_BASE]
        y[cs[i * N_COUNTS + NO_ACTION]] = acts == 0
        y[m[P_DIST + i] + acts] = 1
    y[m[G_SIMULTANEOUS_SLOT]] = m[G_SIMULTANEOUS]
    offset = n * N_COUNTS  # Layout.before_offset
    for k in range(start, end):  # i's first action strictly before j's
        ij = before[k] - offset
        y[before[k]] = m[W_FIRST + ij // n] < m[W_FIRST + ij % n]


# ----------------------------------------------------------------------------- decoding
FIRST_CODE, SLOT_CODE, VALUES_CODE = range(3)  # the three codes (module docstring)
# The decoder (counting.expander) reads ``ctx``, a tuple of int64 vectors:
C_MEMORY, C_COUNT_SLOTS, C_BEFORE, C_FAMILY = range(4)  # m, count_slots (flat), acts_before
# slots, and the code's *family*: its lists in one vector (counting.pack_plan), header
(
    F_SLOTS,  # the slots that follow from the code
    F_AGG_SRC,  # and the Layout.aggregation entries that fill its group and side slots
    F_AGG_DST,
    F_AGG_OP,
    F_VALUE_SLOTS,  # the counts of the values code,
    F_VALUE_WEIGHTS,  # and their weights
    F_ALIAS_SLOTS,  # slots equal to another in every round,
    F_ALIAS_OF,  # and the slot each equals
    F_END,
    F_KIND,  # the code: FIRST_CODE, SLOT_CODE or VALUES_CODE
) = range(10)
F_SIZE = 10


def families(coded: CodedSums) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The family vectors of the three codes (``C_FAMILY``)."""
    return tuple(
        pack_plan(
            [
                slots,
                *agg,
                coded.value_slots,
                coded.value_weights,
                coded.alias_slots,
                coded.alias_of,
            ],
            {F_KIND: kind},
            F_SIZE,
        )  # fmt: skip
        for kind, slots, agg in (
            (FIRST_CODE, coded.first_coded, coded.first_agg),
            (SLOT_CODE, coded.slot_coded, coded.slot_agg),
            (VALUES_CODE, coded.value_coded, coded.value_agg),
        )
    )


def code_expander(declare):
    """The expansion loop (counting.expander) of the three codes through one
    decoder: FIRST_CODE (ranks of the first actions, as moments: ``finish``, first
    action and acts_before), SLOT_CODE (the V2 slot positions give the order back, then
    ``declare``, V3 (``rules.declare``), and simultaneous) and VALUES_CODE (the counts' values,
    then what follows from them: ``finish``, no action and the distribution); then the
    alias slots and the code's group and side slots (aggregate_round).  The caller sets
    ``m[G_BASE] = 0`` (ranks as moments), ``m[G_TRACE] = 0`` and the constant slots of
    the row first."""

    @njit(**INNER, inline="always")
    def decode(code, ctx, y):
        m = _address(ctx[C_MEMORY])
        row = _address(y)
        cs = _address(ctx[C_COUNT_SLOTS])
        before = ctx[C_BEFORE]
        f = ctx[C_FAMILY]
        for k in range(f[F_SLOTS], f[F_SLOTS + 1]):
            row[f[k]] = 0
        n = m[G_N]
        x = code
        if f[F_KIND] == FIRST_CODE:
            for i in range(n):
                m[W_FIRST + i] = x % n
                x //= n
            finish(m, row, cs, _address(before), ZERO, before.size)
        elif f[F_KIND] == SLOT_CODE:
            for i in range(n):
                m[W_LO + i] = x % n
                x //= n
            shared = 0
            for i in range(n):
                q = m[W_LO + i]
                size = 0
                for j in range(n):
                    if m[W_LO + j] == m[W_LO + i]:
                        size += 1
                        q += j < i
                m[G_ORDER + q] = i
                m[W_HI + i] = m[W_LO + i] + size
                shared |= size > 1
            declare(m, row, cs, m)
            row[m[G_SIMULTANEOUS_SLOT]] = shared
        else:
            start = f[F_VALUE_SLOTS]
            for k in range(f[F_VALUE_SLOTS + 1] - 1, start - 1, -1):
                weight = f[f[F_VALUE_WEIGHTS] + k - start]
                row[f[k]] = x // weight
                x %= weight
            finish(m, row, cs, _address(before), ZERO, ZERO)
        alias = f[F_ALIAS_SLOTS]
        for k in range(alias, f[F_ALIAS_SLOTS + 1]):
            row[f[k]] = row[f[f[F_ALIAS_OF] + k - alias]]
        src = f[f[F_AGG_SRC] : f[F_AGG_DST]]
        aggregate_round(y, src, f[f[F_AGG_DST] : f[F_AGG_OP]], f[f[F_AGG_OP] : f[F_VALUE_SLOTS]])

    return expander(decode)

"""Named codes of the readiness kernel: policies, rules, counts, events, array fields.

Every policy and rule value the schema accepts has a code here, built with
``base.codes`` from the schema's own choice tuples and read with ``base.code_of``
(an unknown value is an error).  The kernel (``rules.py``) uses only these names:
``HOLD_UNTIL_ATTACKED``, ``DEFEND_NEVER``, ``GUARD_ALWAYS``, ``PREP_ONE_DIE``,
``ORDER_CHAIN`` ...  Every constant the kernel uses is an ``np.int64``: numba freezes a
global's value into the code either way, but it types a Python ``int`` global as a
*literal*, and a jitted function called with a literal argument is compiled once per
value (17 builds of the event writer, two of ``act``, ...); an ``np.int64`` is typed
``int64``, so each function is compiled once.

Counts are written through the layout's ``count_slots[i, ACTIONS]``, ``ACTIONS`` being
the index of ``"actions"`` in ``COUNTS`` (the system's ``counts``, metric registry
names).  Events are int64 rows of ``base.EVENT_COLUMNS``; ``EVENT_FIELDS`` says what
the columns ``actor, other, a, b, c`` of each kind hold (``events.py`` decodes them).
"""

from __future__ import annotations

import numpy as np

from simkit.systems.base import codes
from simkit.systems.readiness import schema


def _fields(n: int) -> tuple[np.int64, ...]:
    return tuple(np.int64(k) for k in range(n))


# --------------------------------------------------------------------------- policies, rules
HOLD_CODES = codes(schema.HOLDS)
HOLD_NEVER = np.int64(HOLD_CODES["never"])
HOLD_UNTIL_ATTACKED = np.int64(HOLD_CODES["until_attacked"])
HOLD_UNTIL_ENEMY_ACTS = np.int64(HOLD_CODES["until_enemy_acts"])

DEFEND_CODES = codes((*schema.DEFENDS, schema.HASTY_UP_TO))
DEFEND_ALWAYS = np.int64(DEFEND_CODES["always"])
DEFEND_NEVER = np.int64(DEFEND_CODES["never"])
DEFEND_UNLESS_HASTY = np.int64(DEFEND_CODES["unless_hasty"])
DEFEND_HASTY_UP_TO = np.int64(DEFEND_CODES[schema.HASTY_UP_TO])

GUARD_CODES = codes(schema.GUARDS)
GUARD_NEVER = np.int64(GUARD_CODES["never"])
GUARD_BACKUP = np.int64(GUARD_CODES["backup"])
GUARD_ALWAYS = np.int64(GUARD_CODES["always"])

ROLE_CODES = codes(schema.ROLES)
ROLE_HERO = np.int64(ROLE_CODES["hero"])
ROLE_SECONDARY = np.int64(ROLE_CODES["secondary"])

ORDER_CODES = codes(schema.ORDERS)
ORDER_DYNAMIC = np.int64(ORDER_CODES["dynamic"])
ORDER_CHAIN = np.int64(ORDER_CODES["chain"])  # [rev 3]: the run ends at a response
ORDER_CHAIN_UNBROKEN = np.int64(ORDER_CODES["chain_unbroken"])  # revision 2

PREP_CODES = codes(schema.PREPS)
PREP_ONE_DIE = np.int64(PREP_CODES["one_die"])
PREP_SIXES = np.int64(PREP_CODES["sixes"])
PREP_LOWEST = np.int64(PREP_CODES["lowest"])

HOLDER_ACTION_CODES = codes(schema.HOLDER_ACTIONS)
HOLDER_HELD_DICE = np.int64(HOLDER_ACTION_CODES["held_dice"])
HOLDER_RELEASE_ONLY = np.int64(HOLDER_ACTION_CODES["release_only"])

RELEASE_RULE_CODES = codes(schema.RELEASES)
RELEASE_HIGHER = np.int64(RELEASE_RULE_CODES["higher"])  # R5 [rev 3]
RELEASE_ANY = np.int64(RELEASE_RULE_CODES["any"])  # revision 2

# --------------------------------------------------------------------------- R-constants
SIDES = np.int64(6)  # R1: d6
HIGHEST_SCALE = np.int64(SIDES - 1)  # R7: a hasty defense has scale a - d in 1 .. 5
SECONDARY_WOUND = np.int64(3)  # R8: a secondary combatant's mental wound
NEVER_HASTY = np.int64(-1)  # hasty limit of defend "never" / "unless_hasty"
HIT_ALWAYS = np.int64(-1)  # P_HIT of hit_chance 1: every attack would take effect, no draw
WE_DEFEND = np.int64(1)  # P_WHEN_EFFECTIVE bits (R7 [rev 3]): its defend answers only an
WE_GUARD = np.int64(2)  # attack that would take effect; its guard likewise

# --------------------------------------------------------------------------- counts
COUNTS = (
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "defenses",
    "hasty_defenses",
    "hasty_scale_total",
    "expired_dice",
    "guard_defenses",
    "on_edge",
    "edge_wound",
    "attacks_made",
    "attacks_received",
    "undefended",
    "defended",
    "hasty_only",
    *(f"hasty_ge.{k}" for k in range(1, HIGHEST_SCALE + 1)),
    "hits",  # R7 [rev 3]
    "wasted_defenses",
)
SCENARIO_COUNTS = ("stalemate",)
FIRST_ACTION = np.int64(COUNTS.index("first_action"))
ACTIONS = np.int64(COUNTS.index("actions"))
NO_ACTION = np.int64(COUNTS.index("no_action"))
ATTACKED_BEFORE_ACTING = np.int64(COUNTS.index("attacked_before_acting"))
DEFENSES = np.int64(COUNTS.index("defenses"))
HASTY_DEFENSES = np.int64(COUNTS.index("hasty_defenses"))
HASTY_SCALE_TOTAL = np.int64(COUNTS.index("hasty_scale_total"))
EXPIRED_DICE = np.int64(COUNTS.index("expired_dice"))
GUARD_DEFENSES = np.int64(COUNTS.index("guard_defenses"))
ON_EDGE = np.int64(COUNTS.index("on_edge"))
EDGE_WOUND = np.int64(COUNTS.index("edge_wound"))
ATTACKS_MADE = np.int64(COUNTS.index("attacks_made"))
ATTACKS_RECEIVED = np.int64(COUNTS.index("attacks_received"))
UNDEFENDED = np.int64(COUNTS.index("undefended"))
DEFENDED = np.int64(COUNTS.index("defended"))
HASTY_ONLY = np.int64(COUNTS.index("hasty_only"))
HASTY_GE_1 = np.int64(COUNTS.index("hasty_ge.1"))  # hasty_ge.k is HASTY_GE_1 + k - 1
HITS = np.int64(COUNTS.index("hits"))
WASTED_DEFENSES = np.int64(COUNTS.index("wasted_defenses"))
STALEMATE = np.int64(SCENARIO_COUNTS.index("stalemate"))
N_COUNTS = np.int64(len(COUNTS))
COUNT_COLUMNS = 32  # kernel.Compiled.count_table: N_COUNTS slots padded to a power of two
assert N_COUNTS <= COUNT_COLUMNS

# --------------------------------------------------------------------------- events
EVENT_KINDS = (
    "no_hold",
    "roll",
    "prep",
    "turn",
    "hold",
    "release",
    "declare",
    "act",
    "attack",
    "response",
    "unanswered",
    "expired",
    "stalemate",
    "rejoin",
    "run_broken",
    "no_effect",
    "declined",
)
EVENT_CODES = codes(EVENT_KINDS)
EV_NO_HOLD = np.int64(EVENT_CODES["no_hold"])
EV_ROLL = np.int64(EVENT_CODES["roll"])
EV_PREP = np.int64(EVENT_CODES["prep"])
EV_TURN = np.int64(EVENT_CODES["turn"])
EV_HOLD = np.int64(EVENT_CODES["hold"])
EV_RELEASE = np.int64(EVENT_CODES["release"])
EV_DECLARE = np.int64(EVENT_CODES["declare"])
EV_ACT = np.int64(EVENT_CODES["act"])
EV_ATTACK = np.int64(EVENT_CODES["attack"])
EV_RESPONSE = np.int64(EVENT_CODES["response"])
EV_UNANSWERED = np.int64(EVENT_CODES["unanswered"])
EV_EXPIRED = np.int64(EVENT_CODES["expired"])
EV_STALEMATE = np.int64(EVENT_CODES["stalemate"])
EV_REJOIN = np.int64(EVENT_CODES["rejoin"])
EV_RUN_BROKEN = np.int64(EVENT_CODES["run_broken"])
EV_NO_EFFECT = np.int64(EVENT_CODES["no_effect"])
EV_DECLINED = np.int64(EVENT_CODES["declined"])
EVENT_RULES = {
    "no_hold": "R8",
    "roll": "R1",
    "prep": "R2",
    "turn": "R3",
    "hold": "R5",
    "release": "R5",
    "declare": "R5",
    "act": "R4",
    "attack": "R4",
    "response": "R7",
    "unanswered": "R7",
    "expired": "R5",
    "stalemate": "R8",
    "rejoin": "R5",
    "run_broken": "R3",
    "no_effect": "R7",
    "declined": "R7",
}
# What the columns actor, other, a, b, c hold, per kind ("" = unused).  Dice of a
# roll are 3-bit faces in the order drawn (die k at bits 3k..3k+2); pools of a prep
# are the kernel's pools (the count of face f in bits 8(f-1)..8f-1).
EVENT_FIELDS = {
    "no_hold": ("", "", "", "", ""),
    "roll": ("combatant", "", "faces", "count", ""),
    "prep": ("combatant", "", "before", "after", ""),
    "turn": ("combatant", "", "value", "", ""),
    "hold": ("combatant", "", "", "", ""),
    "release": ("combatant", "", "why", "", ""),
    "declare": ("combatant", "", "value", "", ""),
    "act": ("combatant", "", "die", "holder_action", ""),
    "attack": ("attacker", "target", "initiative", "by_holder", ""),
    "response": ("responder", "defended", "die", "kind", "scale"),  # c: 1 for a named guard (R7a)
    "unanswered": ("target", "", "", "", ""),
    "expired": ("combatant", "", "count", "", ""),
    "stalemate": ("", "", "", "", ""),
    "rejoin": ("combatant", "", "value", "next", ""),
    "run_broken": ("combatant", "", "value", "", ""),
    "no_effect": ("attacker", "target", "", "", ""),
    "declined": ("responder", "defended", "attacker", "", ""),
}
RELEASE_WHYS = ("attacked", "enemy_acted", "opponents_out")
RELEASE_CODES = codes(RELEASE_WHYS)
RELEASE_ATTACKED = np.int64(RELEASE_CODES["attacked"])
RELEASE_ENEMY_ACTED = np.int64(RELEASE_CODES["enemy_acted"])
RELEASE_OPPONENTS_OUT = np.int64(RELEASE_CODES["opponents_out"])
RESPONSE_KINDS = ("self", "hasty", "guard")
RESPONSE_CODES = codes(RESPONSE_KINDS)
RESPONSE_SELF = np.int64(RESPONSE_CODES["self"])
RESPONSE_HASTY = np.int64(RESPONSE_CODES["hasty"])
RESPONSE_GUARD = np.int64(RESPONSE_CODES["guard"])
FACE_BITS = np.int64(3)  # a face 1..6 in a roll event

# --------------------------------------------------------------------------- kernel arrays
# P[i, field] and W[i, field]: combatant i's parameters (compile_scenario; trace may fix
# dice) and its state during a round, the columns of ONE array [n, N_FIELDS]: a
# combatant's fields are contiguous and the row length is a compile-time constant.
(
    P_DICE,  # readiness (R1)
    P_ADVANTAGE,  # R2 pips
    P_SIDE,  # index of its side
    P_HOLD,  # HOLD_* (R5)
    P_DEFEND,  # DEFEND_* (R7)
    P_HASTY_LIMIT,  # largest hasty scale its defend policy accepts, NEVER_HASTY if none
    P_GUARD,  # GUARD_* (R7)
    P_SURPRISED,  # 1: makes no responses (R7)
    P_SHARE,  # attack_share as base.share_code
    P_TARGET_START,  # its target list in the targets array
    P_TARGET_COUNT,
    P_WOUND,  # R8: weakness for a hero, SECONDARY_WOUND for a secondary
    P_FIXED,  # 1: trace(dice=...) fixes its R1 faces
    P_FIXED_POOL,  # the fixed faces as a pool
    P_FIXED_FACES,  # the fixed faces in the given order, FACE_BITS each (roll event)
    P_TARGET_MASK,  # target count - 1 if a power of two >= 2 (a one-byte draw), else -1
    P_HIT,  # R7 [rev 3] hit_chance as a chance threshold, HIT_ALWAYS for 1 (no draw)
    P_WHEN_EFFECTIVE,  # WE_DEFEND | WE_GUARD bits: answers only attacks that take effect
    P_GUARD_NAMED,  # 1: its guard protects only the allies it lists (R7a; trace cites R7a)
) = _fields(19)
N_P = 19

(
    W_POOL,  # unspent dice: the count of face f in bits 8(f-1)..8f-1
    W_STATE,  # H_* (R5)
    W_HELD,  # 1 once it has held this round (R5 holder's actions)
    W_RELEASE_EVENT,  # the action that released it (until_enemy_acts)
    W_ATTACKED,  # 1 once attacked this round
    W_FIRST,  # step of its first action, NO_STEP if none yet
    W_LOWEST,  # lowest initiative of its own actions this round (R5 held dice)
    W_RANK,  # T2 and R3: (rank << KEY_RANK) | (twin << KEY_TWIN) | (KEY_INDEX - i), rank
    # how many full pools of the round are lower than its own, twin 1 if another equals it
    W_IN_R3,  # 1 while it may take turns (R3): not holding (its key is -1 without dice)
    W_ROWS,  # the round's entry of its first count in the counts array (CS[i, 0] + col)
    W_OWN,  # this round's counts of its actions and answers, OWN_BITS each (rules.add_round)
    W_AIMED,  # this round's attacks on it by outcome, and hits, AIMED_BITS each
) = tuple(N_P + k for k in _fields(12))
N_W = 12
# The row length: the N_P + N_W fields padded to a power of two, so that a row's address
# is a shift of its index (kernel.py's drivers: ``with_columns``), not a multiply.
N_FIELDS = 32
assert N_P + N_W <= N_FIELDS

# Hold states during a round (R5).
H_FRESH, H_HOLDING, H_RELEASED, H_NORMAL = _fields(4)
NO_STEP = np.int64(1 << 40)  # W_FIRST / W_LOWEST before any action

# G: round scalars, then two per-side vectors (combatants with dice, actions taken).
(
    G_STEP,  # own actions taken so far this round (the next action's step)
    G_ARMED,  # combatants with unspent dice (R5 asks whether any opponent has one)
    G_HOLDING,  # combatants holding (H_HOLDING)
    G_WAITING_FOR_ENEMY,  # of them, until_enemy_acts holders
    G_RELEASED,  # released until_enemy_acts holders yet to declare (H_RELEASED)
    G_ORDER,  # ORDER_* rule
    G_PREP,  # PREP_* rule
    G_HOLDER_ACTIONS,  # HOLDER_* rule
    G_LOG,  # 1: write events
    G_EVENTS,  # events written so far
    G_ROUND,  # round index (events' first column)
    G_LOG_BATCH,  # the counts array has 1 << G_LOG_BATCH cycles per row (kernel.py)
    G_MAY_HOLD,  # 1 if some combatant has a hold policy: keep what R5 asks for
    G_SIDES,  # number of sides
    G_STALEMATE_ROW,  # row of the scenario count "stalemate" in the counts array
    G_RELEASE_RULE,  # RELEASE_HIGHER / RELEASE_ANY rule (R5 [rev 3])
) = _fields(16)
G_SIDE_ARMED = np.int64(16)  # G[G_SIDE_ARMED + s]: combatants of side s with unspent dice;
# G[G_SIDE_ARMED + G[G_SIDES] + s]: own actions of side s

# R3 keys (rules.py): (v << KEY_V) | (count of v << KEY_COUNT) | (T2 rank << KEY_RANK)
# | (twin << KEY_TWIN) | (KEY_INDEX - i), the leaves of trees of GROUP-wide levels:
# rank, twin and index are W_RANK's.  MAX_COMBATANTS (200) < 256 ranks and indices;
# MAX_READINESS (20) < 256 dice of a face.
KEY_V, KEY_COUNT, KEY_RANK, KEY_TWIN = np.int64(25), np.int64(17), np.int64(9), np.int64(8)
KEY_INDEX = np.int64(255)
# A tree of up to ONE_LEVEL leaves is one level (scanned whole); a larger one has levels of
# GROUP children a node (4: at 200 combatants 0.955 x the time of 8, 2: 1.044 x).
GROUP_BITS = np.int64(2)
GROUP = np.int64(1 << GROUP_BITS)
ONE_LEVEL = 8
R3_SET, SCRATCH_SET = _fields(2)  # trees: everyone in R3; a released group (R5)

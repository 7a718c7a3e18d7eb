"""System ``vtm``: the kernel's memory, one int64 vector ``m``, and the codes it holds.

rules.py plays the rules in it (for kernel.py's chunk loops and trace; lanes.py reads it
too), counts.py decodes the outcome codes back through it.  Every helper of the rules and
of counts.py takes data pointers (``_address``), not arrays.
"""

from __future__ import annotations

from numba import types
from numba.extending import intrinsic

from simkit.systems.base import MAX_COMBATANTS, codes
from simkit.systems.support import JIT_DISABLED
from simkit.systems.vtm import schema

# ----------------------------------------------------------------------------- codes
DELAY_CODES = codes(schema.DELAYS)
DELAY_NEVER, DELAY_UNTIL_ENEMY_ACTS = (DELAY_CODES[d] for d in schema.DELAYS)
ABORT_CODES = codes(schema.ABORTS)
ABORT_NEVER, ABORT_ALWAYS, ABORT_BEFORE_ACTING = (ABORT_CODES[a] for a in schema.ABORTS)
MULTI_CODES = codes(schema.MULTIS)
MULTI_END, MULTI_IN_TURN = (MULTI_CODES[m] for m in schema.MULTIS)
SLOT_ABORT_CODES = codes(schema.SLOT_ABORTS)
SLOT_ABORT_ALLOWED, SLOT_ABORT_NEVER = (SLOT_ABORT_CODES[v] for v in schema.SLOT_ABORTS)

# The kernel's memory: ONE int64 vector ``m`` (a copy per call), every place in it at a
# fixed offset: scalars, a row of MAX_COMBATANTS entries per parameter and per item of
# round state (``m[W_TURN + c]``: turn actions left of combatant c), then regions.
(
    G_N,
    G_ROUND,
    G_TIE,
    G_MULTI,
    G_TRACE,
    G_MOMENT,
    G_SP,
    G_GROUPS,
    G_DELAYING,
    G_TOTAL,
    G_EVENTS,
    G_BUCKETS,
    G_SIMULTANEOUS,
    G_SIMULTANEOUS_SLOT,
    G_DECLARE,
    G_DELAYERS,
    G_ENDS,
    G_BASE,
    G_SIDES,
    G_FIXED,
    G_SLOT_ABORT,
) = range(21)
_ROWS = 24
_PARAMETERS = (  # fixed by compile_scenario (P_FIXED: by trace --dice)
    "P_RATING", "P_BASE", "P_KEY", "P_SIDE", "P_TURN", "P_END", "P_DELAY", "P_ABORT",
    "P_SHARE", "P_TSTART", "P_TCOUNT", "P_FIXED", "P_STATIC", "P_BUCKET", "P_DIST",
)  # fmt: skip
_STATE = (  # the round's
    "W_KEY", "W_LO", "W_HI", "W_TURN", "W_END_NEXT", "W_FIRST", "W_ACTING", "W_GROUP",
    "W_DELAYING",
)  # fmt: skip
P_RATING = _ROWS + 0 * MAX_COMBATANTS  # rating (V2 tie-break)
P_BASE = _ROWS + 1 * MAX_COMBATANTS  # rating - wound_penalty (V1, V7)
P_KEY = _ROWS + 2 * MAX_COMBATANTS  # V2 sort key without the die
P_SIDE = _ROWS + 3 * MAX_COMBATANTS  # side number
P_TURN = _ROWS + 4 * MAX_COMBATANTS  # V6: actions of its turn
P_END = _ROWS + 5 * MAX_COMBATANTS  # V6: actions at the end of the round
P_DELAY = _ROWS + 6 * MAX_COMBATANTS  # DELAY_* code (V4)
P_ABORT = _ROWS + 7 * MAX_COMBATANTS  # ABORT_* code (V5)
P_SHARE = _ROWS + 8 * MAX_COMBATANTS  # attack_share as SHARE_* / chance threshold
P_TSTART = _ROWS + 9 * MAX_COMBATANTS  # its target list: start in m[G_TARGETS:]
P_TCOUNT = _ROWS + 10 * MAX_COMBATANTS  # and length
P_FIXED = _ROWS + 11 * MAX_COMBATANTS  # a fixed d10 face, 0 if none (trace --dice)
P_STATIC = _ROWS + 12 * MAX_COMBATANTS  # combatants by (rating desc, index): V2 buckets
P_BUCKET = _ROWS + 13 * MAX_COMBATANTS  # V2 bucket of initiative, without the die
P_DIST = _ROWS + 14 * MAX_COMBATANTS  # Layout.dist_offsets
_W = _ROWS + len(_PARAMETERS) * MAX_COMBATANTS
W_KEY = _W + 0 * MAX_COMBATANTS  # V2 key (the die: (W_KEY - P_KEY) >> KEY_SHIFT)
W_LO = _W + 1 * MAX_COMBATANTS  # V2 slot: positions [lo, hi) of the order
W_HI = _W + 2 * MAX_COMBATANTS
W_TURN = _W + 3 * MAX_COMBATANTS  # actions of its turn still to come
W_END_NEXT = _W + 4 * MAX_COMBATANTS  # its next end-of-round action to come (V6; P_END last)
W_FIRST = _W + 5 * MAX_COMBATANTS  # moment of its first own action (NONE: not yet)
W_ACTING = _W + 6 * MAX_COMBATANTS  # the moment it acts in (V5: same moment)
W_GROUP = _W + 7 * MAX_COMBATANTS  # its turn group
W_DELAYING = _W + 8 * MAX_COMBATANTS  # 1 while it delays (V4)
G_ORDER = _W + len(_STATE) * MAX_COMBATANTS  # the combatant at each position (V2)
G_SIDE_ACTS = G_ORDER + MAX_COMBATANTS  # own actions so far, per side (V4)
G_STACK = G_SIDE_ACTS + MAX_COMBATANTS  # turn groups (lo, hi, group)
G_COUNT = G_STACK + 3 * (MAX_COMBATANTS + 2)  # scratch: per side (V3), per bucket (V2)
G_TARGETS = G_COUNT + MAX_COMBATANTS  # the target lists


# ----------------------------------------------------------------------------- pointers
# The kernel's helpers take data pointers, not arrays: a call that passes arrays costs
# a reference-count update per array and call, more than the rules of an action
# (numba's NRT).  ``_address(arr)`` is the data pointer of a C-contiguous array; the
# caller keeps ``arr`` alive for the whole call.  Plain Python (NUMBA_DISABLE_JIT=1):
# a flat view of the array, indexed the same way.
if JIT_DISABLED:

    def _address(arr):  # type: ignore[no-untyped-def]
        return arr.reshape(-1)

else:

    @intrinsic
    def _address(typingctx, arr):
        sig = types.CPointer(arr.dtype)(arr)

        def codegen(context, builder, signature, args):
            return context.make_array(signature.args[0])(context, builder, args[0]).data

        return sig, codegen

"""System ``perception``: the kernel's table ``tab``, one int64 row per quantity.

rules.py plays the rules in it (for kernel.py's paths; lanes.py reads it too), counts.py
counts the round it holds (and decodes an outcome code back into it).  Everything a
round reads or writes is here: the scenario's numbers (``tab[T_PAR, P_*]``), parameters,
target lists, the round's state, and the layout's count slots (row ``T_SLOTS + K_*``:
``Layout.count_slots``).
"""

from __future__ import annotations

COUNTS = (
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "known_intents",
    "intent_disclosed",
    "attacks_made",
    "attacks_received",
    "undefended",
)
(
    K_FIRST,
    K_ACTIONS,
    K_NO_ACTION,
    K_ATTACKED_FIRST,
    K_KNOWN,
    K_DISCLOSED,
    K_MADE,
    K_RECEIVED,
    K_UNDEFENDED,
) = (COUNTS.index(c) for c in COUNTS)

# ``tab[T_PAR]``: the scenario's numbers.
(
    P_MODE,
    P_TIE,
    P_WITHIN,
    P_INFO,
    P_N,
    P_SIDES,
    P_LOW,
    P_SPAN,
    P_BEFORE,
    P_UNITS,
    P_SIZE,
    P_LANES,  # 1: _run_histogram may play rounds side by side (lanes.play_lanes)
) = range(12)
N_PAR = 12

# ``tab``: one row per quantity (see the module docstring).
(
    T_PAR,  # the scenario's numbers (P_*)
    # per combatant, parameters
    T_PER,  # perception
    T_SIDE,  # side index
    T_SHARE,  # attack_share as base.share_code
    T_TCOUNT,  # the length of its target list
    T_TLIST,  # its target list: row T_TARGETS + tab[T_TLIST, i] (equal lists share a row)
    T_BY_PER,  # the combatants by descending perception, then scenario order
    # per side, parameters
    T_STAT,  # P2: group perception (commander's or highest)
    T_MSTART,  # where its members start in row T_MEMBERS
    T_MCOUNT,  # its number of members
    T_BY_STAT,  # the sides by descending group perception, then order of appearance
    T_MEMBERS,  # the sides' members, side after side, each in scenario order
    # per roller (P1: combatant; P2: side)
    T_FIXED,  # trace ``dice``: the face it rolls (0: none)
    T_DIE,  # the face it rolled
    # the round
    T_TOTAL,  # per combatant: d10 + perception (P2: its side's total)
    T_STOTAL,  # per side: d10 + group perception
    T_KEY,  # per entity: its order key (total << KEY_SHIFT) | stat
    T_SLOT,  # per combatant: its slot (0 = first)
    T_SSLOT,  # per side: its place in the side order
    T_ORDER,  # per acting position: the combatant
    T_SORDER,  # per place: the side
    T_TIED,  # per position: tied (P1/P2) with the one before it (or: ahead counts)
    T_BUCKET,  # counting sort buckets, one per possible total
    T_RUN_END,  # per acting position: the first position after its information run
    T_TARGET,  # per combatant: whom its stated first action attacks (NOBODY: none)
    T_AHEAD,  # per side: its members at earlier acting positions (counting)
    T_CHOICE,  # per combatant: its target's place in its target list + 1 (0: none)
    T_FAIR_START,  # fair random orders to draw this round: where each starts
    T_FAIR_SIZE,  # and how many it orders
    # the layout
    T_DIST,  # per combatant: Layout.dist_offsets
    T_SLOTS,  # and a row per count after it: Layout.count_slots (row T_SLOTS + K_*)
) = range(31)
T_TARGETS = T_SLOTS + len(COUNTS)  # and a row per distinct target list after it

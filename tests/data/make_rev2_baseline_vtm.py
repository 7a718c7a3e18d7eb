"""How tests/data/rev2_baseline_vtm.json was made (kept for the record; not run by the
tests).

Run with the tree of commit 3d2bc67, the last commit before revision 3 of the vtm rules
(before V5's ``slot_abort``): every vtm example of scenarios/ played for ROUNDS rounds
(two chunks of the engine, so the chunk boundary is crossed) with its own seed, one
worker, every estimate (mean and standard error) stored exactly as repr() of the float,
under the name of its revision-2 copy in scenarios/revision_2/.
tests/test_rev2_baseline_vtm.py plays those copies (revision 2's readings written out:
``slot_abort = "never"``) with today's simkit and checks that the numbers are unchanged.

    git archive 3d2bc67 | tar -x -C /tmp/rev2 && cd /tmp/rev2 && \\
        PYTHONPATH=/tmp/rev2 python <this file> OUT_ROOT
"""

import json
import sys
from pathlib import Path

import simkit

ROUNDS = 300_000
STEMS = ("vtm_duel", "vtm_gangrel_ambush", "vtm_three_way_brawl", "worked_example_vtm")

old = Path(simkit.__file__).resolve().parents[1]  # the revision-2 tree
root = Path(sys.argv[1]) if len(sys.argv) > 1 else old
out = {}
for stem in STEMS:
    r = simkit.run(old / f"scenarios/{stem}.toml", rounds=ROUNDS, workers=1)
    out[f"scenarios/revision_2/{stem}.toml"] = {
        "seed": r.scenario.seed,
        "rounds": ROUNDS,
        "rows": [[who, metric, repr(mean), repr(se)] for who, metric, mean, se, _, _ in r.rows],
    }
    print(stem, len(r.rows), file=sys.stderr)
(root / "tests/data/rev2_baseline_vtm.json").write_text(json.dumps(out, indent=0) + "\n")

"""How tests/data/rev1_baseline.json was made (kept for the record; not run by the tests).

Run at commit 46d63bd, the last commit that implemented revision 1 of the rules
(docs/rules.md) only: every scenario of scenarios/ and tests/data/rev1/ played for
ROUNDS rounds (two chunks of the engine, so the chunk boundary is crossed) with its own
seed, one worker, and every estimate (mean and standard error) stored exactly as
repr() of the float.
tests/test_rev1_baseline.py plays the same files with revision 1's readings written
out as variants and checks that the numbers are unchanged.
"""

import json
import sys
from pathlib import Path

import simkit

ROUNDS = 300_000

root = Path(__file__).resolve().parents[2]
files = sorted((root / "scenarios").glob("*.toml")) + sorted(
    (root / "tests/data/rev1").glob("*.toml")
)
out = {}
for f in files:
    r = simkit.run(f, rounds=ROUNDS, workers=1)
    rel = str(f.relative_to(root))
    out[rel] = {
        "seed": r.scenario.seed,
        "rounds": ROUNDS,
        "rows": [[who, metric, repr(mean), repr(se)] for who, metric, mean, se, _, _ in r.rows],
    }
    print(rel, len(r.rows), file=sys.stderr)
(root / "tests/data/rev1_baseline.json").write_text(json.dumps(out, indent=0) + "\n")

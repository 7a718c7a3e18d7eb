"""The analysis layer: runs, sweeps, paired comparisons, tuning and reports' runs,
and the result objects (read per combatant, group or side)."""

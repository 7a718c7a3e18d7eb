"""``simkit trace``: the play-by-play of a few rounds, as the rules see them.

The events come from the kernel's own trace path (``System.trace``), the same code
that counts every metric, so what a user watches is what is counted.  Rounds
1 .. K of a trace are the first K rounds that ``simkit run`` plays with the same seed.
``--dice NAME=FACES`` fixes the faces a combatant (or, in group mode, a side) rolls in
every traced round; every other random choice still comes from the seed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from simkit import systems
from simkit.digits import parse_int
from simkit.engine import prepare, seed_sequence
from simkit.scenario import Scenario, ScenarioError, shown, suggest
from simkit.systems.stream import chunk_state


def parse_dice(
    scenario: Scenario, specs: Sequence[str], label: str = "--dice"
) -> dict[int, list[int]]:
    """``['Gunnar=6,6,2']`` -> ``{roller index: [6, 6, 2]}``, checked against who rolls
    what (``System.rollers``): the right number of dice, faces 1..sides."""
    rollers = systems.get(scenario.system).rollers(scenario)
    names = [r[0] for r in rollers]
    out: dict[int, list[int]] = {}
    for spec in specs:
        origin = f"{label} {shown(spec)}"
        name, eq, faces_text = spec.rpartition("=")
        name = name.strip()
        if not eq or not name or not faces_text.strip():
            raise ScenarioError(f"{origin}: expected NAME=FACES, e.g. 'Gunnar=6,6,2'")
        if name not in names:
            raise ScenarioError(
                f"{origin}: nobody named {shown(name)} rolls dice here{suggest(name, names)}; "
                f"rollers: {', '.join(names)}"
            )
        k = names.index(name)
        if k in out:
            raise ScenarioError(f"{origin}: the dice of {name} are given twice")
        _, count, sides = rollers[k]
        parts = [p.strip() for p in faces_text.split(",")]
        try:
            faces = [parse_int(p) for p in parts]  # ASCII digits (simkit.digits)
        except ValueError:
            raise ScenarioError(
                f"{origin}: faces must be integers from 1 to {sides}, got {shown(faces_text)}"
            ) from None
        if len(faces) != count:
            raise ScenarioError(
                f"{origin}: {name} rolls {count} d{sides}, got {len(faces)} "
                f"face{'s' if len(faces) != 1 else ''}"
            )
        bad = [f for f in faces if not 1 <= f <= sides]
        if bad:
            raise ScenarioError(f"{origin}: {bad[0]} is not a face of a d{sides} (1 to {sides})")
        out[k] = faces
    return out


def trace_events(
    scenario: Scenario, rounds: int, seed: int, dice: dict[int, list[int]] | None = None
) -> tuple[Any, Any]:
    """The kernel's trace of rounds 0 .. rounds - 1 of chunk 0 of ``seed``."""
    system = systems.get(scenario.system)
    job = prepare(scenario)
    key = chunk_state(seed_sequence(seed), 0)
    if scenario.fight_rounds:  # R8a: fights as simkit run plays them (engine.fights)
        from simkit.engine.fights import trace_fights

        after = system.after_opening(scenario)
        later = None if after is None else system.compile(after, job.layout)
        return system, trace_fights(
            system, job.compiled, later, key, rounds, scenario.fight_rounds, dice or None
        )
    return system, system.trace(job.compiled, key, rounds, dice=dice or None)


@dataclass(frozen=True)
class Trace:
    """The play-by-play of the first rounds of a seed: a heading, the text of every
    event by round (``lines``) and every event as a record (``records``)."""

    scenario: Scenario
    rounds: int
    seed: int
    dice: dict[str, list[int]]
    heading: str
    text: tuple[tuple[str, ...], ...]  # per round, the events in words
    records: tuple[dict[str, Any], ...]  # every event as a JSON object

    @property
    def lines(self) -> list[str]:
        """The trace as lines: the heading, then a block per round."""
        out = [self.heading]
        k = self.scenario.fight_rounds
        for r, events in enumerate(self.text):
            title = f"Round {r + 1}"
            if k:  # R8a: where the round stands in its fight
                title += f" (fight {r // k + 1}, round {r % k + 1} of {k}"
                title += ": the opening)" if r % k == 0 else ")"
            out += ["", title, *(f"  {e}" for e in events)]
        return out


def trace(
    scenario: Scenario, rounds: int, seed: int, dice: dict[int, list[int]] | None = None
) -> Trace:
    """Play rounds 1 .. ``rounds`` of ``seed`` (``dice`` fixing some rolls) as a Trace."""
    system, tr = trace_events(scenario, rounds, seed, dice)
    rollers = system.rollers(scenario)
    fixed = {rollers[k][0]: list(f) for k, f in sorted((dice or {}).items())}
    shown_dice = (
        "; fixed dice: " + ", ".join(f"{n} {','.join(map(str, f))}" for n, f in fixed.items())
        if fixed
        else ""
    )
    which = (
        "round 1 is the first round" if rounds == 1 else f"rounds 1-{rounds} are the first rounds"
    )
    heading = (
        f"{scenario.name}: system {system.name}, seed {seed}; {which} `simkit run` plays with "
        f"this seed{shown_dice}"
    )
    text = tuple(
        tuple(system.event_text(e, scenario) for e in tr.events if int(e[0]) == r)
        for r in range(rounds)
    )
    records = tuple(_with_fight(system.event_json(e, scenario), scenario) for e in tr.events)
    return Trace(scenario, rounds, seed, fixed, heading, text, records)


def _with_fight(record: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    """An event's record with its fight and round index within the fight (both from 1;
    R8a), after its ``round``, for a scenario with fight_rounds."""
    k = scenario.fight_rounds
    if not k or "round" not in record:
        return record
    out: dict[str, Any] = {}
    for key, value in record.items():
        out[key] = value
        if key == "round":
            out["fight"] = int(value) // k + 1
            out["fight_round"] = int(value) % k + 1
    return out


def play_trace(
    scenario: Scenario,
    rounds: int,
    seed: int,
    dice: dict[int, list[int]] | None = None,
    *,
    as_json: bool = False,
) -> str:
    """The trace as text (a block per round) or as JSON lines (one object per event)."""
    played = trace(scenario, rounds, seed, dice)
    if as_json:
        return "\n".join(json.dumps(r, ensure_ascii=False) for r in played.records)
    from simkit.output.terminal import fit

    return "\n".join(fit(played.lines))

"""Runs on a Dask cluster: bit-identical to local runs, even when a worker is killed.

The cluster tests (marker ``dask``) start real scheduler and worker processes on
127.0.0.1: ``LocalCluster(processes=True, n_workers=2, threads_per_worker=1)``.  The
first task on a fresh worker process loads (or, after a source change, compiles) the
numba kernels, so nothing here is timed; the runs themselves are small.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from requires import requires_module

import simkit
from simkit import engine
from simkit.cli import main
from simkit.engine.distributed import DaskMissingError, SchedulerError
from simkit.scenario import Scenario, load_scenario, scenario_from_dict

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
DUEL = SCENARIOS / "duel_of_equals.toml"
SUM_FIELDS = ("s1", "s2", "sl", "sx", "tot")
ROUNDS = 2 * engine.CHUNK_ROUNDS + 4321  # three chunks, the last one short

pytestmark = pytest.mark.slow  # local Dask clusters: make test, not make check


def _holding_readiness() -> Scenario:
    """Holds on both sides, so R8 stalemates (cycles of two rounds) occur."""
    return scenario_from_dict(
        {
            "scenario": {"name": "dask readiness", "system": "readiness"},
            "rules": {"order": "dynamic"},
            "combatant": [
                {"name": "A", "side": "a", "readiness": 2, "hold": "until_attacked"},
                {"name": "B", "side": "a", "readiness": 1, "attack_share": 0.5, "guard": True},
                {"name": "W", "side": "w", "readiness": 2, "hold": "until_enemy_acts"},
            ],
        }
    )


def assert_same_sums(a, b) -> None:
    for name in SUM_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype == np.int64
        assert np.array_equal(x, y), name


def _cluster():
    distributed = requires_module("distributed", "the dask extra")
    # Compile (or load) the kernels here first, once, so that the workers load them
    # from numba's cache instead of both compiling them at the same time.
    for scenario in _warm_up_scenarios():
        engine.simulate(scenario, 10, np.random.SeedSequence(0), workers=1)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    client = distributed.Client(cluster, set_as_default=False)
    # Load the kernels on both workers before anything is measured or killed.
    for scenario in _warm_up_scenarios():
        client.run(engine.simulate, scenario, 10, np.random.SeedSequence(0), 1)
    return cluster, client


def _warm_up_scenarios() -> list[Scenario]:
    paths = ("duel_of_equals.toml", "vtm_duel.toml", "perception_party_vs_wolves.toml")
    return [_holding_readiness(), *(load_scenario(SCENARIOS / p) for p in paths)]


@pytest.fixture(scope="class")
def client():
    cluster, client = _cluster()
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.mark.dask
class TestOnATwoWorkerCluster:
    """One cluster for these tests, stopped after them."""

    @pytest.mark.parametrize(
        "make",
        [
            _holding_readiness,
            lambda: load_scenario(SCENARIOS / "vtm_three_way_brawl.toml"),
            lambda: load_scenario(SCENARIOS / "perception_party_vs_wolves.toml"),
        ],
        ids=["readiness", "vtm", "perception"],
    )
    def test_a_run_on_the_cluster_is_bit_identical_to_a_local_run(self, client, make):
        scenario = make()
        seq = np.random.SeedSequence(2026)
        local = engine.simulate(scenario, ROUNDS, seq, workers=1)
        seen: list[int] = []
        remote = engine.simulate(scenario, ROUNDS, seq, scheduler=client, progress=seen.append)
        assert_same_sums(remote.sums, local.sums)
        assert remote.sums.rounds == ROUNDS
        assert sorted(seen) == sorted(engine.chunk_sizes(ROUNDS))
        assert remote.workers == 2

    def test_fights_on_the_cluster_are_bit_identical_to_local_fights(self, client, capsys):
        """R8a: a scenario in fights plays its chunks of whole fights as tasks; the sums,
        the per-round-index sums and so every --by round row equal a local run's."""
        ambush = SCENARIOS / "ambush.toml"
        scenario = load_scenario(ambush)
        k = scenario.fight_rounds
        seq = np.random.SeedSequence(2026)
        local = engine.simulate(scenario, ROUNDS, seq, workers=1)
        seen: list[int] = []
        remote = engine.simulate(scenario, ROUNDS, seq, scheduler=client, progress=seen.append)
        assert_same_sums(remote.sums, local.sums)
        assert remote.sums.rounds == local.sums.rounds == -(-ROUNDS // k) * k
        for a, b in zip(remote.fights.per_index, local.fights.per_index, strict=True):
            assert_same_sums(a, b)
        per = engine.CHUNK_ROUNDS // k * k  # whole fights a chunk
        assert sorted(seen) == sorted([per, per, remote.sums.rounds - 2 * per])
        common = ["run", str(ambush), "--rounds", "30000", "--seed", "9", "--by", "round"]
        rows = []
        for more in ([], ["--scheduler", client.scheduler.address]):
            assert main([*common, *more, "--format", "json"]) == 0
            rows.append(json.loads(capsys.readouterr().out)["rows"])
        assert rows[0] == rows[1] and {r["level"] for r in rows[0]} >= {"side", "combatant"}

    def test_at_most_twice_the_worker_threads_are_in_flight(self, client, monkeypatch):
        submit = client.submit
        done: list[int] = []
        in_flight: list[int] = []

        def counting_submit(*args, **kwargs):
            in_flight.append(len(in_flight) + 1 - len(done))  # submitted, not yet added
            return submit(*args, **kwargs)

        monkeypatch.setattr(client, "submit", counting_submit)
        rounds = 12 * engine.CHUNK_ROUNDS
        seq = np.random.SeedSequence(1)
        engine.simulate(load_scenario(DUEL), rounds, seq, scheduler=client, progress=done.append)
        assert len(in_flight) == len(done) == 12
        assert max(in_flight) == 4  # 2 x (2 workers x 1 thread)

    def test_a_sweep_on_the_cluster_equals_the_local_sweep(self, client):
        vary = ["Ragnar.readiness=2..4", "rules.order=dynamic,chain"]
        local = simkit.sweep(DUEL, vary, rounds=ROUNDS, rng=11, workers=2)
        remote = simkit.sweep(DUEL, vary, rounds=ROUNDS, rng=11, scheduler=client)
        pd.testing.assert_frame_equal(remote.table, local.table, check_exact=True)
        assert len(remote.results) == 6
        for a, b in zip(remote.results, local.results, strict=True):
            assert_same_sums(a.sums, b.sums)

    def test_cli_run_and_sweep_take_a_scheduler_address(self, client, tmp_path, capsys):
        address = client.scheduler.address
        common = ["--rounds", str(ROUNDS), "--seed", "3"]
        assert main(["run", str(DUEL), *common, "--out", str(tmp_path / "a")]) == 0
        remote = ["--scheduler", address]
        assert main(["run", str(DUEL), *common, *remote, "--out", str(tmp_path / "b")]) == 0
        sweep = ["sweep", str(DUEL), "--vary", "Sigrid.readiness=2,4", *common]
        assert main([*sweep, "--out", str(tmp_path / "c")]) == 0
        assert main([*sweep, *remote, "--out", str(tmp_path / "d")]) == 0
        capsys.readouterr()
        for local, remote, name in (("a", "b", "metrics.csv"), ("c", "d", "sweep.csv")):
            assert (tmp_path / remote / name).read_bytes() == (tmp_path / local / name).read_bytes()


@pytest.mark.dask
def test_cli_run_with_a_local_cluster(tmp_path, capsys):
    requires_module("distributed", "the dask extra")
    common = ["--rounds", "30000", "--seed", "9", "--workers", "1"]
    assert main(["run", str(DUEL), *common, "--out", str(tmp_path / "a")]) == 0
    local = ["--scheduler", "local"]
    assert main(["run", str(DUEL), *common, *local, "--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    a, b = (tmp_path / d / "metrics.csv" for d in "ab")
    assert b.read_bytes() == a.read_bytes()


@pytest.mark.dask
def test_a_worker_killed_mid_run_loses_and_doubles_nothing():
    """SIGKILL one of two workers while it plays chunks: Dask recomputes them."""
    scenario = load_scenario(SCENARIOS / "vtm_three_way_brawl.toml")
    rounds = 24 * engine.CHUNK_ROUNDS + 99
    seq = np.random.SeedSequence(77)
    cluster, client = _cluster()
    try:
        pids = client.run(os.getpid)
        killed: dict[str, int] = {}
        added: list[int] = []
        lock = threading.Lock()

        def progress(n: int) -> None:
            with lock:
                added.append(n)
                if len(added) == 4 and not killed:
                    # A worker playing chunks right now (3 are in flight on 2 workers).
                    busy = [w for w, keys in client.processing().items() if keys and w in pids]
                    killed["pid"] = pids[busy[0]]
                    killed["chunks_left"] = len(engine.chunk_sizes(rounds)) - len(added)
                    os.kill(killed["pid"], signal.SIGKILL)

        remote = engine.simulate(scenario, rounds, seq, scheduler=client, progress=progress)
        assert killed["chunks_left"] > 4  # killed with work still to do
        assert killed["pid"] not in client.run(os.getpid).values()  # the nanny replaced it
        # The chunks the dead worker was playing went back from processing and ran again.
        lost = {
            key
            for key, start, finish, *_ in cluster.scheduler.transition_log
            if str(key).startswith("simkit-chunk-")
            and (start, finish) == ("processing", "released")
        }
        assert lost
    finally:
        client.close()
        cluster.close()
    local = engine.simulate(scenario, rounds, seq, workers=2)
    assert_same_sums(remote.sums, local.sums)
    assert remote.sums.rounds == rounds
    assert sorted(added) == sorted(engine.chunk_sizes(rounds))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.dask
def test_an_unreachable_scheduler_is_one_line_and_exit_2(capsys):
    dask = requires_module("dask", "the dask extra")
    address = f"tcp://127.0.0.1:{_free_port()}"
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        status = main(["run", str(DUEL), "--rounds", "1000", "--scheduler", address])
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"simkit: error: --scheduler: cannot connect to scheduler '{address}'")
    assert len(err.splitlines()) == 1


def _without_dask(monkeypatch) -> None:
    """Make ``import distributed`` (and ``dask.distributed``) fail as if not installed."""
    monkeypatch.setitem(sys.modules, "distributed", None)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_without_dask_scheduler_says_how_to_install_it(monkeypatch, capsys, command):
    _without_dask(monkeypatch)
    args = [command, str(DUEL), "--rounds", "1000", "--scheduler", "local"]
    if command == "sweep":
        args += ["--vary", "Sigrid.readiness=2,3"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("simkit: error: --scheduler: ")
    assert "pip install 'simkit[dask]'" in lines[0]


def test_without_dask_the_api_raises_an_import_error(monkeypatch):
    _without_dask(monkeypatch)
    with pytest.raises(ImportError, match=r"pip install 'simkit\[dask\]'") as info:
        simkit.run(DUEL, rounds=1000, scheduler="tcp://127.0.0.1:8786")
    assert isinstance(info.value, DaskMissingError)
    # Without a scheduler nothing needs dask.
    assert simkit.run(DUEL, rounds=1000, workers=1).rounds == 1000


def test_a_bad_scheduler_value_and_batches_with_a_scheduler_are_refused():
    requires_module("distributed", "the dask extra")
    with pytest.raises(SchedulerError, match="scheduler must be"):
        simkit.run(DUEL, rounds=1000, scheduler=8786)
    with pytest.raises(ValueError, match="batch_rounds"):
        engine.simulate(
            load_scenario(DUEL), 1000, np.random.SeedSequence(1), batch_rounds=10, scheduler="x"
        )


def test_scenarios_and_compiled_scenarios_pickle():
    """What tasks carry to workers survives pickling."""
    import pickle

    for path in sorted(SCENARIOS.glob("*.toml")):
        scenario = load_scenario(path)
        assert pickle.loads(pickle.dumps(scenario)) == scenario
        job = engine.prepare(scenario)
        back = pickle.loads(pickle.dumps(job))
        assert back.layout == job.layout and back.system is job.system
        if scenario.fight_rounds:  # R8a: chunks of fights, compiled twice (the opening)
            fights = pickle.loads(pickle.dumps(engine.core.prepare_fights(scenario)))
            assert fights.layout == job.layout and fights.fight_rounds == scenario.fight_rounds

"""The second hostile-input campaign (issue 30), one regression test per finding.

Every reproducer of the issue is here as written: digits that are not ASCII digits,
quadratic parsing (200,000 sweep values, a target with 64,000 spaces), huge integers,
unbounded error output, names that mean two things, ``--out`` through symlinks, into
mount points and failing after the run, an unwritable HOME for matplotlib, and control
characters in ``description``.  Signals are in test_signals.py.

Time bounds: the code under test is linear in its input and takes milliseconds for these
sizes (the quadratic code it replaced took 6-30 s); 1 s leaves room for a loaded 2-core
machine without letting a quadratic regression (seconds at these sizes) pass.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

import simkit.analysis.run
import simkit.output.files
from simkit import digits
from simkit.bounded import MAX_LISTED, cut_words
from simkit.cli import main
from simkit.output.files import OutputDir, OutputError
from simkit.scenario import ScenarioError, load_scenario
from simkit.scenario.target_text import split_ratio, split_target
from simkit.scenario.validate import scenario_from_dict

ROOT = Path(__file__).resolve().parents[1]
WOLVES = ROOT / "scenarios" / "party_vs_wolves.toml"
BOUND_S = 1.0  # see the module docstring

HEAD = '[scenario]\nname = "x"\nsystem = "readiness"\n'
PARTY = '[[combatant]]\nname = "Gunnar"\nside = "party"\nreadiness = 3\n'
WOLF_PACK = '[[combatant]]\nname = "Wolf"\nside = "wolves"\nreadiness = 2\ncount = 3\n'


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def one_error(err: str, *fragments: str) -> list[str]:
    lines = err.splitlines()
    assert lines and lines[0].startswith("simkit: error: "), err
    assert sum(line.startswith("simkit:") for line in lines) == 1, err
    assert all(line.startswith("  ") for line in lines[1:]), err
    assert "Traceback" not in err
    assert len(lines) <= MAX_LISTED + 2, len(lines)
    assert all(len(line) <= 2000 for line in lines), max(map(len, lines))
    for f in fragments:
        assert f in err, f"{f!r} not in {err!r}"
    return lines


def forbid_simulation(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("simulated although the input is bad")

    monkeypatch.setattr(simkit.analysis.run, "simulate", forbidden)


# 5 --------------------------------------------------------------- digits are ASCII digits
@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("0", True),
        ("42", True),
        ("-3", True),
        ("٣", False),  # ARABIC-INDIC DIGIT THREE: int() reads it
        ("３", False),  # FULLWIDTH DIGIT THREE
        (" 5", False),
        ("5 ", False),
        ("+1", False),
        ("1_000", False),  # not on the command line
        ("", False),
        ("-", False),
        ("1.0", False),
        ("9" * 41, False),  # longer than any integer simkit accepts
    ],
)
def test_an_integer_is_ascii_digits_with_an_optional_minus(text, ok):
    assert digits.is_int(text) is ok
    if ok:
        assert digits.parse_int(text) == int(text)
    else:
        with pytest.raises(digits.DigitsError, match="ASCII digits"):
            digits.parse_int(text)


def test_underscores_only_where_a_file_allows_them():
    assert digits.parse_int("1_000", underscores=True) == 1000
    for bad in ("_1", "1_", "1__0"):
        assert not digits.is_int(bad, underscores=True)


@pytest.mark.parametrize("text", ["0.5", "-2", "1e6", ".5", "5.", "2.5E-3"])
def test_a_number_in_ascii(text):
    assert digits.parse_number(text) == float(text)


@pytest.mark.parametrize("text", ["٣", "０.５", " 1", "+1", "inf", "nan", "1_0", "1e", "."])
def test_not_a_number(text):
    with pytest.raises(digits.DigitsError):
        digits.parse_number(text)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--rounds", "٣"),
        ("--rounds", "３"),
        ("--seed", " 5"),
        ("--workers", "+1"),
        ("--rounds", "1_000"),
    ],
)
def test_cli_integers_are_ascii_digits(tmp_path, capsys, monkeypatch, option, value):
    forbid_simulation(monkeypatch)
    status = main(["run", str(WOLVES), option, value, "--out", str(tmp_path / "o")])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    one_error(captured.err, option, "ASCII digits")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["sweep", str(WOLVES), "--vary", "Wolf.readiness=１..３"],
        ["sweep", str(WOLVES), "--vary", "Wolf.readiness=٢,٣"],
        ["sweep", str(WOLVES), "--vary", "Wolf.readiness=+٠..+٢"],
        ["compare", str(WOLVES), "--set", "Leif.defend=hasty_up_to:٣"],
        ["compare", str(WOLVES), "--set", "Wolf.readiness=٣"],
        ["run", str(WOLVES), "--metrics", "actions", "--seed", "٣"],
        ["trace", str(ROOT / "scenarios/worked_example_readiness.toml"), "--dice", "A=٦,6,2"],
    ],
)
def test_spec_values_are_ascii_digits(capsys, monkeypatch, args):
    forbid_simulation(monkeypatch)
    status = main([*args, "--rounds", "10"])
    captured = capsys.readouterr()
    assert status == 2, captured
    one_error(captured.err)


def test_a_policy_parameter_in_other_digits_is_refused(tmp_path):
    text = WOLVES.read_text().replace('defend = "hasty_up_to:2"', 'defend = "hasty_up_to:٣"')
    assert "٣" in text
    with pytest.raises(ScenarioError, match="hasty_up_to"):
        load_scenario(write(tmp_path, text))
    # the ASCII form is still read
    ok = WOLVES.read_text().replace('"hasty_up_to:2"', '"hasty_up_to:3"')
    assert load_scenario(write(tmp_path, ok)).combatants[2]["defend"] == "hasty_up_to:3"


# 3 ------------------------------------------------------------ linear parsing, huge ints
def test_a_sweep_list_of_200000_values_is_refused_at_once():
    data = tomllib.loads(WOLVES.read_text())
    data["sweep"] = {"vary": {"Wolf.readiness": [1] * 200_000}}
    start = time.perf_counter()
    with pytest.raises(ScenarioError, match="200,000 values; at most 10,000"):
        scenario_from_dict(data, "big.toml")
    assert time.perf_counter() - start < BOUND_S


def test_a_long_sweep_list_is_checked_for_duplicates_in_one_pass():
    data = tomllib.loads(WOLVES.read_text())
    data["sweep"] = {"vary": {"Wolf.readiness": [*range(1, 10_000), 1]}}
    start = time.perf_counter()
    with pytest.raises(ScenarioError):  # 21.. are out of range: the first problem wins
        scenario_from_dict(data, "big.toml")
    assert time.perf_counter() - start < BOUND_S
    scenario = load_scenario(WOLVES)
    values = [k / 10_000 for k in range(9_999)] + [0.5]  # 10,000 values, the last a repeat
    start = time.perf_counter()
    with pytest.raises(ScenarioError, match="value 0.5 is listed twice"):
        simkit.scenario.parse_vary(scenario, {"Wolf.attack_share": values})
    assert time.perf_counter() - start < BOUND_S  # the list-slice check took seconds


def test_the_file_reproducer_with_200000_values(tmp_path, capsys):
    text = WOLVES.read_text() + '\n[sweep]\nvary = { "Wolf.readiness" = [\n'
    text += ",\n".join(["1"] * 200_000) + "] }\n"
    path = write(tmp_path, text)
    status = main(["validate", str(path)])
    captured = capsys.readouterr()
    assert status == 2
    one_error(captured.err, "200,000 values; at most 10,000")


@pytest.mark.parametrize("spaces", [16_000, 64_000])
def test_a_target_with_many_spaces_is_read_in_linear_time(spaces):
    text = "a" + " " * spaces + "b"
    start = time.perf_counter()
    assert split_target(text) is None
    assert split_target(text + " = 1") == ("a" + " " * spaces + "b", "=", " 1")
    assert split_ratio("a" + " " * spaces + "/" + " " * spaces + "b") == ["a", "b"]
    assert split_ratio("a" + " " * spaces + "b") == ["a" + " " * spaces + "b"]
    assert time.perf_counter() - start < BOUND_S


def test_the_target_reproducer_through_the_command(tmp_path, capsys, monkeypatch):
    forbid_simulation(monkeypatch)
    target = "a" + " " * 64_000 + "b"
    for command in (["report", str(WOLVES), "--target", target],):
        start = time.perf_counter()
        status = main([*command, "--rounds", "10", "--out", str(tmp_path / "o")])
        elapsed = time.perf_counter() - start
        captured = capsys.readouterr()
        assert status == 2
        one_error(captured.err, "--target")
        assert elapsed < 5 * BOUND_S  # includes the first import of the report layer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("side:a.actions / side:b.actions = 1", ("side:a.actions / side:b.actions", "=", " 1")),
        ("x.y>=0.5", ("x.y", ">=", "0.5")),
        ("x.y <= 2", ("x.y", "<=", " 2")),
        ("x.y < = 2", ("x.y <", "=", " 2")),
        ("x==1", ("x=", "=", "1")),
        ("= 1", None),
        ("x = ", None),
        ("x = 1 < 2", None),
        ("no operator", None),
    ],
)
def test_split_target_reads_what_the_pattern_did(text, expected):
    assert split_target(text) == expected


def test_split_ratio_needs_space_around_the_slash():
    assert split_ratio("side:a.actions / side:b.actions") == ["side:a.actions", "side:b.actions"]
    assert split_ratio("group:a/b.actions") == ["group:a/b.actions"]
    assert split_ratio("a / b / c") == ["a", "b", "c"]
    assert split_ratio("a / / b") == ["a", "/ b"]


def test_a_huge_integer_is_a_range_error_not_a_traceback(tmp_path, capsys):
    text = WOLVES.read_text().replace(
        "readiness = 2\n", "readiness = 2\nattack_share = 1" + "0" * 400 + "\n"
    )
    status = main(["validate", str(write(tmp_path, text))])
    captured = capsys.readouterr()
    assert status == 2
    line = one_error(captured.err, "attack_share", "is not allowed; allowed: a number from 0 to 1")
    assert len(line[0]) < 300  # the 401 digits are not echoed


def test_80000_unknown_keys_list_50_problems(tmp_path, capsys):
    keys = "\n".join(f"k{i} = 1" for i in range(80_000))
    text = WOLVES.read_text() + keys + "\n"
    status = main(["validate", str(write(tmp_path, text))])
    captured = capsys.readouterr()
    assert status == 2
    lines = one_error(captured.err, "80,000 problems")
    assert len(lines) == 1 + MAX_LISTED + 1
    assert lines[-1] == "  ... and 79,950 more"


def test_scenario_error_lists_at_most_50():
    problems = [(f"p{i}", "bad") for i in range(51)]
    lines = str(ScenarioError.of("f.toml", problems)).splitlines()
    assert lines[0] == "f.toml: 51 problems"
    assert lines[1:] == [f"  p{i}: bad" for i in range(50)] + ["  ... and 1 more"]
    lines = str(ScenarioError.of("f.toml", problems[:50])).splitlines()
    assert len(lines) == 51 and not lines[-1].startswith("  ...")


@pytest.mark.parametrize(
    "args",
    [
        ["run", str(WOLVES), "--metrics", "m" * 5000],
        ["run", str(WOLVES), "--out", "o" * 5000],
        ["run", "p" * 5000 + ".toml"],
        ["run", str(WOLVES), "--rounds", "9" * 5000],
    ],
)
def test_a_5000_character_value_is_not_echoed_whole(capsys, monkeypatch, args):
    forbid_simulation(monkeypatch)
    status = main(args)
    captured = capsys.readouterr()
    assert status == 2
    (line,) = one_error(captured.err)
    assert len(line) < 600, len(line)


def test_cut_words_keeps_short_words_and_both_ends():
    assert cut_words("a short message") == "a short message"
    cut = cut_words("x " + "a" * 100 + "Z" * 100 + " y")
    assert cut.startswith("x aaaa") and cut.endswith("ZZZZ (200 characters) y")
    assert "…" in cut and len(cut) < 130
    spaced = cut_words("no metric 'a" + " " * 64_000 + "b'")
    assert spaced == "no metric 'a …(64,000 spaces)… b'"
    many = cut_words(" ".join(["w" * 100] * 100))
    assert len(many) < 1100 and "characters)…" in many


# 4 ------------------------------------------------------------- names that mean two things
def test_a_combatant_named_like_another_sides_group(tmp_path, capsys):
    text = (
        HEAD + PARTY + '[[combatant]]\nname = "Wolf"\nside = "party"\nreadiness = 3\n' + WOLF_PACK
    )
    status = main(["validate", str(write(tmp_path, text))])
    captured = capsys.readouterr()
    assert status == 2
    one_error(captured.err, 'combatant "Wolf" (index 2)', 'combatant "Wolf" (index 1)')


def test_a_group_named_like_a_member_of_another_group(tmp_path):
    text = HEAD + PARTY + WOLF_PACK.replace('"Wolf"', '"Wolf 1"') + WOLF_PACK
    with pytest.raises(ScenarioError, match=r"'Wolf 1' also names"):
        load_scenario(write(tmp_path, text))


@pytest.mark.parametrize(
    "text",
    [
        # a group named like the other side
        HEAD + PARTY + WOLF_PACK.replace('name = "Wolf"', 'name = "party"'),
        # a combatant named like its own side, beside another member of that side
        HEAD + PARTY + PARTY.replace('"Gunnar"', '"party"') + WOLF_PACK,
    ],
)
def test_a_name_that_is_also_a_side(tmp_path, text):
    with pytest.raises(ScenarioError, match=r"'party' is also the name of side 'party'"):
        load_scenario(write(tmp_path, text))


def test_a_lone_combatant_may_share_its_sides_name(tmp_path):
    text = HEAD + PARTY.replace('side = "party"', 'side = "Gunnar"') + WOLF_PACK
    scenario = load_scenario(write(tmp_path, text))
    assert scenario.sides == ("Gunnar", "wolves")


# 2 ------------------------------------------------------------------ --out and its kinds
def test_a_symlinked_out_is_written_through(tmp_path, capsys):
    res = tmp_path / "res"
    res.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "link").symlink_to("../res")
    for _ in range(2):
        status = main(
            ["run", str(WOLVES), "--rounds", "50", "--workers", "1", "--out", str(work / "link")]
        )
        capsys.readouterr()
        assert status == 0
    assert os.listdir(work) == ["link"] and (work / "link").is_symlink()
    assert sorted(os.listdir(res)) == [".simkit", "metrics.csv", "summary.json"]
    assert sorted(os.listdir(tmp_path)) == ["res", "work"]  # nothing beside either


@pytest.mark.parametrize("to", ["../nothing", "../missing/dir", "loop"])
def test_a_dangling_symlink_is_refused_before_simulating(tmp_path, capsys, monkeypatch, to):
    forbid_simulation(monkeypatch)
    work = tmp_path / "work"
    work.mkdir()
    (work / "link").symlink_to(to)
    if to == "loop":
        (work / "loop").symlink_to("link")
    status = main(["run", str(WOLVES), "--rounds", "50", "--out", str(work / "link")])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    (line,) = one_error(captured.err, "symbolic link", "does not exist")
    assert (work / "link").is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["work"]


def test_a_symlink_to_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to("file")
    with pytest.raises(OutputError, match="not a directory"):
        OutputDir(tmp_path / "link")


def test_a_mount_point_is_written_in_place(tmp_path, monkeypatch):
    mount = tmp_path / "volume"
    mount.mkdir()
    real_ismount = os.path.ismount
    monkeypatch.setattr(
        simkit.output.files.os.path,
        "ismount",
        lambda p: Path(p).absolute() == mount or real_ismount(p),
    )

    def no_swap(*args):
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(simkit.output.files, "exchange", no_swap)
    out = OutputDir(mount)
    assert out.in_place
    out.write({"summary.json": "old\n", "a.png": b"png"})
    assert sorted(os.listdir(mount)) == [".simkit", "a.png", "summary.json"]
    OutputDir(mount).write({"summary.json": "new\n", "metrics.csv": "m\n"})
    assert sorted(os.listdir(mount)) == [".simkit", "metrics.csv", "summary.json"]
    assert (mount / "summary.json").read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["volume"]  # nothing beside it


def test_a_real_mount_point(tmp_path, capsys):
    mount = tmp_path / "volume"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a tmpfs")
    made = subprocess.run(["mount", "-t", "tmpfs", "none", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        for _ in range(2):
            status = main(
                ["run", str(WOLVES), "--rounds", "50", "--workers", "1", "--out", str(mount)]
            )
            captured = capsys.readouterr()
            assert status == 0, captured.err
        assert sorted(os.listdir(mount)) == [".simkit", "metrics.csv", "summary.json"]
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_write_failure_after_the_run_saves_the_result_elsewhere(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(simkit.output.files.tempfile, "tempdir", None)

    def full(self, files):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(OutputDir, "_write_swapped", full)
    out = tmp_path / "o"
    status = main(["run", str(WOLVES), "--rounds", "50", "--workers", "1", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 2
    assert "Gunnar" in captured.out  # the table is printed
    (line,) = one_error(captured.err, "No space left on device", "simkit-result-")
    (saved,) = (tmp_path / "tmp").iterdir()
    assert saved.name.startswith("simkit-result-") and str(saved) in line
    assert sorted(os.listdir(saved)) == ["metrics.csv", "summary.json"]
    assert not out.exists()


# 7 ------------------------------------------------------------------- matplotlib's home
def _read_only_dir(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    if os.geteuid() != 0:
        home.chmod(0o555)
        return home
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro", "none", str(home)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip("root cannot be kept from writing here without a read-only mount")
    return home


def test_an_unwritable_home_gives_matplotlib_a_private_directory(tmp_path):
    home = _read_only_dir(tmp_path)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
    }
    env.update(HOME=str(home), TMPDIR=str(tmp), PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    code = (
        "import os, simkit, matplotlib, matplotlib.pyplot as plt\n"
        "plt.figure(); plt.plot([1, 2]); plt.savefig(os.devnull, format='png')\n"
        "print(os.environ['MPLCONFIGDIR'])\n"
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(home)], check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no multi-line warning
    assert proc.stdout.strip() == str(tmp / f"simkit-matplotlib-{os.getuid()}")
    # nothing else written: only simkit's own directories in the temporary directory
    assert all(p.name.startswith("simkit-") for p in tmp.iterdir()), os.listdir(tmp)


# description ---------------------------------------------------------------------------
@pytest.mark.parametrize("char", ["\\u0007", "\\u001b", "\\u202e"])
def test_control_characters_in_description_are_refused(tmp_path, char):
    text = WOLVES.read_text().replace('description = "', f'description = "{char}', 1)
    with pytest.raises(ScenarioError, match="scenario.description: .*control characters"):
        load_scenario(write(tmp_path, text))


def test_a_description_may_have_lines_and_tabs_but_not_too_many_characters(tmp_path):
    text = WOLVES.read_text().replace('description = "', 'description = "a\\n\\tb ', 1)
    assert load_scenario(write(tmp_path, text)).description.startswith("a\n\tb ")
    lines = ("x" * 99 + "\n") * 101  # 10,100 characters in lines a TOML file allows
    long = WOLVES.read_text().replace('description = "', 'description = """' + lines, 1)
    long = long.replace('readiness 2)."', 'readiness 2)."""', 1)
    with pytest.raises(ScenarioError, match="scenario.description: at most 10000"):
        load_scenario(write(tmp_path, long))

"""Outputs never destroy anything (issue 18 section 1, issue 14 permissions): atomic writes with
the usual file mode, links and FIFOs written through, inputs never overwritten, directory outputs
replaced only when they are an earlier output of the same command, temporaries cleaned up."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading

import pytest

from cli_helpers import run_ok, runner
from dynid.cli.main import app
from dynid.data.io import atomic_write_text
from dynid.files.outputs import (MARKER, OutputError, Terminated, check_output_directory, command_scope,
                               finish_directory, remove_stale_temporaries, start_directory, write_output)
from dynid.errors import DynidWarning


def run_err(*args):
    """Run ``dynid ARGS`` expecting a user error: exit 2, one 'error:' line; returns that line."""
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A small log and its OLS result."""
    d = tmp_path_factory.mktemp("outputs")
    run_ok("simulate", "-r", "planar2", "--out", d / "log.csv", "--duration", "4")
    run_ok("identify", "-r", "planar2", "--data", d / "log.csv", "--out", d / "r.json")
    return d


@pytest.fixture
def umask():
    def set_mask(mask):
        os.umask(mask)
    old = os.umask(0o022)
    yield set_mask
    os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_new_files_get_the_usual_mode_of_the_umask(tmp_path, umask, mask):
    umask(mask)
    atomic_write_text(tmp_path / "a.json", "{}")
    assert stat.S_IMODE(os.stat(tmp_path / "a.json").st_mode) == 0o666 & ~mask


def test_command_outputs_are_readable_by_colleagues(work, tmp_path, umask):
    umask(0o022)
    run_ok("predict", "-r", "planar2", "--params", work / "r.json", "--data", work / "log.csv", "--out",
           tmp_path / "p.csv")
    for path in (work / "log.csv", work / "r.json", tmp_path / "p.csv"):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644, path


def test_a_replaced_file_keeps_its_mode(tmp_path, umask):
    umask(0o022)
    path = tmp_path / "x.txt"
    path.write_text("old")
    path.chmod(0o600)
    atomic_write_text(path, "new")
    assert path.read_text() == "new" and stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_symlink_is_written_through(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    atomic_write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "real" / "later.txt")
    atomic_write_text(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "real" / "later.txt").read_text() == "made"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["later.txt", "out.txt"]  # no litter


def test_a_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    atomic_write_text(fifo, "through the pipe")
    reader.join(10)
    assert got == ["through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_character_device_is_written_through_not_replaced(tmp_path):
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a second /dev/null
    except PermissionError:
        pytest.skip("mknod needs root")
    atomic_write_text(node, "discarded")
    assert stat.S_ISCHR(os.stat(node).st_mode) and os.listdir(tmp_path) == ["null"]
    with pytest.raises(OutputError, match="No space left"):
        full = tmp_path / "full"
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # /dev/full
        atomic_write_text(full, "x" * 10000)
    assert stat.S_ISCHR(os.stat(full).st_mode)


@pytest.mark.parametrize("command", [
    ["identify", "-r", "planar2", "--data", "{d}/log.csv", "--out", "{d}/log.csv"],
    ["predict", "-r", "planar2", "--params", "{d}/r.json", "--data", "{d}/log.csv", "--out", "{d}/r.json"],
    ["validate", "-r", "planar2", "--params", "{d}/r.json", "--data", "{d}/log.csv", "--json", "{d}/log.csv"],
    ["predict", "-r", "planar2", "--params", "{d}/r.json", "--data", "{d}/log.csv", "--out", "{d}/alias.csv"],
    ["predict", "-r", "planar2", "--params", "{d}/r.json", "--data", "{d}/log.csv", "--out", "{d}/hard.json"],
])
def test_an_output_that_is_an_input_is_refused(work, command):
    if not (work / "alias.csv").exists():
        (work / "alias.csv").symlink_to(work / "log.csv")
        os.link(work / "r.json", work / "hard.json")
    before = {p: p.read_bytes() for p in (work / "log.csv", work / "r.json")}
    line = run_err(*(a.format(d=work) for a in command))
    assert "is the same file as the input" in line
    assert {p: p.read_bytes() for p in before} == before


def test_an_input_read_during_the_run_is_protected_at_the_write(work, tmp_path):
    """report --from DIR reads DIR/train.csv; an --out naming it is refused when written."""
    d = tmp_path / "demo"
    d.mkdir()
    (d / "result_ols.json").write_bytes((work / "r.json").read_bytes())
    (d / "train.csv").write_bytes((work / "log.csv").read_bytes())
    before = (d / "train.csv").read_bytes()
    line = run_err("report", "--from", d, "--out", d / "train.csv")
    assert "same file as the input" in line and (d / "train.csv").read_bytes() == before


def test_a_file_the_command_wrote_and_read_back_is_its_own_not_an_input(tmp_path):
    """The demo writes summary.json, its report step reads it, the demo writes it again: a file the
    running command wrote is its own output; a user's file read in the same run stays protected."""
    from dynid.files.outputs import note_input

    own, user = tmp_path / "summary.json", tmp_path / "train.csv"
    user.write_text("t,q1\n")
    with command_scope():
        atomic_write_text(own, "{}\n")
        note_input(own)
        note_input(user)
        atomic_write_text(own, '{"again": 1}\n')
        with pytest.raises(OutputError, match="same file as the input"):
            atomic_write_text(user, "overwritten\n")
    assert own.read_text() == '{"again": 1}\n' and user.read_text() == "t,q1\n"


def test_two_outputs_naming_one_file_are_refused(work, tmp_path):
    line = run_err("export", "-r", "planar2", "--params", work / "r.json", "--urdf", tmp_path / "m",
                   "--json", tmp_path / "m")
    assert "name the same file" in line


def test_an_output_that_is_a_directory_is_named_clearly(work, tmp_path):
    line = run_err("predict", "-r", "planar2", "--params", work / "r.json", "--data", work / "log.csv",
                   "--out", tmp_path)
    assert f"--out {tmp_path} is an existing directory" in line and ".tmp" not in line


def test_demo_refuses_a_foreign_directory_and_the_working_directory(tmp_path, monkeypatch):
    foreign = tmp_path / "mine"
    (foreign / "sub").mkdir(parents=True)
    (foreign / "thesis.tex").write_text("precious")
    line = run_err("demo", "--out", foreign)
    assert "did not write" in line and "--force" in line
    assert (foreign / "thesis.tex").read_text() == "precious" and (foreign / "sub").is_dir()
    monkeypatch.chdir(foreign)
    assert "working directory" in run_err("demo", "--out", ".")
    assert "working directory" in run_err("demo", "--out", "..")
    assert sorted(os.listdir(tmp_path)) == ["mine"]  # nothing started


def test_directory_output_replaces_only_an_earlier_output_of_the_same_command(tmp_path):
    target = tmp_path / "out"
    for round_ in (1, 2):  # a new target, then an earlier output (its marker)
        work = start_directory(target, "demo")
        (work / "file.txt").write_text(f"round {round_}")
        finish_directory(work, target, "demo")
        assert (target / "file.txt").read_text() == f"round {round_}" and (target / MARKER).is_file()
    assert sorted(os.listdir(tmp_path)) == ["out"]
    (target / MARKER).write_text(json.dumps({"command": "other"}))
    with pytest.raises(OutputError, match="did not write"):
        check_output_directory(target, "demo")
    assert check_output_directory(target, "demo", force=True) == target


def test_stale_temporaries_of_a_killed_run_are_removed_at_the_next_write(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".r.json.dynid-{pid}-abc123.tmp"
    stale.write_text("half")
    partial = tmp_path / f".r.json.dynid-{pid}-partial-xyz"
    partial.mkdir()
    alive = tmp_path / f".r.json.dynid-{os.getppid()}-live.tmp"  # a running writer's: left alone
    alive.write_text("busy")
    with pytest.warns(DynidWarning, match="removed 2 temporary file"):
        atomic_write_text(tmp_path / "r.json", "{}")
    assert sorted(os.listdir(tmp_path)) == sorted(["r.json", alive.name])
    assert remove_stale_temporaries(tmp_path / "r.json") == []


def test_sigterm_during_a_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("old")

    def write(tmp):
        with open(tmp, "w") as fh:
            fh.write("partial")
            os.kill(os.getpid(), signal.SIGTERM)
            fh.write("never")

    with pytest.raises(Terminated), command_scope():
        write_output(path, write)
    assert os.listdir(tmp_path) == ["out.csv"] and path.read_text() == "old"
    assert signal.getsignal(signal.SIGTERM) is not None  # the previous handler is back

"""A command killed by SIGINT or SIGTERM at a random (seeded) moment leaves either the old output
or the complete new one under the final name, and no temporary file (issue 14 part 3); one killed
by SIGKILL leaves a temporary that the next run removes (issue 18 section 1).
The subprocess runs are few (each pays the start-up); many more kill moments run in-process,
where SIGTERM takes the same path (dynid.files.outputs.command_scope). DYNID_KILL_RUNS multiplies both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from cli_helpers import runner
from dynid.cli.main import app

ARGS = ["simulate", "-r", "planar2", "--duration", "200", "--rate", "100"]
REPEAT = int(os.environ.get("DYNID_KILL_RUNS", "1"))


def run(out, kill_after=None, sig=signal.SIGTERM):
    proc = subprocess.Popen([sys.executable, "-m", "dynid.cli.main", *ARGS, "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if kill_after is not None:
        time.sleep(kill_after)
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err


def litter(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One uninterrupted run: the complete output and how long the command takes."""
    d = tmp_path_factory.mktemp("killed")
    start = time.perf_counter()
    code, err = run(d / "full.csv")
    assert code == 0, err
    return (d / "full.csv").read_bytes(), time.perf_counter() - start


def check(out, full, what):
    content = out.read_bytes()
    assert content in (b"old\n", full), f"{what}: a partial output ({len(content)} of {len(full)} bytes)"
    assert litter(out.parent) == [], f"{what}: temporary files left {litter(out.parent)}"
    return "old" if content == b"old\n" else "new"


def test_killed_processes_leave_old_or_complete_output_and_no_litter(reference, tmp_path):
    full, seconds = reference
    rng = np.random.default_rng(14)
    for k in range(2 * REPEAT):
        out = tmp_path / "log.csv"
        out.write_text("old\n")
        sig = (signal.SIGTERM, signal.SIGINT)[k % 2]
        code, err = run(out, kill_after=float(rng.uniform(0.4, 1.0) * seconds), sig=sig)
        check(out, full, f"kill {k} ({sig.name}, exit {code})")
        assert "Traceback" not in err, err


def test_sigterm_at_many_moments_in_process(reference, tmp_path):
    """The same command in this process, SIGTERM at seeded moments over its whole run time."""
    full, _ = reference
    out = tmp_path / "log.csv"
    start = time.perf_counter()
    assert runner.invoke(app, [*ARGS, "--out", str(out)]).exit_code == 0
    seconds = time.perf_counter() - start
    assert out.read_bytes() == full  # deterministic: the seeded simulation gives the same bytes
    rng = np.random.default_rng(18)
    outcomes = []
    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # a kill after the command ended: ignored
    try:
        kill_many(out, full, seconds, rng, outcomes)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert "old" in outcomes or "new" in outcomes


def kill_many(out, full, seconds, rng, outcomes):
    for k in range(8 * REPEAT):
        out.write_text("old\n")
        timer = threading.Timer(float(rng.uniform(0.0, 1.1) * seconds), os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        result = runner.invoke(app, [*ARGS, "--out", str(out)])
        timer.join()
        outcomes.append(check(out, full, f"in-process kill {k} (exit {result.exit_code})"))
        assert result.exit_code in (0, 143), result.output


def test_sigkill_litter_is_removed_by_the_next_run(reference, tmp_path):
    _, seconds = reference
    out = tmp_path / "log.csv"
    run(out, kill_after=0.93 * seconds, sig=signal.SIGKILL)  # often while the file is being written
    left = litter(tmp_path)
    code, err = run(out)
    assert code == 0 and litter(tmp_path) == [], err
    if left:
        assert "removed 1 temporary file(s) of an interrupted earlier run" in err

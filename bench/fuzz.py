"""A longer fuzzing campaign than the test suite's: every reader on N seeded malformed inputs
(tests/fuzz_inputs.py). Prints, per reader, the cases tried and their outcomes: read (the reader
accepted the file), refused (a DynidError: one line and exit 2 in the CLI), and any other
exception (a bug: listed with its seed to reproduce). With --cli N, N cases per reader also run
through the command line (in-process): exit 0, or exit 2 with exactly one 'error:' line, else a bug.

    .venv/bin/python bench/fuzz.py [--cases 500] [--cli 50] [--seed 0] [--readers csv,urdf] [--kinds 20]

--plausibility N and --kinds N run N seeded cases of every kind of tests/plausibility_inputs.py
(nonsense inside logs and results) and tests/fuzz_kinds.py (issue 26: conflicting options,
impossible values, outputs inside inputs...) and check each ends as its kind says.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzz_inputs import READERS, write_case  # noqa: E402

from dynid.errors import DynidError  # noqa: E402


def cli_campaign(names, cases, seed, bases, tmp, bugs) -> None:
    from typer.testing import CliRunner

    from dynid.cli.main import app
    from fuzz_inputs import cli_command
    from fuzz_kinds import INTERNAL_REPR

    runner = CliRunner()
    print(f"\n{'command':<11} {'cases':>6} {'exit 0':>7} {'exit 2':>7} {'other':>6}  (exit 2: exactly one 'error:' line)")
    total = collections.Counter()
    for name in names:
        counts = collections.Counter()
        for s in range(seed, seed + cases):
            mutation, path = write_case(tmp, name, s, bases[name])
            result = runner.invoke(app, cli_command(name, path, tmp / "log.csv", tmp / "out.json"))
            errors = [ln for ln in result.output.splitlines() if ln.startswith("error: ")]
            if result.exit_code == 0:
                counts["exit 0"] += 1
            elif result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output \
                    and not INTERNAL_REPR.search(errors[0]):  # the user's values, not np.float64(...)
                counts["exit 2"] += 1
            else:
                counts["other"] += 1
                bugs.append(f"cli {name} seed {s} ({mutation}): exit {result.exit_code} {result.output[-160:]!r}")
        total.update(counts)
        print(f"{name:<11} {cases:>6} {counts['exit 0']:>7} {counts['exit 2']:>7} {counts['other']:>6}")
    print(f"{'total':<11} {sum(total.values()):>6} {total['exit 0']:>7} {total['exit 2']:>7} {total['other']:>6}")


def result_base(directory: Path) -> bytes:
    """A result.json of planar2 identified on a short simulated log (as the suite's fixture)."""
    from typer.testing import CliRunner

    from dynid.cli.main import app

    runner = CliRunner()
    for args in (["simulate", "-r", "planar2", "--out", str(directory / "log.csv"), "--duration", "3"],
                 ["identify", "-r", "planar2", "--data", str(directory / "log.csv"), "--out", str(directory / "r.json")]):
        assert runner.invoke(app, args).exit_code == 0
    return (directory / "r.json").read_bytes()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=500, help="cases per reader")
    parser.add_argument("--seed", type=int, default=0, help="first seed (cases use seed .. seed + cases - 1)")
    parser.add_argument("--readers", default=",".join(READERS), help="comma-separated: " + ", ".join(READERS))
    parser.add_argument("--cli", type=int, default=0, help="cases per reader also run through the CLI")
    parser.add_argument("--plausibility", type=int, default=20, help="cases per plausibility kind (issue 18 section "
                        "3: nonsense the readers accept must be refused or warned; 0 = skip)")
    parser.add_argument("--kinds", type=int, default=20, help="cases per kind of issue 26 (tests/fuzz_kinds.py: "
                        "conflicting options, impossible values, outputs inside inputs...; 0 = skip)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    sys.unraisablehook = lambda unraisable: None  # pyarrow's row handler on undecodable lines (the CLI does the same)
    bugs, total = [], collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bases = {name: (make() if make else None) for name, (_, make, _) in READERS.items()}
        bases["result"] = result_base(tmp)
        print(f"{'reader':<11} {'cases':>6} {'read':>6} {'refused':>8} {'other':>6}  seconds  mutations")
        for name in args.readers.split(","):
            counts, mutations = collections.Counter(), collections.Counter()
            start = time.perf_counter()
            for seed in range(args.seed, args.seed + args.cases):
                mutation, path = write_case(tmp, name, seed, bases[name])
                mutations[mutation] += 1
                try:
                    READERS[name][2](path)
                    counts["read"] += 1
                except DynidError:
                    counts["refused"] += 1
                except Exception as exc:  # noqa: BLE001 - what the campaign looks for
                    counts["other"] += 1
                    bugs.append(f"{name} seed {seed} ({mutation}): {type(exc).__name__}: {str(exc)[:160]}")
                path.unlink()
            total.update(counts)
            print(f"{name:<11} {args.cases:>6} {counts['read']:>6} {counts['refused']:>8} {counts['other']:>6} "
                  f"{time.perf_counter() - start:8.1f}  {len(mutations)} kinds")
        cases = sum(total.values())
        print(f"{'total':<11} {cases:>6} {total['read']:>6} {total['refused']:>8} {total['other']:>6}")
        if args.cli:
            cli_campaign(args.readers.split(","), args.cli, args.seed, bases, tmp, bugs)
    for line in bugs[:40]:
        print("  " + line)
    if args.plausibility:
        bugs += plausibility_campaign(args.plausibility, args.seed)
    if args.kinds:
        bugs += kinds_campaign(args.kinds, args.seed)
    return 1 if bugs else 0


def kinds_campaign(cases: int, first: int = 0) -> list[str]:
    """Every kind of tests/fuzz_kinds.py (issue 26) on ``cases`` seeds through the command line:
    the outcome expected (refused, warned, read) against the one observed. Prints a table; returns
    the defects ('silent': exit 0 on what must be refused or warned; 'other': anything else)."""
    from fuzz_kinds import KINDS, make_context, run

    defects, total = [], collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = make_context(Path(tmp))
        print(f"\n{'issue 26 kind':<17} {'cases':>6} {'as expected':>12} {'silent':>7} {'other':>6}  seconds  outcomes")
        for kind in KINDS:
            counts, outcomes, start = collections.Counter(), collections.Counter(), time.perf_counter()
            for seed in range(first, first + cases):
                expected, observed, case = run(kind, seed, ctx, Path(tmp) / f"{kind}-{seed}")
                outcomes[expected] += 1
                key = "ok" if observed == expected else "silent" if observed == "silent" else "other"
                counts[key] += 1
                if key != "ok":
                    defects.append(f"{kind} seed {seed} {[str(a) for a in case.argv]}: expected {expected}, "
                                   f"got {observed[:200]}")
            total.update(counts)
            print(f"{kind:<17} {cases:>6} {counts['ok']:>12} {counts['silent']:>7} {counts['other']:>6} "
                  f"{time.perf_counter() - start:8.1f}  {dict(outcomes)}")
    print(f"{'total':<17} {sum(total.values()):>6} {total['ok']:>12} {total['silent']:>7} {total['other']:>6}")
    for line in defects[:40]:
        print("  " + line)
    return defects


def plausibility_campaign(cases: int, first: int = 0) -> list[str]:
    """Every kind of tests/plausibility_inputs.py on ``cases`` seeds: the outcome expected (refused,
    warned, right) against the one observed; 'silent' (a confident number from nonsense) and 'other'
    (an exception that is not dynid's) are the defects. Prints a table; returns the defects."""
    from plausibility_inputs import KINDS, make_context, run

    defects, total = [], collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = make_context(Path(tmp))
        print(f"\n{'plausibility kind':<19} {'group':<9} {'cases':>6} {'expected':>9} {'as expected':>12} "
              f"{'silent':>7} {'other':>6}  seconds")
        for kind, group in KINDS.items():
            counts, start, expected = collections.Counter(), time.perf_counter(), "?"
            for seed in range(first, first + cases):
                expected, observed = run(kind, seed, ctx)
                key = "ok" if observed == expected else "silent" if observed == "silent" else "other"
                counts[key] += 1
                if key != "ok":
                    defects.append(f"{kind} seed {seed}: expected {expected}, got {observed}")
            total.update(counts)
            print(f"{kind:<19} {group:<9} {cases:>6} {expected:>9} {counts['ok']:>12} {counts['silent']:>7} "
                  f"{counts['other']:>6} {time.perf_counter() - start:8.1f}")
    print(f"{'total':<19} {'':<9} {sum(total.values()):>6} {'':>9} {total['ok']:>12} {total['silent']:>7} "
          f"{total['other']:>6}")
    for line in defects[:40]:
        print("  " + line)
    return defects


if __name__ == "__main__":
    sys.exit(main())

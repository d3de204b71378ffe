"""The library carries every option of ``dynid identify`` (issue 23 item 1: the CLI parses options,
calls ``dynid.Identification``, prints).

Fact checked: each parameter of the command is an ``Identification`` field of the same name and
default, or a column-mapping option (``ColumnMapping.from_options``, handed to ``fit_files``), or
one of the few the command turns into a call of its own (the files read and written, and the
acceleration-free ``--drive`` identification, ``drives.identification.identify_drive_log``). An
option added to the command alone fails here. The fleet, which solves groups with the same
steps, refuses an option it does not apply instead of dropping it (``fleet.tasks.Settings.of``)."""

from __future__ import annotations

import dataclasses
import inspect

from dynid.cli.identify_cmd import identify
from dynid.data.columns import ColumnMapping
from dynid.drives.identification import identify_drive_log
from dynid.identify.identification import Identification

# the command's parameter -> where the library takes it
CALLS = {"data": "Identification.fit_files(sources)", "out": "IdentificationResult.save(path)",
         "by": "Identification(per=)", "excitation": "Identification.excitation (a loaded trajectory)"}
MAPPING = {"rename": "rename", "columns": "names", "time_unit": "time_unit", "degrees": "degrees",
           "motor_side": "motor_side", "current_gain": "current_gain", "negate": "negate", "ignore": "ignore",
           "topic": "topic", "stamp": "stamp", "time_range": "time_range", "rows": "rows"}
DRIVE = {"drive": "kind", "drive_input": "signal", "known": "known", "filter_hz": "filter_hz",
         "skip_seconds": "skip_s", "back_emf": "back_emf", "prefilter_hz": "prefilter_hz"}
SAME_BEHAVIOUR = {"lowpass"}  # the command's None is Identification's "auto" with lowpass_fallback=True


def _default(parameter):
    return getattr(parameter.default, "default", parameter.default)  # a typer.Option's default


def test_every_option_of_dynid_identify_is_carried_by_the_library():
    command = inspect.signature(identify).parameters
    fields = {f.name: f.default for f in dataclasses.fields(Identification) if f.init}
    mapping = inspect.signature(ColumnMapping.from_options).parameters
    drive = inspect.signature(identify_drive_log).parameters
    missing, defaults = [], []
    for name, parameter in command.items():
        if name in fields:
            if name not in SAME_BEHAVIOUR and name != "robot" and fields[name] != _default(parameter):
                defaults.append(f"{name}: command {_default(parameter)!r}, library {fields[name]!r}")
        elif name in MAPPING:
            if MAPPING[name] not in mapping or mapping[MAPPING[name]].default != _default(parameter):
                missing.append(f"{name} (ColumnMapping.from_options({MAPPING[name]}=))")
        elif name in DRIVE:
            if DRIVE[name] not in drive:
                missing.append(f"{name} (identify_drive_log({DRIVE[name]}=))")
        elif name not in CALLS:
            missing.append(name)
    assert not missing, f"options of dynid identify the library does not take: {missing}"
    assert not defaults, f"defaults that differ: {defaults}"
    assert fields["per"] is None and "excitation" in fields


def test_the_fleet_refuses_the_options_it_does_not_carry_rather_than_dropping_them():
    import pytest

    from dynid.errors import DataError
    from dynid.fleet.tasks import NOT_CARRIED, Settings

    with pytest.raises(DataError, match="fixed low-pass cutoff"):
        Settings.of(Identification("planar2"))
    with pytest.raises(DataError, match="bridge_gap=SECONDS"):
        Settings.of(Identification("planar2", lowpass=None))  # the bridge from the motion is identify's default
    with pytest.raises(DataError, match="rest='off'"):
        Settings.of(Identification("planar2", lowpass=None, bridge_gap=0.02))  # rest detection is identify's default
    with pytest.raises(DataError, match="tau_delay=SECONDS"):
        Settings.of(Identification("planar2", lowpass=None, bridge_gap=0.02, rest="off"))  # the delay from the log
    fixed = {"lowpass": None, "bridge_gap": 0.02, "rest": "off", "tau_delay": 0.0}
    with pytest.raises(DataError, match="--friction stribeck: the fleet sums normal equations"):
        Settings.of(Identification("planar2", **fixed, friction="stribeck"))
    with pytest.raises(DataError, match="essential=True"):
        Settings.of(Identification("planar2", **fixed, essential=True))
    idn = Identification("planar2", estimator="wls", offset=True, lowpass=12.0, rest="off", still_range=0.1,
                         bridge_gap=0.03, tau_delay=0.0)
    settings = Settings.of(idn)
    again = settings.identification(idn.robot, idn.spec)
    assert again.prep == idn.prep and again.options == idn.options  # filter_torque None is off with a fixed cutoff
    kept = [f.name for f in dataclasses.fields(Identification)
            if f.init and f.name not in ("robot", "filter_torque", *NOT_CARRIED)]
    assert {k: getattr(again, k) for k in kept} == {k: getattr(idn, k) for k in kept}


def test_fleet_identify_refuses_a_friction_model_chosen_on_the_samples_in_one_line(tmp_path):
    """dynid fleet identify --friction auto said "friction model 'auto' unknown, expected one of
    [..., 'stribeck']", and --friction stribeck "0 Stribeck velocities for 6 joints": the line
    says what the fleet cannot do and what to give, before the data set is read."""
    from cli_helpers import failing

    for friction in ("auto", "stribeck"):
        line = failing("fleet", "identify", tmp_path / "missing", "--friction", friction, "--lowpass", "10")
        assert f"--friction {friction}: the fleet sums normal equations" in line and "coulomb-viscous" in line, line


def test_commands_that_take_the_friction_model_as_it_is_refuse_a_fitted_one_in_one_line(tmp_path):
    """dynid base-params er3a --friction load-dependent said "load-dependent friction: 0 load parameters
    for robot 'er3a', expected 60 inertial parameters and 6 rotor inertias" (the columns' ModelError),
    drives gains the same, --friction stribeck "0 Stribeck velocities for 6 joints": the line names
    the option, says that the command cannot fit that model and what the command supports."""
    from cli_helpers import failing

    supported = "it supports none, coulomb-viscous, polynomial or asymmetric"
    for friction in ("load-dependent", "stribeck", "auto", "stiction"):
        line = failing("base-params", "er3a", "--friction", friction)
        assert line.startswith(f"error: --friction {friction}: base-params cannot fit that friction model (") \
            and line.endswith(supported), line
    line = failing("drives", "gains", "-r", "er3a", "--unloaded", tmp_path / "u.csv", "--loaded", tmp_path / "l.csv",
                   "--mass", "2", "--out", tmp_path / "gains.json", "--friction", "load-dependent")
    assert line.startswith("error: --friction load-dependent: drives gains cannot fit that friction model (its load "
                           "torque comes from inertial parameters fitted to a log by dynid identify") \
        and line.endswith(supported), line
    line = failing("fleet", "identify", tmp_path / "missing", "--friction", "stiction", "--lowpass", "10")
    assert line.startswith("error: --friction stiction: fleet identify cannot fit that friction model (unknown") \
        and line.endswith(supported), line
    assert not list(tmp_path.iterdir())  # refused before anything was read or written

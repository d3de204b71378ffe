"""The drive gains' uncertainty travels with them: a gains file of ``dynid drives gains`` carries
each gain's relative standard deviation, and the payload's covariance takes it (P4 in
identify/payload.py) unless --gain-std says otherwise (issue 24)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.data.columns import ColumnMapping
from dynid.data.io import write_columns, write_joint_data
from dynid.data.preprocess import Preprocessing
from dynid.errors import DataError
from dynid.identify.base import base_parameters
from dynid.identify.model import ModelOptions
from dynid.identify.payload import identify_payload
from dynid.robot.inertia import from_mass_com_inertia

from realistic_logs import realistic_log
from test_payload import _loaded_theta

GAINS = np.array([2.0, 3.0])  # N m / A of planar2's two drives
RELATIVE_STD = [0.01, 0.04]


def _gains_file(path, relative_std=RELATIVE_STD) -> None:
    """A gains file as ``dynid drives gains`` writes it (the fields payload reads)."""
    path.write_text(json.dumps({"format": "dynid-drive-gains", "gains": GAINS.tolist(),
                                "std": (GAINS * np.asarray(relative_std, dtype=float)).tolist(),
                                "relative_std": relative_std, "current_gain": ",".join(map(str, GAINS))}))


def test_the_mapping_keeps_the_gains_relative_std_and_result_json_carries_it(tmp_path):
    _gains_file(tmp_path / "gains.json")
    mapping = ColumnMapping.from_options(current_gain=str(tmp_path / "gains.json"))
    assert mapping.current_gain == "2.0,3.0" and mapping.current_gain_std == tuple(RELATIVE_STD)
    again = ColumnMapping.from_dict(json.loads(json.dumps(mapping.to_dict())))
    assert again == mapping
    plain = ColumnMapping.from_options(current_gain="2.0,3.0")
    assert plain.current_gain_std == () and "current_gain_relative_std" not in plain.to_dict()


def test_a_gains_file_with_a_bad_std_is_one_error_naming_the_field(tmp_path):
    _gains_file(tmp_path / "gains.json", [0.01, -0.5])
    with pytest.raises(DataError, match="relative_std"):
        ColumnMapping.from_options(current_gain=str(tmp_path / "gains.json"))


@pytest.fixture(scope="module")
def current_logs(tmp_path_factory):
    """planar2 logs with and without a 0.5 kg load, currents i = tau / K."""
    d = tmp_path_factory.mktemp("gain_std")
    robot = dynid.load_robot("planar2")
    options = ModelOptions()
    phi = from_mass_com_inertia(0.5, [0.05, 0.02, 0.0], np.diag([0.002, 0.003, 0.004]))
    for name, theta, seed in (("loaded", _loaded_theta(robot, options, phi), 51), ("unloaded", None, 52)):
        data, _, _ = realistic_log(robot, 200.0, 30.0, seed=seed, encoder_counts=2**16, theta=theta)
        write_joint_data(d / f"{name}.csv", data)
        write_columns(d / f"{name}_i.csv", {"t": data.t, **{f"q{j + 1}": data.q[:, j] for j in range(robot.n)},
                                            **{f"i{j + 1}": data.tau[:, j] / GAINS[j] for j in range(robot.n)}})
    _gains_file(d / "gains.json")
    return d, robot, base_parameters(robot, options)


def test_the_payload_takes_the_gains_std_from_the_file_and_gain_std_overrides_it(current_logs):
    """A common error u of the gains scales the whole load, so the mass std is at least u times
    the mass; u from the file is its largest relative std (bounds a common error of the gains).
    The same logs as torques give the same load without that term."""
    d, robot, base = current_logs
    prep = Preprocessing(lowpass_hz=4.0)
    fit = lambda data, mapping, gain_std=None: identify_payload(  # noqa: E731
        robot, [d / f"loaded{data}.csv"], ModelOptions(), base, prep, unloaded_paths=[d / f"unloaded{data}.csv"],
        mapping=mapping, gain_std=gain_std, currents=data == "_i").to_dict()
    torques = fit("", ColumnMapping())
    from_file = fit("_i", ColumnMapping.from_options(current_gain=str(d / "gains.json")))
    assert from_file["mass"]["value"] == pytest.approx(torques["mass"]["value"], rel=1e-6)
    assert from_file["uncertainty"]["gain_std"] == max(RELATIVE_STD)
    assert from_file["uncertainty"]["gain_std_source"] == "drive gains file"
    mass = from_file["mass"]["value"]
    assert from_file["mass"]["std"] >= max(RELATIVE_STD) * mass > 4.0 * torques["mass"]["std"]
    assert not any("--gain-std" in note for note in from_file["notes"])
    given = fit("_i", ColumnMapping.from_options(current_gain=str(d / "gains.json")), gain_std=0.0)
    assert given["uncertainty"]["gain_std"] == 0.0 and given["uncertainty"]["gain_std_source"] == "--gain-std"
    assert given["mass"]["std"] == pytest.approx(torques["mass"]["std"], rel=1e-6)
    numbers = fit("_i", ColumnMapping.from_options(current_gain="2.0,3.0"))
    assert numbers["uncertainty"]["gain_std"] == 0.0 and any("--gain-std" in note for note in numbers["notes"])

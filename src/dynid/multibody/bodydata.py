"""The body data file (docs/formats.md section 5): read, write, round like an ADAMS export."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dynid.files.inputs import input_file
from dynid.files.outputs import write_output
from dynid.errors import DataError
from dynid.multibody.quaternion import Quaternion

BODY_FIELDS = ("x", "y", "z", "qw", "qx", "qy", "qz", "ax", "ay", "az", "wx", "wy", "wz", "dwx", "dwy", "dwz")
JOINT_FIELDS = ("px", "py", "pz", "fx", "fy", "fz", "mx", "my", "mz")


def columns(n: int) -> list[str]:
    """Header of a body data file for n bodies and n joints, in contract order."""
    return (["t"] + [f"b{i}_{f}" for i in range(1, n + 1) for f in BODY_FIELDS]
            + [f"j{k}_{f}" for k in range(1, n + 1) for f in JOINT_FIELDS])


def round_significant(values: np.ndarray, digits: int) -> np.ndarray:
    """Round every entry to ``digits`` significant digits (ADAMS exports 7); zeros stay 0."""
    values = np.asarray(values, dtype=float)
    return np.char.mod(f"%.{digits - 1}e", values).astype(float)


@dataclass(frozen=True)
class BodyData:
    """Samples of a body data file, frame 0: t (N,); r, a, w, dw (N, n, 3); quat (N, n, 4)
    scalar first; joint_point, force, moment (N, n, 3) (moment about O_k)."""

    t: np.ndarray
    r: np.ndarray
    quat: np.ndarray
    a: np.ndarray
    w: np.ndarray
    dw: np.ndarray
    joint_point: np.ndarray
    force: np.ndarray
    moment: np.ndarray

    @property
    def n(self) -> int:
        return self.r.shape[1]

    def select(self, index) -> "BodyData":
        return BodyData(*(getattr(self, f)[index] for f in self.__dataclass_fields__))

    def table(self) -> np.ndarray:
        """(N, columns(n)) array in contract column order."""
        N, n = self.r.shape[:2]
        body = np.concatenate([self.r, self.quat, self.a, self.w, self.dw], -1).reshape(N, -1)
        joint = np.concatenate([self.joint_point, self.force, self.moment], -1).reshape(N, -1)
        return np.concatenate([self.t[:, None], body, joint], 1)


def body_data_from_states(t, states, force, moment) -> BodyData:
    """BodyData from BodyStates and joint wrenches (N, n, 3)."""
    return BodyData(np.asarray(t, dtype=float), states.r, Quaternion.from_rotation(states.rotation),
                    states.a, states.w, states.dw, states.joint_point, force, moment)


def write_body_data(path, data: BodyData, significant_digits: int | None = None) -> Path:
    """Write atomically (``dynid.files.outputs.write_output``).

    significant_digits: round every value to this many significant digits (7 = ADAMS);
    None writes full double precision.
    """
    path = Path(path)
    table = data.table()
    fmt = "%.17g" if significant_digits is None else f"%.{significant_digits}g"

    def write(tmp):
        with open(tmp, "w", newline="") as fh:
            fh.write(",".join(columns(data.n)) + "\n")
            np.savetxt(fh, table, fmt=fmt, delimiter=",")

    write_output(path, write)
    return path


def read_body_data(path) -> BodyData:
    """Read a body data file; DataError naming the file and column when it is malformed."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: body data file not found")
    input_file(path, "body data file")
    try:
        with open(path, newline="") as fh:
            header = next(csv.reader(fh), None)
            if not header:
                raise DataError(f"{path}: empty file, expected a header with t, b1_x, ... (docs/formats.md section 5)")
            header = [h.strip() for h in header]
            rows = [r for r in csv.reader(fh) if r]
    except UnicodeDecodeError:
        raise DataError(f"{path}: not a text CSV file") from None
    except csv.Error as exc:
        raise DataError(f"{path}: not a readable CSV body data file ({exc})") from None
    if "t" not in header:
        raise DataError(f"{path}: missing column 't' (not a body data file?)")
    n = 0
    while f"b{n + 1}_x" in header:
        n += 1
    if n == 0:
        raise DataError(f"{path}: no body columns (expected b1_x, b1_y, ...)")
    index = {name: c for c, name in enumerate(header)}
    for name in columns(n):
        if name not in index:
            raise DataError(f"{path}: missing column '{name}' (body data of {n} bodies, docs/formats.md section 5)")
    try:
        values = np.array([[float(r[index[name]]) for name in columns(n)] for r in rows], dtype=float)
    except (ValueError, IndexError) as exc:
        raise DataError(f"{path}: non-numeric or missing value ({exc})") from None
    if values.shape[0] == 0:
        raise DataError(f"{path}: no samples")
    bad = ~np.all(np.isfinite(values), 0)
    if np.any(bad):
        raise DataError(f"{path}: column '{columns(n)[int(np.argmax(bad))]}' has non-finite values")
    t = values[:, 0]
    if np.any(np.diff(t) <= 0):
        raise DataError(f"{path}: column 't' must be strictly increasing")
    N = len(t)
    body = values[:, 1:1 + 16 * n].reshape(N, n, 16)
    joint = values[:, 1 + 16 * n:].reshape(N, n, 9)
    quat = body[..., 3:7]
    norm = np.linalg.norm(quat, axis=-1)
    if np.any(np.abs(norm - 1.0) > 1e-3):
        b = int(np.argwhere(np.abs(norm - 1.0) > 1e-3)[0, 1]) + 1
        raise DataError(f"{path}: columns b{b}_qw..b{b}_qz are not a unit quaternion")
    return BodyData(t, body[..., 0:3], quat / norm[..., None], body[..., 7:10], body[..., 10:13],
                    body[..., 13:16], joint[..., 0:3], joint[..., 3:6], joint[..., 6:9])

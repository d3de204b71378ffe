"""The SIMD-lane kernels (dynamics/lanes.py, sincos.py): their sin/cos is the C library's to an
ulp (the scalar one, and the explicit kernel's on eight lanes, explicit.vector_sincos), and a large
batch (parallel blocks, a partial last block, huge and non-finite angles) agrees with Pinocchio
sample by sample to 1e-9."""

import math

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic
from oracles import pin_model, pin_regressor, pin_rnea
from urdf_factory import write_robot

import dynid
from dynid.dynamics import explicit
from dynid.dynamics.lanes import CHUNK, LANES
from dynid.dynamics.threads import ALL_THREADS_MIN_SAMPLES
from dynid.dynamics.sincos import SINCOS_LIMIT, sincos


@nb.njit
def _sincos_all(x, s, c):
    for k in range(x.shape[0]):
        s[k], c[k] = sincos(x[k])


def test_sincos_within_an_ulp_of_the_c_library():
    rng = np.random.default_rng(3)
    quarter_turns = np.arange(-40, 41) * (math.pi / 4)  # the reduction's boundaries
    x = np.concatenate([rng.uniform(-7.0, 7.0, 100_000), rng.uniform(-SINCOS_LIMIT, SINCOS_LIMIT, 100_000),
                        quarter_turns, np.nextafter(quarter_turns, np.inf), [0.0, -0.0, 1e-300, -1e-8]])
    s, c = np.empty_like(x), np.empty_like(x)
    _sincos_all(x, s, c)
    for ours, libm in ((s, np.sin(x)), (c, np.cos(x))):
        ulps = np.abs(ours - libm) / np.spacing(np.maximum(np.abs(libm), np.finfo(float).tiny))
        assert ulps.max() <= 2.0
        assert np.abs(ours - libm).max() <= 2.3e-16


@intrinsic
def _sincos8(typingctx, x, s, c, o):
    """explicit.vector_sincos of x[o:o + 8] into s and c."""
    def codegen(context, builder, sig, args):
        vec = ir.VectorType(ir.DoubleType(), 8)
        at = [builder.bitcast(builder.gep(context.make_array(sig.args[a])(context, builder, args[a]).data, [args[3]]),
                              vec.as_pointer()) for a in range(3)]
        sines, cosines = explicit.vector_sincos(builder, builder.load(at[0], align=8))
        builder.store(sines, at[1], align=8)
        builder.store(cosines, at[2], align=8)
        return context.get_dummy_value()

    return types.void(x, s, c, o), codegen


@nb.njit
def _vector_sincos_all(x, s, c):
    for o in range(0, x.shape[0], 8):
        _sincos8(x, s, c, o)


def test_vector_sincos_within_two_ulps_of_the_c_library_for_any_angle():
    """The explicit kernel's sines and cosines (computed in its registers from q): within 1 ulp for
    |q| < 1e3 (wrapped or multi-turn encoders), 2 ulps (2.3e-16) below SINCOS_LIMIT, the C library's own
    values above it, for infinities and NaN (a lane of those in a vector of ordinary angles)."""
    rng = np.random.default_rng(5)
    quarter_turns = np.arange(-2000, 2001) * (math.pi / 2)  # the reduction's boundaries
    ordinary = np.concatenate([rng.uniform(-7.0, 7.0, 40_000), rng.uniform(-1e3, 1e3, 40_000), quarter_turns,
                               np.nextafter(quarter_turns, np.inf), [0.0, -0.0, 1e-300, -1e-8, 999.9999]])
    ordinary = np.concatenate([ordinary, np.zeros(-ordinary.size % 8)])
    wide = rng.uniform(-SINCOS_LIMIT, SINCOS_LIMIT, 40_000)
    huge = np.array([3e6, -2.5e5, SINCOS_LIMIT, -SINCOS_LIMIT, 1e300, np.inf, -np.inf, np.nan])
    mixed = np.concatenate([huge, rng.uniform(-3.0, 3.0, 8)])[rng.permutation(16)]
    for x, most in ((ordinary, 1.0), (wide, 2.0), (mixed, 1.0)):
        s, c = np.empty_like(x), np.empty_like(x)
        _vector_sincos_all(x, s, c)
        with np.errstate(invalid="ignore"):
            for ours, libm in ((s, np.sin(x)), (c, np.cos(x))):
                assert np.array_equal(np.isnan(ours), np.isnan(libm))
                finite = ~np.isnan(libm)
                ulps = np.abs(ours - libm)[finite] / np.spacing(np.maximum(np.abs(libm[finite]), np.finfo(float).tiny))
                assert ulps.max() <= most
                assert np.abs(ours - libm)[finite].max() <= 2.3e-16
        if x is mixed:
            large = ~(np.abs(x) < SINCOS_LIMIT)
            with np.errstate(invalid="ignore"):
                assert np.array_equal(s[large], np.sin(x[large]), equal_nan=True)


def test_large_batch_agrees_with_pinocchio_sample_by_sample(tmp_path):
    path = write_robot(tmp_path, "branched", seed=5)
    robot = dynid.load_robot(path).with_gravity([0.3, -1.2, -9.81])
    model = pin_model(path, [0.3, -1.2, -9.81])
    count = ALL_THREADS_MIN_SAMPLES + CHUNK // 2 + LANES // 3  # parallel, and a partial last block
    rng = np.random.default_rng(11)
    q, dq, ddq = rng.uniform(-2, 2, (3, count, robot.n))
    q[5, 1] = 3e6  # beyond the lane sin/cos range: the C library's
    q[700, 0] = -2.5e5
    # the generic kernel's parallel path (the folded kernel of a structure, and these angles in it:
    # tests/test_regressor_folded.py; compiling one for this random tree would take ~40 s)
    y, tau = dynid.regressor(robot, q, dq, ddq, folded_kernel=False), dynid.inverse_dynamics(robot, q, dq, ddq)
    pick = np.r_[0:40, 690:710, count - 40:count]
    for ours, theirs in ((y[pick], pin_regressor(model, q[pick], dq[pick], ddq[pick])),
                         (tau[pick], pin_rnea(model, q[pick], dq[pick], ddq[pick]))):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * max(1.0, np.abs(theirs).max()))
    np.testing.assert_allclose(y @ robot.parameters(), tau, rtol=0, atol=1e-9 * np.abs(tau).max())
    one = dynid.regressor(robot, q[:7], dq[:7], ddq[:7])  # the serial path gives the same numbers
    np.testing.assert_allclose(one, y[:7], rtol=0, atol=1e-12 * np.abs(y).max())


def test_non_finite_angle_poisons_only_its_sample():
    robot = dynid.load_robot("er3a")
    q, dq, ddq = np.random.default_rng(2).uniform(-1, 1, (3, 2 * LANES, robot.n))
    q[3, 2] = np.nan
    tau = dynid.inverse_dynamics(robot, q, dq, ddq)
    assert np.isnan(tau[3]).any() and np.isfinite(np.delete(tau, 3, axis=0)).all()


def test_streaming_gram_of_a_tree_equals_the_base_regressor_normal_equations(tmp_path):
    """The fused path (kernel rows straight into each joint's Gram buffer) against the plain
    sums W_j^T W_j, W_j^T tau_j of the base regressor, rows masked at random."""
    from dynid.identify import ModelOptions, base_parameters, identification_regressor
    from dynid.identify.base import identifiability_table
    from dynid.identify.gram import RegressorGram
    from dynid.identify.model import motor_columns
    from dynid.identify.normal_equations import NormalEquations

    robot = dynid.load_robot(write_robot(tmp_path, "branched", seed=5))
    options = ModelOptions(offset=True)
    base = base_parameters(robot, options)
    rng = np.random.default_rng(4)
    count = 3 * LANES + 5
    q, dq, ddq = rng.uniform(-2, 2, (3, count, robot.n))
    tau, mask = rng.normal(size=(count, robot.n)), rng.uniform(size=(count, robot.n)) > 0.2
    gram = RegressorGram(robot, options, base, identifiability_table(robot, options))
    assert gram.transposed
    gram.add_motion(robot, q, dq, ddq, motor_columns(robot, dq, ddq, options), tau, mask, gram.new_buffer(count))
    fused = gram.to_normal_equations(base)
    plain = NormalEquations(robot.n, base.rank)
    plain.add(identification_regressor(robot, q, dq, ddq, options)[..., base.independent], tau, mask)
    for ours, theirs in ((fused.A, plain.A), (fused.B, plain.B), (fused.C, plain.C), (fused.tau_sum, plain.tau_sum)):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10 * np.abs(theirs).max())
    assert (fused.rows == plain.rows).all()

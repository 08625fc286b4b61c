"""The multiplier formulation in joint coordinates (``constrained_forward_dynamics``: tree
kernels plus loop rows) against the natural-coordinate formulation (docs/natural.md), on the
four-bar, the slider-crank, the RSSR linkage and Bricard's linkage.

The same physical state in both: q assembled from a random perturbation of the zero
configuration (``LoopClosure.assemble``, then Gauss-Newton steps on the kept rows to
rounding), v random in the null space of G; the natural coordinates and their rates from the
modeller's ``coordinates_at`` / ``velocities_at``. Joint accelerations map to natural ones by
r̈ = B q̈ + b, point r on body k at lever l: B q̈ = J_lin q̈ − l × J_ang q̈ and
b = p̈₀ + ω̇₀ × l + ω × (ω × l) with [ω̇₀; p̈₀] = J̇v (unit vectors: the angular part only),
J and J̇v from the numpy reference (``symgen.reference``, no generated code). Natural
accelerations come from the compiled ``nc_accelerations`` (Baumgarte off: these states are
consistent) and from the numpy reference ``lagrange_accelerations`` (least squares on the
saddle-point matrix); the natural ones also map back to q̈ by least squares on [B; G]
(full column rank: the natural coordinates and the loop rows fix the joint motion).

Loads: gravity only, then gravity plus random torques on the 1-DOF tree joints (the natural
formulation's ``tau`` holds the same values on those joints, zero on the loop joints;
conjugacy, θ̇_j = v_j, is checked). None of these models declares springs or motors.

Tolerance 1e-9 relative to max(1, |x|∞); states seed 0 (perturbation 0.2, 4 per model),
torques seed 1. Why it holds: both solve the same index-1 equations exactly (no time step),
with backward-stable factorizations, so each is within ~κ ε of the exact acceleration, κ the
condition number of its saddle-point system. At the sampled states κ ≤ 6e4 in joint
coordinates and ≤ 3e5 in natural ones (both worst on the RSSR, whose coupler spins with
1e-5 kg m² against 5e-3 across; Bricard's redundant constraint is a zero singular value, not
counted), asserted ≤ 1e6 below, so κ ε ≤ 2.2e-10; the mapping (kinematics, assembly to
rounding) adds O(ε). Measured: ≤ 3e-12 against the compiled kernel, ≤ 6e-11 against the
least-squares reference.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from loop_mapping import natural_map, relative_error
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.loops import LoopClosure
from symgen.natural import NaturalOptions
from symgen.reference.natural import lagrange_accelerations

MODELS = ["four_bar", "slider_crank", "rssr", "bricard"]
SEED, PERTURBATION, SAMPLES = 0, 0.2, 4
TOLERANCE = 1e-9
MAX_CONDITION = 1e6  # κ ε ≤ 2.2e-10 < TOLERANCE


@cache
def built(name: str):
    """(model, natural model, joint kernels, natural kernels), compiled once per model."""
    model = symgen.load(EXAMPLES / f"{name}.yaml")
    joint = symgen.generate(model, ["constrained_forward_dynamics", "loop_jacobian"])
    natural = symgen.generate(model, ["nc_accelerations"],
                              options=NaturalOptions(baumgarte=0.0))
    return (model, natural.context.nm, joint, symgen.compile_kernels(joint, vectorize=None),
            symgen.compile_kernels(natural, vectorize=None))


@cache
def states(name: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Assembled q (to rounding) and v in the null space of G."""
    model, _, ks, lib, _ = built(name)
    analysis = ks.context.loops
    closure = LoopClosure(model)
    rng = np.random.default_rng(SEED)
    q0 = ref.neutral_configuration(model)
    out = []
    for _ in range(SAMPLES):
        guess = ref.integrate(model, q0, PERTURBATION * rng.normal(size=model.nv), 1.0)
        q = closure.least_norm_steps(closure.assemble(guess),
                                     [loop.selection for loop in analysis.loops],
                                     list(analysis.rows), 3, 0.0)
        _, sigma, vt = np.linalg.svd(lib.loop_jacobian(q))
        tangent = vt[int(np.sum(sigma > 1e-8 * sigma[0])):].T
        out.append((q, tangent @ rng.normal(size=tangent.shape[1])))
    return out


def condition(matrix: np.ndarray, rank: int) -> float:
    """Largest over the rank-th singular value (zero ones: redundant constraints)."""
    sigma = np.linalg.svd(matrix, compute_uv=False)
    return float(sigma[0] / sigma[rank - 1])


def compare(name: str, torques: bool) -> dict[str, float]:
    """Worst relative errors over the states (the test's measurements)."""
    model, nm, ks, lib, nlib = built(name)
    keep = list(ks.context.loops.rows)
    closure = LoopClosure(model)
    rng = np.random.default_rng(SEED + 1)
    worst = {"natural": 0.0, "reference": 0.0, "joint": 0.0}
    for q, v in states(name):
        tau, tau_nc = np.zeros(model.nv), np.zeros(len(nm.actuated))
        tree = [j for j in nm.actuated if j in model.joint_names]
        if torques:
            for joint in tree:
                tau[model.v_slices[joint]] = tau_nc[nm.actuated.index(joint)] = rng.normal()
        r, rd = nm.modeller.coordinates_at(q), nm.modeller.velocities_at(q, v)
        b_mat, b = natural_map(model, nm, q, v)
        pq = nm.phi_q(r)
        # the same state: loops closed, ṙ two ways, joint coordinates and rates read back
        assert np.max(np.abs(nm.phi(r))) <= 1e-13
        assert relative_error(b_mat @ v, rd) <= 1e-13
        assert np.max(np.abs(pq @ rd)) <= 1e-13
        theta_dot = nm.joint_gradient_values(r) @ rd
        for joint in tree:
            i, qj = nm.actuated.index(joint), q[model.q_slices[joint]][0]
            assert abs((nm.joint_values[joint](r) - qj + np.pi) % (2 * np.pi) - np.pi) <= 1e-12
            assert abs(theta_dot[i] - v[model.v_slices[joint]][0]) <= 1e-12
        # regular states, conditioned as the tolerance assumes
        g = lib.loop_jacobian(q)[keep]
        kkt = np.block([[ref.mass_matrix(model, q), g.T], [g, np.zeros((len(keep),) * 2)]])
        assert condition(kkt, len(kkt)) <= MAX_CONDITION
        nkkt = np.block([[nm.mass_matrix, pq.T], [pq, np.zeros((nm.m, nm.m))]])
        assert condition(nkkt, nm.n + nm.rank(r)) <= MAX_CONDITION

        a, _ = lib.constrained_forward_dynamics(q, v, tau)
        mapped = b_mat @ a + b
        natural, _ = nlib.nc_accelerations(r, rd, tau_nc)
        reference, _ = lagrange_accelerations(nm, r, rd, tau=tau_nc)
        # natural → joint: [B; G_raw] q̈ = [r̈ − b; −Ġv], full column rank
        stacked = np.vstack([b_mat, *closure.jacobians(q)])
        assert np.linalg.matrix_rank(stacked) == model.nv
        back = np.linalg.lstsq(stacked, np.concatenate([natural - b,
                                                        *[-x for x in closure.biases(q, v)]]),
                               rcond=None)[0]
        worst["natural"] = max(worst["natural"], relative_error(mapped, natural))
        worst["reference"] = max(worst["reference"], relative_error(mapped, reference))
        worst["joint"] = max(worst["joint"], relative_error(a, back))
    return worst


@pytest.mark.parametrize("torques", [False, True], ids=["gravity", "torques"])
@pytest.mark.parametrize("name", MODELS)
def test_multiplier_accelerations_equal_natural_coordinate_ones(name, torques):
    worst = compare(name, torques)
    assert max(worst.values()) <= TOLERANCE, worst

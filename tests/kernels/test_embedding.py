"""Constraint embedding (Jain 2009; symgen.loops.embedding, symgen.formulations.embedded):
closed-loop dynamics in the independent coordinates, compiled, against

- the multiplier formulation (forward_dynamics_multipliers, the q̈ of
  constrained_forward_dynamics with multipliers: tree LᵀDL and a Schur complement),
  projected onto the independent coordinates;
- constrained_forward_dynamics by embedding against the same with multipliers and the numpy
  saddle-point system, off the loop manifold too (drifted q, any v, Baumgarte's terms,
  external forces);
- the natural-coordinate formulation (compiled nc_accelerations, and its numpy reference
  lagrange_accelerations: least squares on the saddle-point matrix), the joint
  accelerations mapped onto the natural coordinates (tests/loop_mapping.py);
- J09's two cuts of one four-bar (eq. 43, terminal; eq. 44, internal): the same independent
  acceleration;
- the reflected inertia of a geared rotor, μ²J_rotor on the diagonal (J09 eq. 42);
- its own inverse: embedded inverse dynamics fed into embedded forward dynamics.

States: assembled configurations (the zero configuration moved by 0.2 rad per coordinate,
seed 0, closed to rounding), rates along the motion (null space of G), random joint forces
(seed 1). Tolerance 1e-9 relative to max(1, |x|∞) (as tests/kernels/test_loops_vs_natural.py:
every method solves the same index-1 equations with backward-stable factorizations, κ ε ≤
2e-10 for the condition numbers ≤ 1e6 of these states); 1e-10 for the embedding against
itself (inverse then forward, the two cuts), whose only error is rounding in X_S.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from loop_mapping import assembled_states, natural_map, relative_error
from loop_mechanisms import four_bar_chain
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.apps.verify.checks import reference_values
from symgen.model.recut import recut
from symgen.natural import NaturalOptions
from symgen.reference.natural import lagrange_accelerations

TOLERANCE = 1e-9
KERNELS = ["embedded_forward_dynamics", "embedded_inverse_dynamics", "embedded_mass_matrix",
           "forward_dynamics_multipliers", "loop_jacobian", "forward_dynamics"]
#: The Delta's natural-coordinate kernels take minutes to build (156 coordinates): its
#: natural accelerations come from the numpy reference alone.
COMPILED_NATURAL = ["four_bar", "slider_crank", "four_bar_knee", "five_bar", "four_bar_chain"]
MODELS = [*COMPILED_NATURAL, "delta_robot"]


def load(name: str) -> symgen.Model:
    """An example model, or three four-bars in series (tests/loop_mechanisms.py)."""
    return four_bar_chain(3) if name == "four_bar_chain" else \
        symgen.load(EXAMPLES / f"{name}.yaml")


@cache
def built(name: str, options: symgen.Options | None = None):
    model = load(name)
    ks = symgen.generate(model, KERNELS, options)
    return model, ks, symgen.compile_kernels(ks, vectorize=None)


@cache
def natural(name: str):
    model = load(name)
    ks = symgen.generate(model, ["nc_accelerations"], options=NaturalOptions(baumgarte=0.0))
    nm = ks.context.nm
    return nm, (symgen.compile_kernels(ks, vectorize=None) if name in COMPILED_NATURAL else None)


@pytest.mark.parametrize("name", [*COMPILED_NATURAL,
                                  pytest.param("delta_robot", marks=pytest.mark.slow)])
def test_embedded_forward_dynamics_equals_multipliers_and_natural_coordinates(name):
    model, ks, lib = built(name)
    keep = list(ks.context.loops.rows)
    ind = list(ks.context.embedding.independent)
    nm, nlib = natural(name)
    for q, v, tau in assembled_states(model, lib, keep):
        a_ind, v_full, a = lib.embedded_forward_dynamics(q, v[ind], tau)
        assert relative_error(v_full, v) <= 1e-12  # the dependent rates recovered
        a_mult = lib.forward_dynamics_multipliers(q, v, tau)
        assert relative_error(a_ind, a_mult[ind]) <= TOLERANCE
        assert relative_error(a, a_mult) <= TOLERANCE
        assert relative_error(lib.forward_dynamics(q, v, tau), a_mult) <= TOLERANCE
        # natural coordinates: the same loads (joint torques on the tree joints)
        tau_nc = np.array([tau[model.v_slices[j]][0] if j in model.v_slices else 0.0
                           for j in nm.actuated])
        r, rd = nm.modeller.coordinates_at(q), nm.modeller.velocities_at(q, v)
        b_mat, b = natural_map(model, nm, q, v)
        expected, _ = lagrange_accelerations(nm, r, rd, tau=tau_nc)
        assert relative_error(b_mat @ a + b, expected) <= TOLERANCE
        if nlib is not None:
            compiled, _ = nlib.nc_accelerations(r, rd, tau_nc)
            assert relative_error(b_mat @ a + b, compiled) <= TOLERANCE


@pytest.mark.parametrize("name", MODELS)
def test_embedded_inverse_dynamics_round_trip_and_mass_matrix(name):
    model, ks, lib = built(name)
    keep = list(ks.context.loops.rows)
    ind = list(ks.context.embedding.independent)
    rng = np.random.default_rng(2)
    for q, v, _ in assembled_states(model, lib, keep, seed=3):
        a_ind = rng.normal(size=len(ind))
        tau_ind, a = lib.embedded_inverse_dynamics(q, v[ind], a_ind)
        tau = np.zeros(model.nv)
        tau[ind] = tau_ind  # forces on the independent coordinates only: T_R = tau_ind
        back, _, a_back = lib.embedded_forward_dynamics(q, v[ind], tau)
        assert relative_error(back, a_ind) <= 1e-10
        assert relative_error(a_back, a) <= 1e-10
        # G a + Ġ v = 0 for the recovered accelerations, and 𝓜_R a_R = T_R − bias
        m_r = lib.embedded_mass_matrix(q)
        assert np.allclose(m_r, m_r.T, rtol=0, atol=1e-14 * np.abs(m_r).max())
        assert np.all(np.linalg.eigvalsh(m_r) > 0)
        bias, _ = lib.embedded_inverse_dynamics(q, v[ind], np.zeros(len(ind)))
        assert relative_error(m_r @ a_ind + bias, tau_ind) <= 1e-10


def test_internal_and_terminal_cut_of_one_four_bar():
    # J09 eq. 44 (a and c on the ground, the cut between b and c: examples' four_bar) and
    # eq. 43 (the tree ground → a → b → c, the cut between c and the ground): the crank is
    # the independent coordinate of both; at the same physical state its acceleration agrees
    options = symgen.Options(actuated=("crank_joint",))
    internal = symgen.load(EXAMPLES / "four_bar.yaml")
    terminal = recut(internal, "coupler_rocker", "rocker_joint")
    assert [(j.name, j.parent, j.child) for j in terminal.joints] == [
        ("crank_joint", "ground", "crank"), ("coupler_joint", "crank", "coupler"),
        ("coupler_rocker", "coupler", "rocker")]
    names = ["embedded_forward_dynamics", "dependent_coordinates", "loop_constraints"]
    libs = [symgen.compile_kernels(symgen.generate(m, names, options), vectorize=None)
            for m in (internal, terminal)]
    rng = np.random.default_rng(4)
    for _ in range(4):
        crank, rate, torque = rng.uniform(-np.pi, np.pi), rng.normal(), rng.normal()
        results = []
        for model, lib in zip((internal, terminal), libs, strict=True):
            q, status = _close_from_zero(model, lib, crank)
            assert status[0] <= 1e-12 and status[1] > 1e-6
            tau = np.zeros(model.nv)
            tau[model.v_slices["crank_joint"]] = torque
            a_ind, _, _ = lib.embedded_forward_dynamics(q, [rate], tau)
            results.append(a_ind[0])
        assert abs(results[0] - results[1]) <= 1e-10 * max(1.0, abs(results[0]))


def _close_from_zero(model, lib, crank: float, steps: int = 24):
    """The closed configuration at crank angle ``crank`` on the zero configuration's
    assembly branch: dependent_coordinates along a continuation in the crank angle."""
    q = np.zeros(model.nq)
    status = None
    for t in np.linspace(0.0, 1.0, steps + 1)[1:]:
        q[model.q_slices["crank_joint"]] = t * crank
        q, status = lib.dependent_coordinates(q)
    return q, status


def test_geared_rotor_reflects_its_inertia():
    # J09 eq. 42 (X_S = [μ; 1], constant): a rotor of inertia J on a gear of ratio μ adds
    # μ²J to its joint's diagonal of the reduced mass matrix (examples/models/geared_arm.yaml:
    # no loop joint, the couplings alone are embedded). Hand values from the YAML's numbers
    # at q = 0 (as tests/peers/test_couplings.py): the shoulder rotor (J_y 2e-4) turns at
    # 50 q̇_shoulder, the elbow rotor (J_y 1e-4) at q̇_shoulder + 30 q̇_elbow.
    model = symgen.load(EXAMPLES / "geared_arm.yaml")
    lib = symgen.compile_kernels(symgen.generate(model, ["embedded_mass_matrix", "mass_matrix"]),
        vectorize=None)
    m_r = lib.embedded_mass_matrix(np.zeros(model.nq))
    upper = 2.0 * 0.4**2 / 12 + 2.0 * 0.2**2
    fore = 1.2 * 0.3**2 / 12 + 1.2 * 0.55**2
    elbow_rotor = 1e-4 + 0.2 * 0.4**2
    fingers = 2 * (7e-6 + 0.05 * (0.72**2 + 0.02**2))
    assert m_r[0, 0] == pytest.approx(upper + fore + elbow_rotor + fingers + 50**2 * 2e-4,
                                      rel=1e-12)
    elbow = 1.2 * 0.3**2 / 12 + 1.2 * 0.15**2 + 2 * (7e-6 + 0.05 * (0.32**2 + 0.02**2)) \
        + 30**2 * 1e-4
    assert m_r[1, 1] == pytest.approx(elbow, rel=1e-12)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = ref.random_configuration(model, rng)
        assert relative_error(lib.embedded_mass_matrix(q), ref.mass_matrix(model, q)) <= 1e-12


@cache
def constrained(name: str, method: str):
    """constrained_forward_dynamics by ``method`` with Baumgarte's terms and external forces,
    and the loop kernels."""
    model = load(name)
    options = symgen.Options(forward_dynamics=method, baumgarte=(3.0, 5.0),
                             external_forces=True)
    ks = symgen.generate(model, ["constrained_forward_dynamics", "loop_jacobian"], options)
    assert ks.choices.get("constrained_forward_dynamics", method).startswith(method)
    return ks, symgen.compile_kernels(ks, vectorize=None)


@pytest.mark.parametrize("name", ["four_bar", "slider_crank", "four_bar_knee", "five_bar",
                                  "andrews_squeezer", "bricard"])
def test_constrained_forward_dynamics_by_embedding_equals_multipliers_off_the_manifold(name):
    # Any state (q drifted 1e-3 off the assembled configurations, v standard normal and not
    # along the motion, random τ and external forces; seed 6): with θ̇ = v and the particular
    # acceleration of the stabilised right-hand side, the embedded solution spans exactly
    # the solutions of G q̈ = −γ, so q̈ and λ equal those with multipliers and the numpy
    # saddle-point system of symgen.apps.verify's reference (the loop closure's G and Ġq̇)
    model = load(name)
    (ks, by_embedding), (_, by_multipliers) = (constrained(name, m)
                                               for m in ("embedded", "multipliers"))
    keep = list(ks.context.loops.rows)
    rng = np.random.default_rng(6)
    for q, _, tau in assembled_states(model, by_embedding, keep, seed=6):
        q = ref.integrate(model, q, 1e-3 * rng.normal(size=model.nv), 1.0)
        v = rng.normal(size=model.nv)
        f_ext = rng.normal(size=(model.nbodies, 6))
        state = {"q": q, "v": v, "tau": tau, "f_ext": f_ext, "params": [],
                 "f_ext_dict": dict(zip(model.body_names, f_ext, strict=True))}
        want = reference_values(ks, "constrained_forward_dynamics", state)
        a_e, lam_e = by_embedding.constrained_forward_dynamics(q, v, tau, f_ext)
        a_m, lam_m = by_multipliers.constrained_forward_dynamics(q, v, tau, f_ext)
        for got in ((a_e, lam_e), (a_m, lam_m)):
            assert relative_error(got[0], want["a"]) <= TOLERANCE
            assert relative_error(got[1], want["lam"]) <= TOLERANCE
        assert relative_error(a_e, a_m) <= TOLERANCE
        assert relative_error(lam_e, lam_m) <= TOLERANCE

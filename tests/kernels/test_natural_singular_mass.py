"""Natural-coordinate models whose mass matrix M is singular (issue 11): a body without mass
or without rotational inertia owns coordinates. Where the constraints cover null(M) the
accelerations are determined and the formulations that need only M + cΦ_qᵀΦ_q to be regular
(augmented Lagrangian, book §5.2.3; the regularised Schur form of ``nc_accelerations``) give
them; where a motion has neither inertia nor a constraint the model is rejected at build time
with a one-line error naming the body."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from paths import EXAMPLES

import symgen
from symgen.errors import SymgenError
from symgen.formulations.natural.kernels import accelerations_program
from symgen.ir.printer import evaluate
from symgen.natural import NaturalOptions, natural_kernels, natural_model
from symgen.reference.natural import (
    augmented_lagrangian_accelerations,
    consistent_velocities,
    lagrange_accelerations,
)

RSSR_COUPLER = r"inertia: \[3.4195e-3.*"


def variant(tmp_path: Path, source: str, edits: list[tuple[str, str]]) -> symgen.Model:
    text = (EXAMPLES / source).read_text()
    for pattern, repl in edits:
        text, count = re.subn(pattern, repl, text)
        assert count == 1, pattern
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / source
    path.write_text(text)
    return symgen.load(path)


def rocker_point_mass(tmp_path, inertia: str = "[0, 0, 0]") -> symgen.Model:
    """RSSR whose rocker is a point mass on its arm: the rocker's unit vector has no inertia
    of its own, but the revolute joint's constraints fix it (null(M) ⊂ range(Φ_qᵀ))."""
    return variant(tmp_path, "rssr.yaml",
                   [(r"inertia: \[5.0e-4, 5.0e-4, 1.0e-4\]", f"inertia: {inertia}")])


def four_bar_point_coupler(tmp_path) -> symgen.Model:
    """Four-bar with massless crank and rocker and a point-mass coupler: M has rank 2 of 4
    (only the coupler's centre carries mass), the two constraints of the loop cover the rest."""
    zero = r"mass: {m}\n    com: \[{c}, 0\]\n    inertia: [^\n]*"
    return variant(tmp_path, "four_bar.yaml", [
        (zero.format(m="0.2", c="0.05"), "mass: 0\n    com: [0.05, 0]\n    inertia: 0"),
        (zero.format(m="0.4", c="0.2"), "mass: 0\n    com: [0.2, 0]\n    inertia: 0"),
        (r"inertia: 0.5 \* 0.5\*\*2 / 12", "inertia: 0"),
    ])


# the known rate: ball A's y (the crank turns about z from A = (0.1, 0, 0)); the four-bar's
# crank pin x (the crank is vertical at assembly)
@pytest.mark.parametrize(("build", "known"), [(rocker_point_mass, 1), (four_bar_point_coupler, 0)])
def test_singular_mass_matrix_covered_by_the_constraints(build, known, tmp_path):
    """The generated accelerations equal the full Lagrange system [[M, Φ_qᵀ], [Φ_q, 0]]
    (solved without M⁻¹; regular since null(M) ∩ null(Φ_q) = {0}) and the augmented-
    Lagrangian iteration (eq. 5.51). Tolerances: 1e-9 relative for the kernel (two direct
    solves of condition number < 1e5 here, times ε, with a 10³ margin for the unrolled
    LDLᵀ); 1e-6 for the iteration, α = 1e4 and three iterations: its contraction factor is
    below λ_max(M)/(α σ_min(Φ_q)²) per iteration, and a larger α buys nothing since the
    rounding of each solve grows with cond(M + αΦ_qᵀΦ_q) ≈ α‖Φ_q‖²/λ_min⁺(M) and
    accumulates along the free motions (eigenvalue 1 of the iteration)."""
    model = build(tmp_path)
    nm = natural_model(model)
    assert not nm.mass_matrix_regular
    assert nm.inertialess_motions(nm.q0).shape[1] == 0
    _, ks = natural_kernels(model, NaturalOptions(), nm)
    q = nm.q0
    qd = consistent_velocities(nm, q, {known: 0.7})
    np.testing.assert_allclose(nm.phi_q(q) @ qd, 0, atol=1e-12)
    tau = np.linspace(-0.5, 0.7, len(nm.actuated))
    extra = {"tau": tau} if nm.actuated else {}
    got = ks.evaluate("nc_accelerations", q=q, qd=qd, **extra)
    expected, lam = lagrange_accelerations(nm, q, qd, 10.0, 10.0, tau)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got["qdd"], expected, atol=1e-9 * scale)
    exact, _ = lagrange_accelerations(nm, q, qd, tau=tau)
    penalty = augmented_lagrangian_accelerations(nm, q, qd, alpha=1e4, iterations=3, tau=tau)
    np.testing.assert_allclose(penalty[-1], exact, atol=1e-6 * np.abs(exact).max())


def test_point_mass_limit_of_a_body_with_small_inertia(tmp_path):
    """Continuity: the rocker with isotropic inertia ε → 0 (regular M, constant M⁻¹ path)
    tends to the point-mass rocker (singular M, regularised path); the difference is O(ε)
    relative to the rocker's smallest non-zero inertia m·d² = 1.4e-3 kg m²."""
    models = {"point": rocker_point_mass(tmp_path / "a"),
              "eps": rocker_point_mass(tmp_path / "b", "[1e-10, 1e-10, 1e-10]")}
    out = {}
    for key, model in models.items():
        nm = natural_model(model)
        program = accelerations_program(nm, NaturalOptions())
        qd = consistent_velocities(nm, nm.q0, {1: 0.7})
        out[key] = evaluate(program, q=nm.q0, qd=qd, tau=np.zeros(2))["qdd"]
        out[key + "_regular"] = nm.mass_matrix_regular
    assert out["eps_regular"] and not out["point_regular"]
    np.testing.assert_allclose(out["eps"], out["point"], atol=1e-6 * np.abs(out["point"]).max())


@pytest.mark.parametrize("mass", ["0.4", "0"])
def test_free_motion_without_inertia_is_a_user_error(mass, tmp_path):
    """RSSR whose coupler has no rotational inertia: its spin about the line A-B (between the
    two ball joints) is free and carries no kinetic energy, so no formulation determines it."""
    model = variant(tmp_path, "rssr.yaml", [(RSSR_COUPLER, "inertia: [0, 0, 0]"),
                                             (r"mass: 0.4", f"mass: {mass}")])
    with pytest.raises(SymgenError) as info:
        natural_model(model)
    message = str(info.value)
    assert "\n" not in message
    assert "body 'coupler'" in message
    assert ("no mass" if mass == "0" else "no rotational inertia") in message
    assert "mass matrix is singular" in message

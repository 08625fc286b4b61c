"""The loop analysis in joint coordinates (symgen.loops, Müller 2014): the counts of the
paper's examples (§7.1 spherical four-bar, §7.2 3-PRRR manipulator, Fig. 3 double
four-bar, Fig. 2b Bricard's linkage), the invariants of the selection Ū, and the global
rank check catching the redundancy that the per-loop analysis cannot see.

Independent checks: the velocity-level rows Ū H_α(q) have the null space of the
position-level residual's central-difference Jacobian at assembled configurations (the two
are computed by different routes: twists vs. poses), and the kept rows lose no rank
against the raw 6 − ν rows of each cut joint (Müller's selection is conservative).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_runner import run
from loop_mechanisms import (
    double_four_bar,
    geared_four_bar,
    prrr_manipulator,
    rsur_linkage,
    spherical_four_bar,
    welded_four_bar,
)
from paths import EXAMPLES

import symgen
from symgen.loops import LoopClosure, analyse_loops, kept_rows
from symgen.loops.analysis import _samples, aligned_basis
from symgen.loops.screws import lie_closure, rank
from symgen.reference.integrate import integrate
from symgen.reference.spatial import cross_motion as bracket


def _counts(analysis):
    d = analysis.as_dict()
    return (d["coordinates"], d["constraints_raw"], d["constraints_kept"],
            d["constraints_independent"], d["dof"])


def test_lie_closure_iterates_to_a_fixed_point():
    # two generic screws: span dims 2, 3, 5, 6 with nested brackets of order 0..3, so the
    # paper's "up to second order" would stop at 5 (digest of Müller 2014, remark on eq. 25)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=6), rng.normal(size=6)
    ab = bracket(a, b)
    order2 = [a, b, ab, bracket(a, ab), bracket(b, ab)]
    assert [rank(np.column_stack(order2[:k])) for k in (2, 3, 5)] == [2, 3, 5]
    assert lie_closure(np.column_stack([a, b])).shape[1] == 6
    # a planar pair closes to se(2) (3), a parallel pair of revolutes too
    z = np.array([0, 0, 1, 0, 0, 0.0])
    z_off = np.array([0, 0, 1, 1, 0, 0.0])  # rotation about z through (0, -1, 0)
    assert lie_closure(np.column_stack([z, z_off])).shape[1] == 3


def test_spherical_four_bar():
    # §7.1: 3 angles, 5 raw constraints, 2 independent, 1 DOF; Ū has orthonormal rows and
    # its row space contains every column of H_α(q) along the motion (eq. 28-29)
    analysis = analyse_loops(spherical_four_bar())
    assert _counts(analysis) == (3, 5, 2, 2, 1)
    (loop,) = analysis.loops
    assert loop.motion_dims == (3, 1) and loop.delta_dim == 3
    u = loop.selection
    assert np.allclose(u @ u.T, np.eye(2), atol=1e-12)
    closure = LoopClosure(spherical_four_bar())
    for q in _samples(closure, analysis.loops, analysis.reference, np.random.default_rng(1)):
        (h,) = closure.jacobians(q)
        assert np.linalg.norm(h - u.T @ (u @ h)) <= 1e-12 * max(1.0, np.linalg.norm(h))


def test_prrr_manipulator():
    # §7.2: 10 joint angles, 5 raw constraints per loop, Δ 5-dimensional and 4 kept per
    # loop (each chain's motion algebra se(2) × R, dim 4), 8 kept of which one is
    # redundant (rank 7), 3 DOF
    analysis = analyse_loops(prrr_manipulator())
    assert _counts(analysis) == (10, 10, 8, 7, 3)
    for loop in analysis.loops:
        assert loop.motion_dims == (4, 4) and loop.delta_dim == 5 and loop.kept == 4
    assert analysis.permanent and len(analysis.rows) == 7


@pytest.mark.parametrize(("third", "counts"), [(1.0, (4, 10, 4, 3, 1)), (1.5, (4, 10, 4, 4, 0))])
def test_double_four_bar(third, counts):
    # Fig. 3: with equal cranks one coupler on three cranks moves (1 DOF) although the two
    # loops keep 2 + 2 rows: one is redundant, which only the global rank check sees; with a
    # longer third crank it is a structure (the assembled configuration, every crank
    # vertical, is a shaky one: the rank is 3 there, 4 nearby)
    analysis = analyse_loops(double_four_bar(third))
    assert _counts(analysis) == counts
    if third == 1.0:
        assert analysis.permanent and analysis.as_dict()["residual_redundant"] == 1


def test_bricard_linkage():
    # Fig. 2b: a generic 5-joint chain closes to se(3), so the per-loop analysis keeps 5
    # rows; the rank along the motion is 4 (one redundant constraint), 1 DOF, and a
    # constant choice of 4 rows has full rank at every sampled configuration
    model = symgen.load(EXAMPLES / "bricard.yaml")
    analysis = analyse_loops(model)
    assert _counts(analysis) == (5, 5, 5, 4, 1)
    assert analysis.permanent and len(analysis.rows) == 4
    closure = LoopClosure(model)
    for q in _samples(closure, analysis.loops, analysis.reference, np.random.default_rng(2)):
        g = kept_rows(closure, analysis.loops, q)[list(analysis.rows)]
        assert np.linalg.matrix_rank(g, tol=1e-8 * np.linalg.norm(g, 2)) == 4


@pytest.mark.parametrize(("name", "dof"), [("four_bar", 1), ("slider_crank", 1), ("rssr", 2),
                                           ("andrews_squeezer", 1), ("double_pendulum", 2),
                                           ("five_bar", 2)])
def test_example_models(name, dof):
    analysis = analyse_loops(symgen.load(EXAMPLES / f"{name}.yaml"))
    assert analysis.dof == dof


def test_fixed_loop_joint():
    """A weld closes all 6 relative motions; the planar chains keep 3 of them."""
    assert _counts(analyse_loops(welded_four_bar())) == (4, 6, 3, 3, 1)


def test_universal_cut_joint():
    """RSUR: a universal joint keeps its 4 raw rows (W turns with its first angle)."""
    assert _counts(analyse_loops(rsur_linkage())) == (5, 4, 4, 4, 1)


def test_loops_with_couplings():
    """A coupled rotor adds no coordinate: the four-bar's 3 angles, 5 raw rows, 2 kept."""
    assert _counts(analyse_loops(geared_four_bar())) == (3, 5, 2, 2, 1)


@pytest.mark.parametrize("make", [spherical_four_bar, prrr_manipulator, double_four_bar,
                                  welded_four_bar])
def test_velocity_rows_match_the_position_residual(make):
    # at assembled configurations, the kept rows (twists) and the central-difference
    # Jacobian of the residual (poses) have the same null space, and the kept rows have the
    # rank of the raw 6 − ν rows
    model = make()
    analysis = analyse_loops(model)
    closure = LoopClosure(model)
    nv = closure.nm.nv
    for q in _samples(closure, analysis.loops, analysis.reference, np.random.default_rng(3))[:4]:
        g = kept_rows(closure, analysis.loops, q)
        step = 1e-6
        fd = np.column_stack([
            (closure.residual(integrate(closure.model, q, e * step, 1.0))
             - closure.residual(integrate(closure.model, q, -e * step, 1.0))) / (2 * step)
            for e in np.eye(nv)])
        raw = np.vstack(closure.jacobians(q))

        def rank_of(m):
            return np.linalg.matrix_rank(m, tol=1e-7 * max(1.0, np.linalg.norm(m, 2)))

        assert rank_of(g) == rank_of(raw) == rank_of(fd) == rank_of(np.vstack([g, fd]))


def test_info_loops_json_and_text():
    result = run("info", str(EXAMPLES / "bricard.yaml"), "--loops", "--json")
    assert result.exit_code == 0, result.output
    d = json.loads(result.output)
    assert (d["coordinates"], d["constraints_raw"], d["constraints_independent"],
            d["redundant"], d["dof"]) == (5, 5, 4, 1, 1)
    assert d["loops"][0]["constraints_kept"] == 5
    text = run("info", str(EXAMPLES / "four_bar.yaml"), "--loops")
    assert text.exit_code == 0 and "DOF 3 - 2 = 1" in text.output
    none = run("info", str(EXAMPLES / "double_pendulum.yaml"), "--loops")
    assert none.exit_code == 0 and "no loop joint" in none.output
    both = run("info", str(EXAMPLES / "four_bar.yaml"), "--loops", "--ops")
    assert both.exit_code == 2 and "--loops" in both.output


def test_aligned_basis_is_the_raw_rows_where_the_span_allows():
    """Any orthonormal basis of a span of raw rows (here rows 1 and 3 of 5, turned by a
    random rotation: seed 3) gives exactly those rows; a span that no raw rows make gives an
    orthonormal basis of that same span, with the identity on the rows it reduces to."""
    rng = np.random.default_rng(3)
    raw = np.eye(5)[[1, 3]]
    turn = np.linalg.qr(rng.normal(size=(2, 2)))[0]
    assert np.array_equal(aligned_basis(turn @ raw), raw)
    generic = np.linalg.qr(rng.normal(size=(5, 3)))[0].T  # 3 orthonormal rows
    basis = aligned_basis(generic)
    assert np.allclose(basis @ basis.T, np.eye(3), atol=1e-14)
    # the same span: each basis' rows are combinations of the other's
    assert np.allclose(basis.T @ (basis @ generic.T), generic.T, atol=1e-14)


def test_a_planar_loop_keeps_the_cut_frame_force_rows():
    """The five-bar's kept rows are two of the raw rows of its revolute cut: its K has one
    ±1 per row and zeros elsewhere (the multipliers are the forces along the cut frame's
    axes)."""
    (loop,) = analyse_loops(symgen.load(EXAMPLES / "five_bar.yaml")).loops
    k = loop.constraint_rows
    assert k.shape == (2, 6) and set(np.abs(k).ravel()) == {0.0, 1.0}
    assert np.array_equal(np.count_nonzero(k, axis=1), [1, 1])

"""The compiled kernels' arguments are the same whatever the model (issue 29, "API friction"):

- ``params`` defaults to the declared values in every compiled kernel that takes it: tree,
  closed-loop and natural-coordinate kernels alike (a natural kernel set's ``params`` are the
  parameters only its force elements use, so its defaults are not the model's whole list;
  they used to be missing: ``nc_forces() is missing the argument 'params'``);
- a declared input with no element for the model (``tau`` of a natural-coordinate
  mechanism without a 1-DOF joint, such as the spinning top on its spherical joint) keeps
  its place among the arguments: the wrappers accept it empty or left out and check it,
  and the C functions leave it out (C99 has no zero-length arrays). Generic code calls
  ``lib.nc_step(q, qd, qdd, lam, np.zeros(len(nm.actuated)))`` on every model.

Models: a slider-crank with a spring whose stiffness is a runtime parameter ``k`` (and a
piston mass ``m_piston`` in the inertia), the spinning top, and the top with a
parametrised spring (``tau`` empty before ``params``).
"""

from __future__ import annotations

import inspect
from functools import cache

import numpy as np
import pytest
from model_files import write
from paths import EXAMPLES

import symgen
from symgen.formulations.natural.kernels import NaturalOptions

#: The slider-crank of examples/models/slider_crank.yaml with a spring from a ground point
#: above the guide to the piston, stretched at the zero configuration (0.218 m > 0.1 m).
SPRUNG = (EXAMPLES / "slider_crank.yaml").read_text().replace(
    "  m_piston: 0.3 ", "  k: 40.0\n  m_piston: 0.3 ") + """
forces:
  - {name: pull, type: spring, body_a: ground, point_a: [0.0, 0.1], body_b: slider,
     point_b: [0.0, 0.0], stiffness: $k, damping: 0.5, rest_length: 0.1}
"""

#: The spinning top with a spring whose stiffness is a runtime parameter.
SPRUNG_TOP = (EXAMPLES / "spinning_top.yaml").read_text() + """
parameters:
  k: 20.0
forces:
  - {name: tether, type: spring, body_a: ground, point_a: [0.1, 0.0, 0.2], body_b: top,
     point_b: [0.0, 0.0, 0.2], stiffness: $k, rest_length: 0.05}
"""

NATURAL_WITH_TAU = ("nc_forces", "nc_accelerations", "nc_step", "nc_step_rk4")


@pytest.fixture(scope="module")
def sprung(tmp_path_factory) -> symgen.Model:
    return symgen.load(write(tmp_path_factory.mktemp("sprung"), SPRUNG))


def _natural(model: symgen.Model, kernels: tuple[str, ...] | None = None):
    ks = symgen.generate(model, kernels, options=NaturalOptions())
    return ks.context.nm, ks, symgen.compile_kernels(ks)


def test_params_default_to_the_declared_values_in_natural_kernels(sprung):
    nm, ks, lib = _natural(sprung)
    q, qd, tau = nm.q0, np.full(nm.n, 0.1), np.zeros(len(nm.actuated))
    lib.nc_forces(q, qd, tau)  # was: nc_forces() is missing the argument 'params'
    assert sprung.parameter_names == ["k", "m_piston"]
    assert nm.force_parameters == ["k"]  # m_piston is in the inertia: baked in
    assert ks.input_defaults == {"params": (40.0,)}
    takes = [name for name, f in lib.functions.items()
             if any(s.name == "params" for s in f.inputs)]
    assert {"nc_forces", "nc_accelerations", "nc_step"} <= set(takes)
    for name in takes:
        default = inspect.signature(lib[name]).parameters["params"].default
        np.testing.assert_array_equal(default, [40.0])
    stretched = lib.nc_forces(q, qd, tau, [40.0])
    np.testing.assert_array_equal(lib.nc_forces(q, qd, tau), stretched)
    assert np.max(np.abs(lib.nc_forces(q, qd, tau, [80.0]) - stretched)) > 1.0
    np.testing.assert_allclose(stretched, nm.generalized_forces(q, qd, tau), atol=1e-12)
    for got, given in zip(lib.nc_accelerations(q, qd, tau),
                          lib.nc_accelerations(q, qd, tau, [40.0]), strict=True):
        np.testing.assert_array_equal(got, given)
    np.testing.assert_allclose(ks.evaluate("nc_forces", q=q, qd=qd, tau=tau)["Q"], stretched,
                               rtol=1e-14, atol=1e-14)


def test_params_default_to_the_declared_values_in_tree_and_loop_kernels(sprung):
    with pytest.warns(UserWarning, match="leave out the force elements"):
        ks = symgen.generate(sprung, ["inverse_dynamics", "constrained_forward_dynamics",
                                      "loop_constraints"])
    lib = symgen.compile_kernels(ks)
    assert ks.input_defaults == {"params": (40.0, 0.3)}
    for function in lib.functions.values():
        default = inspect.signature(function).parameters["params"].default
        np.testing.assert_array_equal(default, [40.0, 0.3])
    rng = np.random.default_rng(0)
    q, v, tau = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    a, lam = lib.constrained_forward_dynamics(q, v, tau)
    a2, lam2 = lib.constrained_forward_dynamics(q, v, tau, [40.0, 0.3])
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(lam, lam2)
    a3, _ = lib.constrained_forward_dynamics(q, v, tau, [80.0, 0.3])  # the spring's k
    assert np.max(np.abs(a3 - a)) > 1e-3
    np.testing.assert_array_equal(lib.inverse_dynamics(q, v, tau),
                                  lib.inverse_dynamics(q, v, tau, [40.0, 0.3]))
    np.testing.assert_array_equal(lib.loop_constraints(q),
                                  lib.loop_constraints(q, params=[40.0, 0.3]))


@cache
def _top():
    return _natural(symgen.load(EXAMPLES / "spinning_top.yaml"), NATURAL_WITH_TAU)


def test_a_mechanism_without_one_dof_joints_takes_an_empty_tau():
    nm, ks, lib = _top()
    assert nm.actuated == []
    assert set(ks.empty_inputs) == set(NATURAL_WITH_TAU)
    for name in NATURAL_WITH_TAU:  # the declared order, tau included, as for every model
        f = lib[name]
        assert [s.name for s in f.inputs] == list(symgen.registry.get(name).inputs)
        assert inspect.signature(f).parameters["tau"].default.shape == (0,)
    q, qd = nm.q0, np.zeros(nm.n)
    qdd, lam = lib.nc_accelerations(q, qd)
    for tau in (np.zeros(0), [], np.zeros((0,))):
        for got, want in zip(lib.nc_accelerations(q, qd, tau), (qdd, lam), strict=True):
            np.testing.assert_array_equal(got, want)
        for got, want in zip(lib.nc_accelerations(q, qd, tau=tau), (qdd, lam), strict=True):
            np.testing.assert_array_equal(got, want)
    step = lib.nc_step(q, qd, qdd, lam)
    for got, want in zip(lib.nc_step(q, qd, qdd, lam, np.zeros(0)), step, strict=True):
        np.testing.assert_array_equal(got, want)
    batch = lib.nc_step(np.stack([q, q]), qd, qdd, lam, np.zeros((2, 0)))
    np.testing.assert_array_equal(batch[0][1], step[0])
    with pytest.raises(ValueError, match=r"nc_step: tau must be empty .*got shape \(1,\)"):
        lib.nc_step(q, qd, qdd, lam, [1.0])
    with pytest.raises(ValueError, match="tau must be empty"):
        lib.nc_forces(q, qd, np.zeros((2, 3)))
    np.testing.assert_array_equal(ks.evaluate("nc_forces", q=q, qd=qd, tau=[])["Q"],
                                  ks.evaluate("nc_forces", q=q, qd=qd)["Q"])
    with pytest.raises(ValueError, match="no element for this model"):
        ks.evaluate("nc_forces", q=q, qd=qd, tau=[1.0])
    # trailing: single calls still go straight to C
    assert inspect.isbuiltin(lib["nc_step"]._fast)


def test_an_empty_tau_is_no_argument_of_the_c_functions():
    _, ks, _ = _top()
    header = symgen.emit_c(ks).header
    prototypes = [line for line in header.splitlines()
                  if line.startswith("void ") and "_nc_" in line]
    assert prototypes and not any("tau" in line for line in prototypes)
    assert "Inputs without elements for this model (tau)" in header


def test_generic_code_calls_every_model_alike():
    """One call shape, τ of length len(nm.actuated), for a four-bar and for the top."""
    four_bar = _natural(symgen.load(EXAMPLES / "four_bar.yaml"), NATURAL_WITH_TAU)
    for nm, _, lib in (four_bar, _top()):
        q, qd = nm.q0, np.zeros(nm.n)
        tau = np.zeros(len(nm.actuated))
        qdd, lam = lib.nc_accelerations(q, qd, tau)
        q1, qd1, qdd1, lam1 = lib.nc_step(q, qd, qdd, lam, tau)
        assert np.all(np.isfinite(q1)) and np.max(np.abs(nm.phi(q1))) < 1e-9


def test_an_empty_tau_before_params(tmp_path):
    """tau (empty) before params: positional arguments are read in the declared order,
    so the fast path, whose C function has no tau, is not used."""
    nm, ks, lib = _natural(symgen.load(write(tmp_path, SPRUNG_TOP)), ("nc_forces",))
    f = lib["nc_forces"]
    assert [s.name for s in f.inputs] == ["q", "qd", "tau", "params"]
    q, qd = nm.q0, np.zeros(nm.n)
    base = f(q, qd)
    np.testing.assert_array_equal(f(q, qd, [], [20.0]), base)
    np.testing.assert_array_equal(f(q, qd, params=[20.0]), base)
    assert np.max(np.abs(f(q, qd, [], [40.0]) - base)) > 0.1
    with pytest.raises(ValueError, match="tau must be empty"):
        f(q, qd, np.array([20.0]))  # params given in tau's place
    assert not inspect.isbuiltin(f._fast)

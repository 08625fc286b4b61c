"""The kernel registry: every kernel declared once and consistently, and each declared
reference agreeing with its derivation (for the tree kernels the compiled checks of
tests/peers and tests/kernels cover this on random models; here the natural-coordinate
kernels, whose references are the numeric natural model and solvers of García de Jalón &
Bayo 1994)."""

from __future__ import annotations

import numpy as np
import pytest
from paths import EXAMPLES

import symgen
from symgen import registry
from symgen.apps.verify import reference_values
from symgen.apps.verify.pinocchio_queries import PINOCCHIO
from symgen.apps.verify.reference_queries import NO_REFERENCE, REFERENCES
from symgen.errors import SymgenError
from symgen.formulations.natural.kernels import independent_joints
from symgen.ir.printer import evaluate
from symgen.kernel_set import KernelSet
from symgen.natural import NaturalOptions, natural_kernels
from symgen.reference.natural import consistent_velocities


def test_every_kernel_is_declared_once_with_a_formulation_and_outputs():
    kernels = registry.all_kernels()
    assert kernels, "no kernel registered"
    for name, kernel in kernels.items():
        assert kernel.name == name
        registry.formulation(kernel.formulation)  # raises when unknown
        assert kernel.outputs and len({o.name for o in kernel.outputs}) == len(kernel.outputs)
        assert kernel.summary
        for variant in kernel.variants:
            assert registry.get(variant).formulation == kernel.formulation


def test_every_kernel_has_a_reference_or_a_reason_for_none():
    """verify's adapters name registered kernels only; every kernel has a numpy reference
    or is declared without one, with the reason and where it is tested instead (a tree
    kernel's documentation says so too: "No reference in verify"); Pinocchio's counterparts
    are of kernels with a reference."""
    kernels = registry.all_kernels()
    assert set(REFERENCES) <= set(kernels), set(REFERENCES) - set(kernels)
    assert set(NO_REFERENCE) <= set(kernels), set(NO_REFERENCE) - set(kernels)
    assert set(PINOCCHIO) <= set(REFERENCES), set(PINOCCHIO) - set(REFERENCES)
    assert not set(REFERENCES) & set(NO_REFERENCE)
    missing = [n for n in kernels if n not in REFERENCES and n not in NO_REFERENCE]
    assert not missing, f"kernels with neither a reference nor a reason for none: {missing}"
    for name, reason in NO_REFERENCE.items():
        assert "tests/" in reason, name
    for name, kernel in registry.kernels_of("tree").items():
        if name in NO_REFERENCE:
            assert kernel.setup and kernel.doc.startswith("No reference in verify"), name


def test_unknown_and_mixed_kernels_are_one_line_errors():
    model = symgen.load(EXAMPLES / "four_bar.yaml")
    with pytest.raises(SymgenError, match="unknown kernel 'no_such_kernel'"):
        symgen.generate(model, ["no_such_kernel"])
    with pytest.raises(SymgenError, match="different formulations"):
        symgen.generate(model, ["mass_matrix", "nc_step"])


@pytest.mark.parametrize("mechanism", ["four_bar", "slider_crank"])
def test_natural_references_agree_with_the_derived_programs(mechanism):
    """At an assembled state with consistent velocities and random torques (seed 5): the
    programs evaluated in Python equal the registered references. Tolerances: 1e-12 for the
    closed-form kernels (the same expressions, rounded differently); 1e-8 for the
    accelerations and the step: an unrolled LDLᵀ against LAPACK differs by ε·cond per solve,
    and the step's quasi-tangent (4/h²)M + βΦ_qᵀΦ_q has cond up to 5e5 on these mechanisms
    (slider-crank, h = 1 ms), 2 iterations: 2.2e-16·5e5·2 ≈ 2e-10, with a margin of 50."""
    nm, ks = natural_kernels(symgen.load(EXAMPLES / f"{mechanism}.yaml"),
                             NaturalOptions(step=1e-3))
    rng = np.random.default_rng(5)
    q = nm.q0
    qd = consistent_velocities(nm, q, {0: 0.8})
    state = {"q": q, "qd": qd, "tau": rng.normal(size=len(nm.actuated)), "lam": np.zeros(nm.m),
             "zd": rng.normal(size=len(independent_joints(nm)))}
    state["qdd"] = ks.evaluate("nc_accelerations",
                               **_inputs(ks, "nc_accelerations", state))["qdd"]
    checked = 0
    for name in ks.programs:
        if ks.kernel_of[name] not in REFERENCES:
            continue
        got = ks.evaluate(name, **_inputs(ks, name, state))
        expected = reference_values(ks, name, state)
        tolerance = 1e-8 if name in ("nc_accelerations", "nc_step") else 1e-12
        for output, value in expected.items():
            if output not in got:  # what the comparison needs besides (system, roundoff)
                continue
            scale = max(float(np.max(np.abs(value))), 1.0)
            bound = tolerance * scale
            if output == "lam_next":
                bound += _multiplier_roundoff(nm, q)
            assert np.max(np.abs(got[output] - value)) <= bound, (name, output)
        checked += 1
    assert checked >= 6


def _multiplier_roundoff(nm, q, iterations: int = 2) -> float:
    """The step's multipliers accumulate λ* += α_i Φ_i per iteration; Φ_i (quadratic, its
    terms of size ‖∇Φ_i‖²) is computed to a few ε·‖∇Φ_i‖², and two correct implementations
    differ by that times α_i (1e12-1e14 with the model-derived penalty): bound
    10 ε Σ_iterations max_i α_i ‖∇Φ_i‖²."""
    alpha = NaturalOptions(step=1e-3).penalty(nm).alpha
    rows = np.sum(nm.phi_q(q) ** 2, axis=1)
    return 10 * np.finfo(float).eps * iterations * float(np.max(alpha * rows))


def _inputs(ks, name: str, state: dict) -> dict:
    return {s.name: state[s.name] for s in ks[name].inputs}


def test_a_tree_kernel_may_have_several_outputs():
    """A kernel declared with two outputs (M and g in one program, sharing the tree) is
    derived through the registry's machinery and equals the reference (seed 3; 1e-12:
    the same operations as the single-output kernels, rounded differently)."""
    from random_models import random_model, random_state

    from symgen import reference as ref
    from symgen.formulations import recursions
    from symgen.formulations.tree.context import TreeContext, TreeTarget
    from symgen.formulations.tree.derivation import tree_program
    from symgen.registry import Kernel, Output

    kernel = Kernel(
        "mass_and_gravity", "tree", "M(q) and g(q)", ("q",),
        (Output("M", lambda c: (c.model.nv, c.model.nv), "mass matrix"),
         Output("g", lambda c: (c.model.nv,), "gravity forces")),
        tree_program(lambda d: {
            "M": [x for row in recursions.mass_matrix(d.b, d.tree) for x in row],
            "g": recursions.inverse_dynamics(d.b, d.tree, None, None)}))
    model = random_model(0)
    program = kernel.derive(TreeContext(model), TreeTarget(kernel.name), kernel)
    assert [s.name for s in program.output_specs] == ["M", "g"]
    q = random_state(model, np.random.default_rng(3))[0]
    got = evaluate(program, q=q)
    np.testing.assert_allclose(got["M"], ref.mass_matrix(model, q), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["g"], ref.gravity_forces(model, q), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, where", [("compile", "symgen.compile_kernels"),
                                         ("write", "symgen.write_c"),
                                         ("c_source", "symgen.emit_c")])
def test_a_kernel_set_names_where_its_former_methods_went(name, where):
    """The kernel set is data: its C and its compiled module come from functions, and the
    former methods say which."""
    ks = KernelSet(symgen.load(EXAMPLES / "double_pendulum.yaml"), symgen.Options())
    with pytest.raises(AttributeError, match=rf"^KernelSet\.{name} is now {where}\(ks"):
        getattr(ks, name)

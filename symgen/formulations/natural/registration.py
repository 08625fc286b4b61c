"""The natural-coordinate formulation's kernels (García de Jalón & Bayo 1994), registered in
:mod:`symgen.registry`: inputs, outputs and derivation of each, and the
formulation :func:`symgen.generate.generate` reaches with :class:`NaturalOptions`
(``generate(model, options=NaturalOptions())``, or natural kernel names).

The derivations are the program builders of :mod:`.kernels`; the references (verify's,
:mod:`symgen.apps.verify.reference_queries`) are the
numeric model (:class:`.model.NaturalModel`) and the solvers of
:mod:`symgen.reference.natural`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from symgen.formulations.natural import energy as ne
from symgen.formulations.natural import kernels as nk
from symgen.formulations.natural import step as ns
from symgen.formulations.natural.model import NaturalModel
from symgen.ir.program import Program
from symgen.model import Model
from symgen.registry import Kernel, Output, register, register_formulation

FORMULATION = "natural"
#: Verification bound of ``nc_step`` (see its ``doc``): ε·cond ≈ 2.2e-16·1e8 per solve,
#: times the two default iterations, with a factor 20 of margin.
STEP_TOLERANCE = 1e-6


@dataclass(frozen=True)
class NaturalContext:
    """The natural-coordinate model of one model, the generation options, and the
    constraint programs once derived (:func:`.kernels.constraint_programs` builds four
    kernels at once)."""

    model: Model
    nm: NaturalModel
    options: nk.NaturalOptions
    derived: dict[str, Program] = field(default_factory=dict, compare=False, repr=False)


class NaturalFormulation:
    """Natural coordinates for :func:`symgen.generate.generate`; every kernel gives one
    program (``nc_joint_values`` and ``nc_velocities`` none when the mechanism has no
    1-DOF joint to read)."""

    name = FORMULATION

    def default_options(self) -> nk.NaturalOptions:
        return nk.NaturalOptions()

    def check_options(self, options: object) -> None:
        if not isinstance(options, nk.NaturalOptions):
            from symgen.errors import SymgenError

            raise SymgenError("natural-coordinate kernels take NaturalOptions, got "
                              f"{type(options).__name__}")

    def context(self, model: Model, options: nk.NaturalOptions) -> NaturalContext:
        return NaturalContext(model.resolve(), nk.natural_model(model), options)

    def frames(self, kernel: Kernel, context: NaturalContext) -> list[str | None]:
        probe = _OPTIONAL.get(kernel.name)
        if probe is None:
            return [None]
        if kernel.name not in context.derived:  # derived once: the probe is the program
            context.derived[kernel.name] = probe(context.nm)
        return [] if context.derived[kernel.name] is None else [None]

    def candidates(self, kernel: Kernel, context: NaturalContext, name: str,
                   frame: str | None, options: object) -> list[tuple[str, Program]]:
        return [("", kernel.derive(context, name, kernel))]

    def finish(self, kernel_set, context: NaturalContext) -> None:
        from symgen.cnames import default_prefix

        nm = context.nm
        kernel_set.model = context.model
        kernel_set.tree_layout = False
        if nm.force_parameters:  # params: the force elements' own runtime parameters
            kernel_set.input_defaults["params"] = tuple(nm.force_parameter_defaults)
        kernel_set.sizes = natural_sizes(nm, list(kernel_set.programs.values()))
        kernel_set.prefix = f"{default_prefix(context.model.name)}_natural"
        kernel_set.notes = [*nk.natural_notes(nm), "Bodies (rows of poses): "
                            + ", ".join(nm.modeller.model.body_names)]


register_formulation(NaturalFormulation())


def natural_sizes(nm: NaturalModel, programs: Sequence[Program]) -> list[tuple[str, int, str]]:
    """The size macros of a natural-coordinate header (:attr:`KernelSet.sizes`): each
    array length the kernels in ``programs`` use."""
    by_name = {p.name: p for p in programs}
    sizes = [("N", nm.n, "natural coordinates (length of q, qd, qdd)"),
             ("M", nm.m, "constraints (length of phi, lam; rows of Phi_q)")]
    if nm.dof is not None:
        sizes.append(("DOF", nm.dof, "degrees of freedom of the mechanism"))
    if nm.actuated:
        sizes.append(("NJOINTS", len(nm.actuated),
                      "1-DOF joints (length of tau, values, rates)"))
    if "nc_velocities" in by_name:
        zd = next(s for s in by_name["nc_velocities"].inputs if s.name == "zd")
        sizes.append(("NINDEPENDENT", zd.size, "independent joints (length of zd)"))
    if "nc_body_poses" in by_name:
        sizes.append(("NBODIES", nm.modeller.model.nbodies, "bodies (rows of poses)"))
    return sizes

_OPTIONAL: dict[str, Callable[[NaturalModel], Program | None]] = {
    "nc_joint_values": nk.joint_values_program,
    "nc_velocities": nk.velocities_program,
}


def _derive(build: Callable[[NaturalContext], Program | None]
            ) -> Callable[[NaturalContext, str, Kernel], Program]:
    def derive(context: NaturalContext, name: str, kernel: Kernel) -> Program:
        program = build(context)
        assert program is not None and program.name == name
        return program

    return derive


def _constraint(name: str) -> Callable[[NaturalContext], Program]:
    def build(context: NaturalContext) -> Program:
        if name not in context.derived:
            context.derived.update({p.name: p for p in nk.constraint_programs(context.nm)})
        return context.derived[name]

    return build


def _n(c: NaturalContext) -> tuple[int, ...]:
    return (c.nm.n,)


def _m(c: NaturalContext) -> tuple[int, ...]:
    return (c.nm.m,)


def _joints(c: NaturalContext) -> tuple[int, ...]:
    return (len(c.nm.joint_coordinates),)


def _kernel(name: str, summary: str, inputs: tuple[str, ...], outputs: tuple[Output, ...],
            build: Callable[[NaturalContext], Program | None],
            default: bool = True,
            **more: bool | float | str | tuple[str, ...] | None) -> None:
    register(Kernel(name, FORMULATION, summary, inputs, outputs, _derive(build),
                    uses_tree=False, default=default, program_docs=True,
                    **more))


_kernel("nc_mass_matrix", "constant mass matrix M of the natural coordinates", (),
        (Output("M", lambda c: (c.nm.n, c.nm.n), "mass matrix (n × n, row-major), constant"),),
        lambda c: nk.mass_matrix_program(c.nm))
_kernel("nc_constraints", "constraint vector Φ(q)", ("q",),
        (Output("phi", _m, "constraint residuals"),), _constraint("nc_constraints"))
_kernel("nc_jacobian", "constraint Jacobian Φ_q(q), m × n, row-major", ("q",),
        (Output("Phi_q", lambda c: (c.nm.m, c.nm.n), "constraint Jacobian"),),
        _constraint("nc_jacobian"))
_kernel("nc_jacobian_dot_qdot", "Φ̇_q q̇", ("q", "qd"),
        (Output("phi_q_dot_qd", _m, "dPhi_q/dt * qdot"),), _constraint("nc_jacobian_dot_qdot"))
_kernel("nc_forces", "generalized forces Q (gravity, springs, joint forces)",
        ("q", "qd", "tau"), (Output("Q", _n, "generalized forces"),),
        _constraint("nc_forces"))
_kernel("nc_accelerations", "accelerations and multipliers (Lagrange + Baumgarte)",
        ("q", "qd", "tau"),
        (Output("qdd", _n, "natural accelerations"), Output("lam", _m, "Lagrange multipliers")),
        lambda c: nk.accelerations_program(c.nm, c.options), comparison="system",
        doc="verify compares q̈ and λ by their backward error in [[M, Φ_qᵀ], [Φ_q, 0]]: with "
        "redundant constraints λ is not unique (the kernel sets a dependent constraint's "
        "multiplier to 0, the reference takes the least-norm set) while q̈ and Φ_qᵀλ are.")
_kernel("nc_step", "one augmented-Lagrangian trapezoidal step", ("q", "qd", "qdd", "lam", "tau"),
        (Output("q_next", _n, "natural coordinates at t + h"),
         Output("qd_next", _n, "natural velocities at t + h (projected)"),
         Output("qdd_next", _n, "natural accelerations at t + h (projected)"),
         Output("lam_next", _m, "multipliers to pass to the next step")),
        lambda c: ns.step_program(c.nm, c.options),
        tolerance=STEP_TOLERANCE, float_check=False,
        doc="The step solves with the quasi-tangent (4/h²)M + Φ_qᵀBΦ_q (B ≈ the penalty "
        "matrix), whose condition relative to (4/h²)M the default penalty caps at 1e9; two "
        "correct implementations differ by up to ε·κ per solve (double), and their "
        "multipliers by up to ε·max_i α_i·Σ|terms of Φ_i| (each update adds α times the "
        "rounding of Φ, with α up to 1e15; the filter spreads it over every multiplier), "
        "which verify allows 16 times over; a float build loses every digit.")
_kernel("nc_step_rk4", "one index-1 Runge-Kutta 4 step (augmented-Lagrangian accelerations) "
        "with projections", ("q", "qd", "qdd", "lam", "dt", "tau"),
        (Output("q_next", _n, "natural coordinates at t + h (projected)"),
         Output("qd_next", _n, "natural velocities at t + h (projected)"),
         Output("qdd_next", _n, "natural accelerations at t + h (the next step's qdd)"),
         Output("lam_next", _m, "multipliers at t + h (the next step's lam)")),
        lambda c: ns.rk4_step_program(c.nm, c.options), float_check=False, default=False,
        doc="Fourth order: the classical Runge-Kutta method on the index-1 equations, each "
        "stage's accelerations by the augmented-Lagrangian iteration (García de Jalón & "
        "Bayo 1994, eq. 5.48-5.51; M + Φ_qᵀAΦ_q positive definite at singular positions and "
        "with redundant constraints) started from the previous stage's multipliers, then "
        "the mass-orthogonal projections of q onto Φ = 0 and of q̇ onto Φ_q q̇ = 0 by the "
        "same solves (Bayo & Ledesma 1996), and q̈, λ at the new state. qdd is the first "
        "stage and lam the multipliers it starts from: pass each step's qdd_next and "
        "lam_next to the next (start: nc_accelerations at a consistent state, or zeros for "
        "lam). The step dt is an input (simulate() halves and doubles it by step "
        "doubling), before tau, which is empty for a mechanism without 1-DOF joints. "
        "Explicit (h·ω ≲ 2.8 for the stiffest spring); the trapezoidal nc_step "
        "suits stiff models. Not in the default set (name it). verify compares λ by "
        "its force Φ_qᵀλ (redundant constraints: the multipliers are not unique).")
_kernel("nc_assemble", "assembly: Newton-Raphson on Φ(q) = 0 from a guess", ("q",),
        (Output("q_assembled", _n, "assembled natural coordinates"),),
        lambda c: nk.assemble_program(c.nm, c.options), setup=True)
_kernel("nc_body_poses", "world pose [R | p] (3×4) of every body", ("q",),
        (Output("poses", lambda c: (c.nm.modeller.model.nbodies, 3, 4),
                "world pose of each body, model order"),),
        lambda c: nk.body_poses_program(c.nm))
_kernel("nc_energy", "[kinetic, potential, elements] energy, J", ("q", "qd"),
        (Output("energy", lambda c: (3,), "[kinetic, potential (gravity), elements (the "
                "force elements' potential)] energy, J"),),
        lambda c: ne.energy_program(c.nm),
        doc="elements: ½k(L − L₀)² per point spring, ½k(θ − rest)² per joint spring, −F θ "
        "per actuator, θ as nc_forces reads it; dampers dissipate and have none. No "
        "reference in verify: tests/kernels/test_element_energy.py compares it with the "
        "joint-coordinate references at states the natural modeller converts.")
_kernel("nc_joint_values", "joint angles/displacements and rates", ("q", "qd", "near"),
        (Output("values", _joints, "joint angles / displacements, angles within pi of near"),
         Output("rates", _joints, "their rates")),
        lambda c: c.derived.get("nc_joint_values") or nk.joint_values_program(c.nm))
_kernel("nc_velocities", "consistent velocities from the independent joint rates", ("q", "zd"),
        (Output("qd", _n, "natural velocities"),),
        lambda c: c.derived.get("nc_velocities") or nk.velocities_program(c.nm),
        comparison="system")


__all__ = ["FORMULATION", "NaturalContext", "NaturalFormulation",
           "natural_sizes"]

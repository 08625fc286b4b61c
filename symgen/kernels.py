"""The kernel catalogue: every kernel's name, inputs, outputs and documentation, shared by
all formulations (design.md §1). Shapes depend on the model: ``nq``, ``nv``, the number of
bodies and parameters, and the frames a per-frame kernel is generated for."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Model

#: Inputs every kernel may take, with their documentation (shapes in :func:`input_shape`).
INPUT_DOCS = {
    "q": "joint configuration (nq): angles in rad, displacements in m, unit quaternions "
    "(x, y, z, w) for spherical and free joints",
    "v": "joint velocity (nv): rates, body-frame angular (and linear) velocity of spherical "
    "and free joints",
    "a": "joint acceleration (nv)",
    "tau": "joint forces and torques (nv), N and N·m",
    "f_ext": "external spatial force on each moving body (nbodies × 6): [moment; force] in "
    "the body frame, moment about the body-frame origin",
    "dt": "time step (1), s",
    "params": "runtime parameters, in the model's declaration order",
}


@dataclass(frozen=True)
class KernelSpec:
    """A kernel of the catalogue: its state inputs (``params`` and ``f_ext`` are added when
    the model or the options call for them), its output and a one-line summary."""

    name: str
    inputs: tuple[str, ...]
    output: str
    summary: str
    per_frame: bool = False
    takes_forces: bool = False
    uses_tree: bool = True


KERNELS: dict[str, KernelSpec] = {
    k.name: k
    for k in (
        KernelSpec(
            "forward_kinematics", ("q",), "poses",
            "world pose [R | p] (3×4, row-major) of every body and named frame",
        ),
        KernelSpec(
            "frame_jacobian", ("q",), "J",
            "6×nv Jacobian [angular; linear] of a frame", per_frame=True,
        ),
        KernelSpec(
            "frame_jacobian_dot_v", ("q", "v"), "Jdot_v",
            "J̇(q, v)·v: classical acceleration [ω̇; p̈] of a frame at zero joint acceleration",
            per_frame=True,
        ),
        KernelSpec(
            "inverse_dynamics", ("q", "v", "a"), "tau",
            "joint forces M(q) a + C(q, v) v + g(q) − Σ Jᵀ f_ext (Newton-Euler)",
            takes_forces=True,
        ),
        KernelSpec("mass_matrix", ("q",), "M", "joint-space mass matrix M(q), nv×nv"),
        KernelSpec("bias_forces", ("q", "v"), "tau", "C(q, v) v + g(q)"),
        KernelSpec("gravity_forces", ("q",), "tau", "g(q)"),
        KernelSpec(
            "forward_dynamics", ("q", "v", "tau"), "a",
            "joint accelerations M⁻¹(τ − C v − g) by the cheaper of the two methods",
            takes_forces=True,
        ),
        KernelSpec(
            "forward_dynamics_aba", ("q", "v", "tau"), "a",
            "forward dynamics by the O(N) articulated-body (innovations) recursion",
            takes_forces=True,
        ),
        KernelSpec(
            "forward_dynamics_ltdl", ("q", "v", "tau"), "a",
            "forward dynamics by the mass matrix and a sparse LᵀDL solve",
            takes_forces=True,
        ),
        KernelSpec(
            "mass_matrix_inverse", ("q",), "Minv",
            "M(q)⁻¹ from the innovations factorization, without inverting M",
        ),
        KernelSpec("energy", ("q", "v"), "energy", "[kinetic, potential] energy, J"),
        KernelSpec(
            "integrate", ("q", "v", "dt"), "q_next", "q ⊕ v·dt on the joint manifolds",
            uses_tree=False,
        ),
    )
}

#: Kernels :func:`symgen.generate` builds when none are named (the two forward-dynamics
#: variants are available by name; ``forward_dynamics`` is the cheaper of them).
DEFAULT_KERNELS = tuple(k for k in KERNELS if k not in ("forward_dynamics_aba",
                                                         "forward_dynamics_ltdl"))


def input_shape(model: Model, name: str) -> tuple[int, ...]:
    """Shape of input ``name`` for ``model``."""
    shapes = {
        "q": (model.nq,),
        "v": (model.nv,),
        "a": (model.nv,),
        "tau": (model.nv,),
        "f_ext": (model.nbodies, 6),
        "dt": (1,),
        "params": (len(model.parameters),),
    }
    return shapes[name]


def output_shape(model: Model, kernel: str, n_poses: int = 0) -> tuple[int, ...]:
    """Shape of the output of ``kernel`` (``n_poses``: entries of forward_kinematics)."""
    nv = model.nv
    return {
        "forward_kinematics": (n_poses, 3, 4),
        "frame_jacobian": (6, nv),
        "frame_jacobian_dot_v": (6,),
        "inverse_dynamics": (nv,),
        "mass_matrix": (nv, nv),
        "bias_forces": (nv,),
        "gravity_forces": (nv,),
        "forward_dynamics": (nv,),
        "forward_dynamics_aba": (nv,),
        "forward_dynamics_ltdl": (nv,),
        "mass_matrix_inverse": (nv, nv),
        "energy": (2,),
        "integrate": (model.nq,),
    }[kernel]


__all__ = ["DEFAULT_KERNELS", "INPUT_DOCS", "KERNELS", "KernelSpec", "input_shape",
           "output_shape"]

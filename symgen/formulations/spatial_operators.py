"""Spatial-operator-algebra kernels for tree-topology models (Jain 2009, 2012): the entry
point that turns a catalogue kernel into a :class:`~symgen.program.Program`.

Each kernel is derived on the symbolic hinge tree (:mod:`.tree`) by the recursions of
:mod:`.recursions` (Newton-Euler, composite body), :mod:`.articulated` (innovations forward
dynamics, operator 𝓜⁻¹), :mod:`.ltdl` (sparse LᵀDL), :mod:`.kinematics` and
:mod:`.integrate`.
"""

from __future__ import annotations

from ..kernels import INPUT_DOCS, KERNELS, input_shape, output_shape
from ..model import Model, SymgenError
from ..program import Program, ProgramBuilder
from . import articulated, kinematics, ltdl, recursions
from .integrate import integrate
from .tree import SNAP_TOLERANCE, build_tree


def build_kernel(
    model: Model,
    kernel: str,
    *,
    program_name: str | None = None,
    partition: bool = False,
    frame: str | None = None,
    reference: str = "local_world_aligned",
    external_forces: bool = False,
    pose_names: tuple[str, ...] = (),
    snap: float = SNAP_TOLERANCE,
) -> Program:
    """The unoptimised program of catalogue kernel ``kernel`` for ``model``.

    ``frame`` names the frame of a per-frame kernel; ``pose_names`` the bodies and frames
    forward_kinematics reports; ``external_forces`` adds the ``f_ext`` input to the kernels
    that take it; ``partition`` splits multi-DOF joints into 1-DOF sub-hinges.
    """
    spec = KERNELS[kernel]
    b = ProgramBuilder(program_name or kernel, spec.summary)
    inputs = list(spec.inputs)
    if external_forces and spec.takes_forces:
        inputs.append("f_ext")
    if model.parameters:
        inputs.append("params")
    sym = {name: b.input(name, input_shape(model, name), INPUT_DOCS[name]) for name in inputs}
    q, v = sym["q"], sym.get("v")
    f_ext = sym.get("f_ext")
    if kernel == "integrate":
        values = integrate(b, model, q, v, sym["dt"][0])
        b.output(spec.output, output_shape(model, kernel), values)
        return b.build()
    tree = build_tree(model, b, q, sym.get("params", ()), partition=partition, snap=snap)
    shape = output_shape(model, kernel, len(pose_names))
    if kernel == "forward_kinematics":
        values = kinematics.forward_kinematics(b, tree, pose_names)
    elif kernel == "frame_jacobian":
        values = _flat(kinematics.frame_jacobian(b, tree, _need(frame), reference))
    elif kernel == "frame_jacobian_dot_v":
        values = kinematics.frame_jacobian_dot_v(b, tree, v, _need(frame), reference)
    elif kernel == "inverse_dynamics":
        values = recursions.inverse_dynamics(b, tree, v, sym["a"], f_ext)
    elif kernel == "bias_forces":
        values = recursions.inverse_dynamics(b, tree, v, None)
    elif kernel == "gravity_forces":
        values = recursions.inverse_dynamics(b, tree, None, None)
    elif kernel == "mass_matrix":
        values = _flat(recursions.mass_matrix(b, tree))
    elif kernel in ("forward_dynamics", "forward_dynamics_aba"):
        values = articulated.forward_dynamics(b, tree, v, sym["tau"], f_ext)
    elif kernel == "forward_dynamics_ltdl":
        values = ltdl.forward_dynamics(b, tree, v, sym["tau"], f_ext)
    elif kernel == "mass_matrix_inverse":
        values = _flat(articulated.mass_matrix_inverse(b, tree))
    elif kernel == "energy":
        values = list(kinematics.energy(b, tree, v))
    else:  # pragma: no cover - the catalogue and this switch are kept in step by tests
        raise SymgenError(f"no spatial-operator derivation for kernel {kernel!r}")
    b.output(spec.output, shape, values)
    return b.build()


def _flat(rows) -> list:
    return [x for row in rows for x in row]


def _need(frame: str | None) -> str:
    if frame is None:
        raise SymgenError("a per-frame kernel needs a frame name")
    return frame


__all__ = ["build_kernel"]

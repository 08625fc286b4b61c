"""Numeric snapshot of a :class:`~symgen.model.Model` and input validation.

Every public function of :mod:`symgen.reference` first calls :func:`prepare`, which resolves
runtime parameters (``model.resolve(params)``) and converts the model's values to numpy
arrays once. Models are immutable, so the snapshot of a model object is cached for as long
as that object lives.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from symgen.model import Joint, JointType, Model
from symgen.reference.spatial import spatial_inertia


@dataclass(frozen=True)
class NumericJoint:
    """A tree joint with float arrays: placement in the parent body frame, unit axes, pitch,
    in-plane directions ``e1``, ``e2`` (planar joints), its slices of q and v, and the
    armature of each of its velocity coordinates (zeros when none)."""

    name: str
    type: JointType
    q: slice
    v: slice
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    axis2: np.ndarray
    pitch: float
    e1: np.ndarray
    e2: np.ndarray
    armature: np.ndarray

    @property
    def nq(self) -> int:
        return self.q.stop - self.q.start

    @property
    def nv(self) -> int:
        return self.v.stop - self.v.start


@dataclass(frozen=True)
class NumericFrame:
    """A frame fixed on body ``body`` (-1: the root) at (``rotation``, ``translation``)."""

    name: str
    body: int
    rotation: np.ndarray
    translation: np.ndarray


@dataclass(frozen=True)
class NumericCoupling:
    """Couplings imposed (:mod:`symgen.model.couplings`): ``q_tree = P q + q0``,
    ``v_tree = T v``; ``q_index`` / ``v_index`` the tree entries that are q and v."""

    P: np.ndarray
    q0: np.ndarray
    T: np.ndarray
    q_index: np.ndarray
    v_index: np.ndarray


@dataclass(frozen=True)
class NumericModel:
    """Everything the tree algorithms need, as numpy arrays (index i: body i / joint i).
    ``nq``, ``nv`` and the joints' slices are those of the tree coordinates (every joint,
    coupled ones included); ``coupling`` maps the model's q and v onto them (None when the
    model has no couplings: the two coincide)."""

    name: str
    root: str
    nq: int
    nv: int
    parents: tuple[int, ...]
    joints: tuple[NumericJoint, ...]
    body_names: tuple[str, ...]
    masses: np.ndarray
    coms: np.ndarray
    inertias: tuple[np.ndarray, ...]
    frames: dict[str, NumericFrame]
    gravity: np.ndarray
    coupling: NumericCoupling | None = None

    @property
    def nbodies(self) -> int:
        return len(self.joints)

    @property
    def model_nq(self) -> int:
        """Length of the model's q (the independent joints)."""
        return self.nq if self.coupling is None else self.coupling.P.shape[1]

    @property
    def model_nv(self) -> int:
        """Length of the model's v, a and tau."""
        return self.nv if self.coupling is None else self.coupling.T.shape[1]

    def body_index(self, name: str) -> int:
        """Index of body ``name`` (-1 for the root); ValueError when there is none."""
        if name == self.root:
            return -1
        try:
            return self.body_names.index(name)
        except ValueError:
            raise ValueError(f"model {self.name!r} has no body {name!r}") from None

    def locate(self, name: str) -> NumericFrame:
        """Body or frame ``name`` as a frame fixed on a body."""
        if name in self.frames:
            return self.frames[name]
        if name == self.root or name in self.body_names:
            return NumericFrame(name, self.body_index(name), np.eye(3), np.zeros(3))
        raise ValueError(f"model {self.name!r} has no body or frame named {name!r}")


def planar_basis(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """In-plane directions of a planar joint (docs/conventions.md): e1 = the x axis projected
    on the plane (the y axis when |n·x| > 0.9), normalised; e2 = n × e1."""
    ref = np.array([0.0, 1.0, 0.0]) if abs(normal[0]) > 0.9 else np.array([1.0, 0.0, 0.0])
    e1 = ref - (normal @ ref) * normal
    e1 = e1 / np.linalg.norm(e1)
    return e1, np.cross(normal, e1)


def _arr(values) -> np.ndarray:
    return np.array(values, dtype=float)


def _unit(values) -> np.ndarray:
    a = _arr(values)
    return a / np.linalg.norm(a)


def numeric_joint(j: Joint, q: slice, v: slice) -> NumericJoint:
    """The numeric snapshot of a resolved joint whose coordinates sit at ``q`` / ``v``."""
    axis = _unit(j.axis) if j.type.layout.uses_axis else np.array([0.0, 0.0, 1.0])
    axis2 = _unit(j.axis2) if j.type is JointType.UNIVERSAL else np.array([0.0, 1.0, 0.0])
    e1, e2 = planar_basis(axis)
    return NumericJoint(j.name, j.type, q, v, _arr(j.placement.rotation),
                        _arr(j.placement.translation), axis, axis2, float(j.pitch), e1, e2,
                        _arr([float(x) for x in j.armature_values]))


def _convert(model: Model) -> NumericModel:
    joints = [numeric_joint(j, model.tree_q_slices[j.name], model.tree_v_slices[j.name])
              for j in model.joints]
    body_index = {b.name: i for i, b in enumerate(model.bodies)}
    body_index[model.root] = -1
    frames = {
        f.name: NumericFrame(
            f.name, body_index[f.body], _arr(f.placement.rotation), _arr(f.placement.translation)
        )
        for f in model.frames
    }
    masses = _arr([b.mass for b in model.bodies])
    coms = _arr([b.com for b in model.bodies]).reshape(-1, 3)
    inertias = tuple(
        spatial_inertia(float(b.mass), _arr(b.com), _arr(b.inertia)) for b in model.bodies
    )
    return NumericModel(
        model.name,
        model.root,
        model.tree_nq,
        model.tree_nv,
        tuple(model.parents),
        tuple(joints),
        tuple(model.body_names),
        masses,
        coms,
        inertias,
        frames,
        _arr(model.gravity),
        _coupling(model) if model.coupled else None,
    )


def _coupling(model: Model) -> NumericCoupling:
    p, q0, t = model.coupling_matrices()
    independent = model.independent_joints
    q_index = np.concatenate([np.arange(model.tree_nq)[model.tree_q_slices[j.name]]
                              for j in independent]) if independent else np.zeros(0, int)
    v_index = np.concatenate([np.arange(model.tree_nv)[model.tree_v_slices[j.name]]
                              for j in independent]) if independent else np.zeros(0, int)
    return NumericCoupling(p, q0, t, q_index, v_index)


_CACHE: dict[int, tuple[weakref.ref, NumericModel]] = {}


def prepare(model: Model, params: Mapping[str, float] | None = None) -> NumericModel:
    """The numeric snapshot of ``model.resolve(params)`` (cached per model object)."""
    resolved = model.resolve(params)
    key = id(resolved)
    hit = _CACHE.get(key)
    if hit is not None and hit[0]() is resolved:
        return hit[1]
    numeric = _convert(resolved)
    _CACHE[key] = (weakref.ref(resolved, lambda _ref, k=key: _CACHE.pop(k, None)), numeric)
    return numeric


def vector(name: str, x, size: int) -> np.ndarray:
    """``x`` as a float array of shape (size,), or a ValueError naming the expected shape."""
    a = np.asarray(x, dtype=float)
    if a.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains non-finite values")
    return a


def tree_configuration(nm: NumericModel, q) -> np.ndarray:
    """The model's q (validated) as the tree configuration ``P q + q0``."""
    q = vector("q", q, nm.model_nq)
    return q if nm.coupling is None else nm.coupling.P @ q + nm.coupling.q0


def tree_rates(nm: NumericModel, name: str, v) -> np.ndarray:
    """The model's v or a (validated) as the tree's ``T v``."""
    v = vector(name, v, nm.model_nv)
    return v if nm.coupling is None else nm.coupling.T @ v


def model_configuration(nm: NumericModel, q_tree: np.ndarray) -> np.ndarray:
    """The model's q from a tree configuration (its independent joints' entries)."""
    return q_tree if nm.coupling is None else q_tree[nm.coupling.q_index]


def model_forces(nm: NumericModel, tau_tree: np.ndarray) -> np.ndarray:
    """Generalized forces of the model's coordinates, ``Tᵀ τ_tree`` (virtual work)."""
    return tau_tree if nm.coupling is None else nm.coupling.T.T @ tau_tree


def model_matrix(nm: NumericModel, m_tree: np.ndarray) -> np.ndarray:
    """``Tᵀ M_tree T``."""
    return m_tree if nm.coupling is None else nm.coupling.T.T @ m_tree @ nm.coupling.T


def model_columns(nm: NumericModel, j_tree: np.ndarray) -> np.ndarray:
    """Columns of a Jacobian in the model's v: ``J_tree T``."""
    return j_tree if nm.coupling is None else j_tree @ nm.coupling.T


def external_forces(nm: NumericModel, f_ext: Mapping[str, object] | None) -> list[np.ndarray]:
    """Per-body external forces (zeros where none is given); names must be moving bodies."""
    out = [np.zeros(6) for _ in range(nm.nbodies)]
    for name, f in (f_ext or {}).items():
        if name not in nm.body_names:
            raise ValueError(
                f"f_ext: {name!r} is not a moving body of model {nm.name!r} "
                f"(bodies: {', '.join(nm.body_names)})"
            )
        out[nm.body_names.index(name)] = vector(f"f_ext[{name!r}]", f, 6)
    return out

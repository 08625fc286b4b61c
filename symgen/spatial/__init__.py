"""Symbolic spatial algebra in local body frames, sparse-aware.

Spatial motion vectors are ``[ω; v]`` and forces ``[n; f]`` (docs/conventions.md;
Featherstone 2008, §2.2-2.3). The thin types :class:`Motion`, :class:`Force`,
:class:`Transform`, :class:`Inertia`, :class:`JointMap` (and :class:`ForceMap`,
:class:`ArticulatedInertia`, :class:`Compliance`, :class:`JointVector`) hold tuples of
:mod:`symgen.ir.expr` expressions and give them the operators of the book, so that a recursion
step reads ``V = (X @ V_parent + S @ qd).emit(b)``:

- ``+``, ``−`` and scalar ``*`` build expressions in place, as do ``S @ θ̇``, ``I @ V``,
  ``v.cross(m)`` (×) and ``v.cross_star(f)`` (×*);
- ``emit(b)`` assigns the entries to temporaries of a
  :class:`~symgen.ir.program.ProgramBuilder`, so that expressions stay small;
- a coordinate transform (``X @ m``, ``X.T @ f``, ``X.inv @ m``, ``X.T @ P @ X``,
  ``X @ Y @ X.T``) emits intermediate results, so it needs the builder: it returns a
  :class:`Pending` value, evaluated by its own ``emit(b)`` or by that of a sum it takes part
  in (operands left to right).

Exact zeros and ones fold as expressions are built, so that no multiplication by a
structural zero (a zero entry of a rotation, an axis, a motion subspace) is ever emitted.

A :class:`Transform` is the Plücker transform from a parent frame to a child frame,
``X = [[E, 0], [−E r×, E]]`` (Featherstone 2008, eq. 2.24), stored as the rotation ``E``
(child coordinates from parent coordinates) and the child origin ``r`` in parent
coordinates. In Jain's notation (Jain 2009, §2) ``X = φ*(℘(k), k)`` carries velocities
outward and ``Xᵀ = φ(℘(k), k)`` carries forces inward.

The free functions on tuples (``add``, ``cross``, ``emit_vec``, ``motion_cross``, ...) are
the same algebra for callers that hold plain tuples. The 3-vector and 3x3 algebra and the
deferred products are :mod:`.vectors`; the spatial types :mod:`.types`.
"""

from symgen.spatial import types, vectors
from symgen.spatial.types import *  # noqa: F403
from symgen.spatial.vectors import *  # noqa: F403

__all__ = [*vectors.__all__, *types.__all__]

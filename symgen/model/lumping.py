"""Merging bodies attached by fixed joints into their parent (inertia lumping).

Each body's inertia is moved to the surviving ancestor's frame with the parallel-axis
theorem (Featherstone 2008, eq. 2.63 for the spatial form; here in mass / first moment /
origin-inertia form, which sums linearly), then turned back into mass, centre of mass and
inertia about the centre of mass.
"""

from __future__ import annotations

from collections.abc import Sequence

from symgen.model.elements import Body
from symgen.model.scalars import Mat3, Scalar, Vec3, is_symbolic
from symgen.model.transform import Transform, mat3, mat_mul, transpose, vec3


def _dot(a: Vec3, b: Vec3) -> Scalar:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _shift(mass: Scalar, c: Vec3) -> Mat3:
    """m (|c|^2 I - c c^T): inertia of a point mass m at c about the origin."""
    cc = _dot(c, c)
    return mat3(
        [[mass * ((cc if i == j else 0.0) - c[i] * c[j]) for j in range(3)] for i in range(3)]
    )


def lump(parts: Sequence[tuple[Body, Transform]]) -> tuple[Scalar, Vec3, Mat3]:
    """Mass, centre of mass and inertia about it, of the bodies ``parts`` (each with its pose
    in the frame of the resulting body) rigidly joined."""
    mass: Scalar = 0.0
    first_moment: Vec3 = (0.0, 0.0, 0.0)
    origin_inertia: Mat3 = ((0.0,) * 3,) * 3  # type: ignore[assignment]
    for body, pose in parts:
        c = pose.apply(body.com)
        rotated = mat_mul(mat_mul(pose.rotation, body.inertia), transpose(pose.rotation))
        shift = _shift(body.mass, c)
        mass = mass + body.mass
        first_moment = vec3([first_moment[i] + body.mass * c[i] for i in range(3)])
        origin_inertia = mat3(
            [
                [origin_inertia[i][j] + rotated[i][j] + shift[i][j] for j in range(3)]
                for i in range(3)
            ]
        )
    if not is_symbolic(mass) and float(mass) == 0.0:
        return 0.0, (0.0, 0.0, 0.0), origin_inertia
    com = vec3([first_moment[i] / mass for i in range(3)])
    back = _shift(mass, com)
    inertia = mat3([[origin_inertia[i][j] - back[i][j] for j in range(3)] for i in range(3)])
    return mass, com, inertia


__all__ = ["lump"]

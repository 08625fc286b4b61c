"""Fixed joint: no coordinates. The model builder merges fixed joints into their parent
body, so no hinge is ever built for one."""

from __future__ import annotations

from symgen.joints.base import JointKind
from symgen.model import JointType


class Fixed(JointKind):
    type = JointType.FIXED
    nq = nv = 0
    coordinate_names = ()
    uses_axis = False
    plane_axis = "any"


__all__ = ["Fixed"]

"""Fixed joint: no coordinates. The model builder merges fixed joints into their parent
body, so no hinge is ever built for one."""

from __future__ import annotations

from symgen.joints.base import JointKind
from symgen.model import JointType


class Fixed(JointKind):
    type = JointType.FIXED


__all__ = ["Fixed"]

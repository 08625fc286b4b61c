"""Verification of generated kernels against independent implementations (``symgen
verify`` and the tests): the comparisons (:mod:`.checks`), the numpy references of the
kernels by name (:mod:`.reference_queries`), Pinocchio's counterparts
(:mod:`.pinocchio_queries`) and MuJoCo's, for models read from MJCF
(:mod:`.mujoco_queries`)."""

from symgen.apps.verify.checks import *  # noqa: F403 (the comparisons' public names)
from symgen.apps.verify.checks import __all__  # noqa: F401

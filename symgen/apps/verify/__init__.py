"""Verification of generated kernels against independent implementations (``symgen
verify`` and the tests): the comparisons (:mod:`.checks`), the numpy references of the
kernels by name (:mod:`.reference_queries`) and Pinocchio's counterparts
(:mod:`.pinocchio_queries`)."""

from symgen.apps.verify.checks import *  # noqa: F403 (the comparisons' public names)
from symgen.apps.verify.checks import __all__  # noqa: F401

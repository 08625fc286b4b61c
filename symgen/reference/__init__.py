"""Independent numerical reference algorithms (numpy only), used to verify generated code.

Written from Featherstone, *Rigid Body Dynamics Algorithms* (2008): spatial vectors
``[angular; linear]``, Plücker transforms parent → child, per-joint ``X_J(q)``, motion subspace
``S(q)`` in child coordinates and bias ``c_J = S̊ q̇``. Conventions: docs/conventions.md.
Loop joints are ignored (spanning-tree dynamics); couplings are imposed (a coupled joint follows
its master: symgen.model.couplings). Every function accepts
``params`` (runtime-parameter values, passed to ``model.resolve``).
"""

from symgen.reference.dynamics import (
    bias_forces,
    forward_dynamics,
    gravity_forces,
    inverse_dynamics,
    mass_matrix,
)
from symgen.reference.energy import element_energy, kinetic_energy, potential_energy
from symgen.reference.integrate import (
    configuration_rates,
    integrate,
    neutral_configuration,
    random_configuration,
)
from symgen.reference.kinematics import (
    REFERENCES,
    forward_kinematics,
    frame_jacobian,
    frame_jacobian_dot_v,
)

__all__ = [
    "REFERENCES",
    "bias_forces",
    "configuration_rates",
    "element_energy",
    "forward_dynamics",
    "forward_kinematics",
    "frame_jacobian",
    "frame_jacobian_dot_v",
    "gravity_forces",
    "integrate",
    "inverse_dynamics",
    "kinetic_energy",
    "mass_matrix",
    "neutral_configuration",
    "potential_energy",
    "random_configuration",
]

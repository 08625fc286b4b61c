"""A parallel robot in joint coordinates: the loop analysis, actuator torques along a motion
and their check through forward dynamics, for the planar five-bar (or another closed-loop
model whose ground joints are its actuators).

    python examples/parallel_robot.py [MODEL] [--duration 1] [--samples 50]

Steps: the loop analysis (Müller 2014: kept and independent constraints, DOF); the kernels
`dependent_coordinates`, `loop_jacobian`, `loop_bias`, `constrained_inverse_dynamics`
and `constrained_forward_dynamics`, generated and compiled; then, for motor angles
θ(t) = θ₀ + A sin(2π t / T), at each sample: the passive joints closed from the motors
(dependent coordinates), the velocities and accelerations that satisfy the loop constraints
(G v = 0 and G a = −Ġv with the motors' rates and accelerations given), the motor torques
that produce that motion (actuated inverse dynamics), and forward dynamics fed with those
torques, which must return the same accelerations. Prints the largest torque and the
largest round-trip error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import symgen
from symgen.loops import analyse_loops
from symgen.loops.actuation import actuation

MODELS = Path(__file__).resolve().parent / "models"
KERNELS = ["dependent_coordinates", "loop_constraints", "loop_jacobian", "loop_bias",
           "constrained_inverse_dynamics", "constrained_forward_dynamics"]


def constrained_rates(g: np.ndarray, active: list[int], rates: np.ndarray,
                      rhs: np.ndarray) -> np.ndarray:
    """x with x[active] = rates and G x = rhs: the passive part from G_P x_P = rhs − G_A x_A
    (G_P square and regular for a valid actuation)."""
    passive = [d for d in range(g.shape[1]) if d not in active]
    x = np.zeros(g.shape[1])
    x[active] = rates
    x[passive] = np.linalg.solve(g[:, passive], rhs - g[:, active] @ rates)
    return x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=str(MODELS / "five_bar.yaml"))
    parser.add_argument("--duration", type=float, default=1.0, help="period T, s")
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()

    model = symgen.load(args.model)
    analysis = analyse_loops(model)
    print(analysis.text())
    split = actuation(model, analysis)
    active = list(split.active)
    keep = list(analysis.rows)
    print(f"actuated joints: {', '.join(split.joints)} ({split.source})")

    lib = symgen.compile_kernels(symgen.generate(model, KERNELS))
    q = analysis.reference.copy()
    theta0, amplitude = q[active].copy(), 0.2
    omega = 2 * np.pi / args.duration
    worst_torque, worst_error, worst_constraint, worst_phi = 0.0, 0.0, 0.0, 0.0
    for t in np.linspace(0.0, args.duration, args.samples):
        q[active] = theta0 + amplitude * np.sin(omega * t)
        q, status = lib.dependent_coordinates(q)  # close the loops from the previous sample
        if status[1] < 1e-8:
            raise SystemExit(f"t = {t:.3f} s: the actuated joints lose control of the motion "
                             f"(singular configuration: pivot ratio {status[1]:.1e})")
        worst_phi = max(worst_phi, float(np.max(np.abs(lib.loop_constraints(q)))))
        g = lib.loop_jacobian(q)[keep]
        v = constrained_rates(g, active, np.full(len(active), amplitude * omega
                                                 * np.cos(omega * t)), np.zeros(len(keep)))
        gamma = lib.loop_bias(q, v)[keep]
        a = constrained_rates(g, active, np.full(len(active), -amplitude * omega**2
                                                 * np.sin(omega * t)), -gamma)
        torque, _ = lib.constrained_inverse_dynamics(q, v, a)
        tau = np.zeros(model.nv)
        tau[active] = torque
        a_back, _ = lib.constrained_forward_dynamics(q, v, tau)
        worst_torque = max(worst_torque, float(np.max(np.abs(torque))))
        worst_error = max(worst_error, float(np.max(np.abs(a_back - a)))
                          / max(1.0, float(np.max(np.abs(a)))))
        worst_constraint = max(worst_constraint, float(np.max(np.abs(g @ a + gamma))))
    print(f"{args.samples} samples over {args.duration:g} s: largest motor torque "
          f"{worst_torque:.4g} N·m; |Phi| ≤ {worst_phi:.1e}; |G a + Ġv| ≤ {worst_constraint:.1e}; "
          f"forward dynamics returns a to {worst_error:.1e} (relative)")


if __name__ == "__main__":
    main()

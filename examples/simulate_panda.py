"""Simulate 5 s of the Franka Panda falling under gravity with the generated forward
dynamics, integrated by classical Runge-Kutta (RK4), and report the energy drift.

    python examples/simulate_panda.py [--duration 5] [--dt 1e-4]

No torque is applied (τ = 0): the arm swings freely, so kinetic + potential energy must stay
constant; the drift measures the integrator and the kernels together. The compiled kernels
``forward_dynamics`` and ``energy`` come from ``symgen.compile_kernels(symgen.generate(...))``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import symgen
from symgen.io.robots import robot_urdf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--dt", type=float, default=1e-4)
    args = parser.parse_args()

    model = symgen.load(robot_urdf("panda"))
    lib = symgen.compile_kernels(symgen.generate(model, ["forward_dynamics", "energy"]))
    fd, energy = lib.forward_dynamics, lib.energy
    tau = np.zeros(model.nv)
    q = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02, 0.02])[: model.nq]
    v = np.zeros(model.nv)

    def f(q, v):  # the state derivative (q̇, v̇); every joint of the Panda is 1-DOF: q̇ = v
        return v, fd(q, v, tau)

    e0 = float(np.sum(energy(q, v)))
    steps = int(round(args.duration / args.dt))
    worst = 0.0
    start = time.perf_counter()
    for _ in range(steps):
        k1q, k1v = f(q, v)
        k2q, k2v = f(q + 0.5 * args.dt * k1q, v + 0.5 * args.dt * k1v)
        k3q, k3v = f(q + 0.5 * args.dt * k2q, v + 0.5 * args.dt * k2v)
        k4q, k4v = f(q + args.dt * k3q, v + args.dt * k3v)
        q = q + args.dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + args.dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        worst = max(worst, abs(float(np.sum(energy(q, v))) - e0))
    elapsed = time.perf_counter() - start
    scale = max(abs(e0), 1.0)
    print(f"{steps} RK4 steps of {args.dt:g} s ({args.duration:g} s) in {elapsed:.2f} s "
          f"({4 * steps} forward-dynamics calls)")
    print(f"energy at t = 0: {e0:.6f} J; worst drift {worst:.3e} J "
          f"(relative {worst / scale:.3e}); final speed |v| = {np.linalg.norm(v):.3f} rad/s")


if __name__ == "__main__":
    main()

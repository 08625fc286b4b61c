"""Identify a robot's base inertial parameters from simulated torques (least squares).

    python examples/identify_robot.py [ROBOT] [--samples 200] [--noise 0.05] [--seed 0]

ROBOT is a robot of example-robot-data (default ur5) or a model file. The script finds the
base parameters (symgen.identification: the independent columns of the regressor stacked
over random states, and the regrouping of the others), generates and compiles the
``base_regressor`` and ``inverse_dynamics`` kernels, simulates measurements τ = ID(q, v, a)
(+ Gaussian noise of standard deviation ``--noise`` N·m) at random states, stacks
W = [Y_base(qₖ, vₖ, aₖ)] and solves W π̂ = τ by least squares. It prints, noise-free, the
largest relative error of π̂ against the true π_base = R π (rounding: ~1e-10 or below), and
with noise the largest error in units of its standard deviation σ(WᵀW)⁻¹ᐟ² (a few units:
the estimate is unbiased with that covariance, Khalil & Dombre 2002, §12.5).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import symgen
from symgen.identification import base_parameters, inertial_parameters
from symgen.io.robots import robot_urdf
from symgen.reference import random_configuration


def load(name: str) -> symgen.Model:
    path = Path(name)
    if path.suffix in (".urdf", ".yaml", ".yml"):
        return symgen.load(path, couplings=False)
    return symgen.load(robot_urdf(name), couplings=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robot", nargs="?", default="ur5")
    parser.add_argument("--samples", type=int, default=200, help="measurements (default 200)")
    parser.add_argument("--noise", type=float, default=0.05,
                        help="torque noise standard deviation, N·m (default 0.05)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    model = load(args.robot)
    base = base_parameters(model)
    print(f"{model.name}: {10 * model.nbodies} inertial parameters, {base.count} base "
          "parameters")
    lib = symgen.compile_kernels(symgen.generate(model, ["base_regressor", "inverse_dynamics"]))
    truth = base.of(inertial_parameters(model))
    rng = np.random.default_rng(args.seed)
    rows, torques = [], []
    for _ in range(args.samples):
        q = random_configuration(model, rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        rows.append(lib.base_regressor(q, v, a))
        torques.append(lib.inverse_dynamics(q, v, a))
    w, tau = np.vstack(rows), np.concatenate(torques)
    exact = np.linalg.lstsq(w, tau, rcond=None)[0]
    error = np.max(np.abs(exact - truth) / np.maximum(np.abs(truth), 1e-3))
    print(f"noise-free: largest relative error of the base parameters {error:.1e}")
    noisy = tau + args.noise * rng.normal(size=tau.size)
    estimate = np.linalg.lstsq(w, noisy, rcond=None)[0]
    sigma = args.noise * np.sqrt(np.diag(np.linalg.inv(w.T @ w)))
    z = np.abs(estimate - truth) / sigma
    print(f"noise {args.noise:g} N·m: largest error {z.max():.2f} standard deviations "
          f"(mean {z.mean():.2f}; {args.samples} samples of {model.nv} torques)")


if __name__ == "__main__":
    main()

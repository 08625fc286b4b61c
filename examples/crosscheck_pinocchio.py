"""Cross-check the generated kernels of a robot against Pinocchio on 1,000 random states,
calling each compiled kernel once with the whole batch (one C loop, no Python loop per
state).

    python examples/crosscheck_pinocchio.py [ROBOT] [--states 1000] [--seed 0]

Compares inverse dynamics (pin.rnea), the mass matrix (pin.crba), forward dynamics
(pin.aba) and the mass-matrix inverse (pin.computeMinverse) — for a robot with coupled
joints (the Panda's gripper fingers, Pinocchio mimic joints, which its aba and
computeMinverse reject) the solves of its crba and rnea; prints the worst relative error of
each and the time of the batch call.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pinocchio as pin

import symgen
from symgen import reference as ref
from symgen.apps.verify import relative_error
from symgen.io.robots import KNOWN_ROBOTS, robot_urdf
from symgen.peers.pinocchio import Bridge, pin_model_from_symgen

FLOATING = {"solo12", "talos"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robot", nargs="?", default="panda", choices=sorted(KNOWN_ROBOTS))
    parser.add_argument("--states", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    model = symgen.load(robot_urdf(args.robot), floating_base=args.robot in FLOATING)
    ks = symgen.generate(model, ["inverse_dynamics", "mass_matrix", "forward_dynamics",
                                 "mass_matrix_inverse"])
    lib = symgen.compile_kernels(ks)
    rng = np.random.default_rng(args.seed)
    n = args.states
    Q = np.array([ref.random_configuration(model, rng) for _ in range(n)])
    V, A, T = (rng.normal(size=(n, model.nv)) for _ in range(3))
    br = Bridge(model, pin_model_from_symgen(model))
    pm, pd = br.pin_model, br.data

    def q(i):
        return br.q_to_pin(Q[i])

    # the Bridge's mass matrix, forward dynamics and inverse: pin.crba, pin.aba and
    # pin.computeMinverse, or for coupled joints (the Panda's gripper: Pinocchio mimic
    # joints, which its aba and computeMinverse reject) the solves of crba and rnea
    peers = {
        "inverse_dynamics": ((Q, V, A), lambda i: br.v_from_pin(
            pin.rnea(pm, pd, q(i), br.v_to_pin(V[i]), br.v_to_pin(A[i])))),
        "mass_matrix": ((Q,), lambda i: br.matrix_from_pin(br.mass_matrix(q(i)))),
        "forward_dynamics": ((Q, V, T), lambda i: br.v_from_pin(
            br.forward_dynamics(q(i), br.v_to_pin(V[i]), br.v_to_pin(T[i])))),
        "mass_matrix_inverse": ((Q,), lambda i: br.matrix_from_pin(
            br.mass_matrix_inverse(q(i)))),
    }
    print(f"{model.name}: nv = {model.nv}, {n} random states (seed {args.seed})")
    for name, (inputs, peer) in peers.items():
        start = time.perf_counter()
        got = lib[name](*inputs)
        elapsed = time.perf_counter() - start
        expected = np.array([peer(i) for i in range(n)])
        print(f"  {name:20s} max rel. error {relative_error(got, expected):.2e}   "
              f"batch call {elapsed * 1e3:.2f} ms ({elapsed / n * 1e6:.2f} us per state)")


if __name__ == "__main__":
    main()

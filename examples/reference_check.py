"""Main job (for now): load a real robot, describe it, and check symgen's reference dynamics
against Pinocchio on random states.

    python examples/reference_check.py [ROBOT] [--states N] [--seed S]

ROBOT is one of symgen.io.robots.KNOWN_ROBOTS (default: panda), loaded from the PyPI package
example-robot-data. Prints the model, then the maximum relative error of each quantity
(rel = max|a - b| / max(max|b|, 1)); exits with status 1 if any exceeds 1e-9.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pinocchio as pin

import symgen
from symgen import reference as ref
from symgen.apps.summary import describe
from symgen.io.robots import KNOWN_ROBOTS, robot_urdf
from symgen.peers.pinocchio import Bridge, pin_model_from_urdf

TOLERANCE = 1e-9
FLOATING = {"solo12", "talos"}


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1.0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robot", nargs="?", default="panda", choices=sorted(KNOWN_ROBOTS))
    parser.add_argument("--states", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    path = robot_urdf(args.robot)
    floating = args.robot in FLOATING
    model = symgen.load(path, floating_base=floating)
    print(describe(model))
    # Pinocchio's own reading of the file (mimic joints as Pinocchio's JointModelMimic: the
    # Panda's second finger follows the first, as symgen imposes its couplings)
    pin_model = pin_model_from_urdf(model)
    bridge = Bridge(model, pin_model)
    data = pin_model.createData()
    rng = np.random.default_rng(args.seed)
    worst = dict.fromkeys(
        ("inverse dynamics", "mass matrix", "forward dynamics", "placements"), 0.0
    )
    for _ in range(args.states):
        q = ref.random_configuration(model, rng)
        v, a, tau = (rng.uniform(-2, 2, model.nv) for _ in range(3))
        qp, vp, ap, taup = (
            bridge.q_to_pin(q),
            bridge.v_to_pin(v),
            bridge.v_to_pin(a),
            bridge.v_to_pin(tau),
        )
        worst["inverse dynamics"] = max(
            worst["inverse dynamics"],
            rel(
                ref.inverse_dynamics(model, q, v, a),
                bridge.v_from_pin(pin.rnea(pin_model, data, qp, vp, ap)),
            ),
        )
        # crba (symmetrized) and aba; with mimic joints, which Pinocchio's aba rejects, the
        # solve of its crba and rnea (Bridge.forward_dynamics)
        M_pin = bridge.mass_matrix(qp)
        worst["mass matrix"] = max(
            worst["mass matrix"], rel(ref.mass_matrix(model, q), bridge.matrix_from_pin(M_pin))
        )
        worst["forward dynamics"] = max(
            worst["forward dynamics"],
            rel(
                ref.forward_dynamics(model, q, v, tau),
                bridge.v_from_pin(bridge.forward_dynamics(qp, vp, taup)),
            ),
        )
        pin.framesForwardKinematics(pin_model, data, qp)
        poses = ref.forward_kinematics(model, q)
        for name in bridge.names():
            expected = data.oMf[bridge.frame_id(name)].homogeneous
            worst["placements"] = max(worst["placements"], rel(poses[name], expected))

    print(
        f"\nsymgen.reference vs Pinocchio {pin.__version__}: {args.robot}, "
        f"{args.states} random states (seed {args.seed})"
    )
    print(f"  {'quantity':<20} {'max rel. error':>15}")
    failed = False
    for name, err in worst.items():
        flag = "ok" if err <= TOLERANCE else "FAIL"
        failed |= err > TOLERANCE
        print(f"  {name:<20} {err:>15.2e}  {flag}")
    print(f"\n{'FAILED' if failed else 'passed'} (tolerance {TOLERANCE:g})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

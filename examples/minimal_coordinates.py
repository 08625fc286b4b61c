"""A leg with a four-bar knee simulated in minimal coordinates (constraint embedding).

    python examples/minimal_coordinates.py [MODEL] [--duration 1] [--dt 1e-3]

The constraint embedding (docs/loops.md, Jain 2009) works in the independent coordinates
only: the state is (q_R, θ̇_R), here the hip, the knee's coupler and the ankle of
examples/models/four_bar_knee.yaml (3 DOF of 5 joint coordinates). Each RK4 stage solves
the dependent coordinates from the independent ones (``dependent_coordinates``: Newton
seeded by the predictor q + c·h·q̇ of the stage, with a status that flags singular
configurations; a correction larger than the step's own motion, i.e. a jump to another
assembly branch, stops the run with a message)
and takes θ̈_R from ``embedded_forward_dynamics``, which also returns the rates and
accelerations of every joint. The leg falls from hip 0.5 rad under gravity, no torque: the
script prints the energy drift, the largest loop-closure residual and the operation counts
of the embedded and the multiplier forward dynamics (``forward_dynamics`` takes the
cheaper).

The energy is the ``energy`` kernel's sum: kinetic, gravity and the potential of the
model's force elements (springs ½k(L − L₀)², ½k(θ − rest)², constant actuators −Fθ).
Dampers take energy out: their work W_d = ∫ Q_d·θ̇ dt (Q_d = Q(q, θ̇) − Q(q, 0) from the
``element_forces`` kernel, ≤ 0) is integrated with the RK4 weights of the stages, and the
drift printed is that of E(t) − W_d(t), which stays E(0) for the exact motion (no joint
torques act). Relative: to the largest of |E(0)| and the kinetic energy reached. On
Andrews' squeezer (examples/models/andrews_squeezer.yaml: a stiff spring, a motor, 0.03 s
to the benchmark's end) RK4 needs steps of about 1e-5 s (``--dt 1e-5``: drift 2e-10 J);
at the default 1 ms its drift is of the order of the energy itself.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import symgen
from symgen.loops import LoopClosure

MODELS = Path(__file__).resolve().parent / "models"
KERNELS = ["embedded_forward_dynamics", "dependent_coordinates", "loop_constraints", "energy",
           "element_forces", "forward_dynamics"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=str(MODELS / "four_bar_knee.yaml"))
    parser.add_argument("--duration", type=float, default=1.0, help="seconds (default 1)")
    parser.add_argument("--dt", type=float, default=1e-3, help="RK4 step, s (default 1e-3)")
    args = parser.parse_args()

    model = symgen.load(args.model)
    ks = symgen.generate(model, KERNELS)
    lib = symgen.compile_kernels(ks)
    emb = ks.context.embedding
    ind = list(emb.independent)
    names = [j.name for j in model.independent_joints]
    print(f"{model.name}: {model.nv} joint coordinates, independent: "
          f"{', '.join(names[d] for d in ind)} ({emb.split.source})")
    for label, ops in ks.alternatives.get("forward_dynamics", {}).items():
        print(f"  forward_dynamics by {label}: {ops} operations")
    if any(j.nq != j.nv for j in model.independent_joints):
        raise SystemExit("this example integrates q̇ = v: joints with quaternions need "
                         "the integrate kernel")

    q = np.zeros(model.nq)
    if "hip" in model.q_slices:
        q[model.q_slices["hip"]] = 0.5
    q = LoopClosure(model).assemble(q)
    zero = np.zeros(model.nv)

    def close(q_from: np.ndarray, q_guess: np.ndarray, q_ind: np.ndarray) -> np.ndarray:
        """The dependent coordinates for q_ind, by Newton from the predictor q_guess (the
        configuration the step's joint rates lead to, never a later one); a correction
        larger than half the step's own motion means the loops closed on another assembly
        branch, which is refused rather than passed on."""
        q_new = q_guess.copy()
        q_new[ind] = q_ind
        q_new, status = lib.dependent_coordinates(q_new)
        if status[1] < 1e-8:
            raise SystemExit("singular configuration: the independent coordinates no longer "
                             "determine the motion")
        motion = float(np.max(np.abs(q_guess - q_from)))
        if float(np.max(np.abs(q_new - q_guess))) > 0.5 * motion + 1e-8:
            raise SystemExit("the dependent coordinates jumped to another assembly branch: "
                             "use a smaller --dt")
        return q_new

    def accel(q_full: np.ndarray, v_ind: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, float]:
        """(θ̈_R, every joint's rate, the dampers' power Q_d·θ̇ at the state)."""
        a_ind, v_full, _ = lib.embedded_forward_dynamics(q_full, v_ind, zero)
        damping = lib.element_forces(q_full, v_full) - lib.element_forces(q_full, zero)
        return a_ind, v_full, float(damping @ v_full)

    x, v = q[ind].copy(), np.zeros(len(ind))
    e0 = float(np.sum(lib.energy(q, zero)))
    dampers = any(float(getattr(e, "damping", 0.0)) for e in model.resolve().force_elements)
    work, drift, phi, top, h = 0.0, 0.0, 0.0, 0.0, args.dt
    for _ in range(int(round(args.duration / h))):
        # each stage's dependent coordinates are seeded by the predictor q + c·h·q̇
        k1, r1, p1 = accel(q, v)
        q2 = close(q, q + 0.5 * h * r1, x + 0.5 * h * v)
        k2, r2, p2 = accel(q2, v + 0.5 * h * k1)
        q3 = close(q, q + 0.5 * h * r2, x + 0.5 * h * (v + 0.5 * h * k1))
        k3, r3, p3 = accel(q3, v + 0.5 * h * k2)
        q4 = close(q, q + h * r3, x + h * (v + 0.5 * h * k2))
        k4, r4, p4 = accel(q4, v + h * k3)
        work += h / 6 * (p1 + 2 * p2 + 2 * p3 + p4)  # the dampers' work, ≤ 0
        x = x + h / 6 * (6 * v + h * (k1 + k2 + k3))
        v = v + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        q = close(q, q + h / 6 * (r1 + 2 * r2 + 2 * r3 + r4), x)
        _, v_full, _ = lib.embedded_forward_dynamics(q, v, zero)
        energy = lib.energy(q, v_full)
        top = max(top, float(energy[0]))
        drift = max(drift, abs(float(np.sum(energy)) - work - e0))
        phi = max(phi, float(np.max(np.abs(lib.loop_constraints(q)))))
    label = "energy − damper work" if dampers else "energy"
    print(f"{args.duration:g} s in {int(round(args.duration / h))} RK4 steps of {h:g} s: "
          f"{label} drift {drift:.2e} J (relative {drift / max(abs(e0), top, 1e-300):.1e}), "
          f"largest loop residual {phi:.1e}")
    if dampers:
        print(f"the dampers drew {-work:.3e} J")


if __name__ == "__main__":
    main()

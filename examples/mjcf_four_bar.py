"""A closed-loop mechanism read from MJCF, simulated in minimal coordinates.

    python examples/mjcf_four_bar.py [MODEL.xml] [--duration 1] [--dt 1e-3] [--plot PATH]
                                     [--crank 0.5] [--no-mujoco]

MODEL.xml defaults to examples/models/four_bar.xml, the planar four-bar closed by a
``<connect>`` (symgen reads it as a spherical loop joint; its out-of-plane row is redundant,
1 DOF). As in examples/minimal_coordinates.py, the constraint embedding (docs/loops.md)
integrates the independent coordinates only, here the crank (the joint of the file's
``<motor>``): each RK4 stage solves the dependent coordinates from the independent ones
(``dependent_coordinates``: Newton seeded by a prediction q + Δt·θ̇ of the whole
configuration, the RK4 combination of the stages' joint rates, so that a step never starts
Newton from the previous configuration, which may lie in another assembly branch's basin;
its status flags a singular configuration or a solve that did not converge) and takes θ̈_R
from ``embedded_forward_dynamics`` (force elements included). Start: the file's first
keyframe if it has one, else the crank turned 0.5 rad from the assembled reference, at
rest; no motor torque.

Prints the energy drift (kinetic + gravity + the joint springs' potential, the ``energy``
kernel's sum, plus the energy the dampers drew, from the ``element_forces`` kernel; the
four-bar has neither), the largest loop-closure residual |Phi| and the final state mapped
back to MuJoCo's qpos/qvel with ``symgen.to_mujoco``.

Unless ``--no-mujoco``, MuJoCo simulates the same file from the same state twice (RK4,
contacts and joint limits off: symgen has neither) and the script prints the final crank
angle and the largest difference from symgen's over the run. As written, MuJoCo enforces
the ``<connect>`` as a soft constraint (solref time constant 0.02 s by default): the loop
opens (|Phi| 3e-4 at the end on the four-bar) and the constraint's damping takes energy out
(1.8e-2 of 2.05 J in the second), so the crank angles drift apart, by 0.36 rad after 1 s on
the four-bar, whose crank swings through most of a turn. With the constraint stiffened
(time constant 0.2·dt, MuJoCo's step dt/100) they agree to 6e-6 rad: the difference is
MuJoCo's compliance. Both lines compare, they check nothing. ``--plot PATH`` saves the
crank angle (symgen's and MuJoCo's as written) and the energy over time (matplotlib;
skipped with a message when it is not installed). ``--crank`` sets the start without a
keyframe (another mechanism may not close at 0.5 rad).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import mujoco
import numpy as np

import symgen
from symgen.loops import LoopClosure

MODELS = Path(__file__).resolve().parent / "models"
KERNELS = ["embedded_forward_dynamics", "dependent_coordinates", "loop_constraints", "energy",
           "element_forces"]


def crank_index(model: symgen.Model, ind: list[int]) -> int:
    """The coordinate called the crank: the first motor's joint when it is independent,
    else the first independent coordinate."""
    for motor in model.motors:
        if motor.joint in model.v_slices and model.v_slices[motor.joint].start in ind:
            return model.v_slices[motor.joint].start
    return ind[0]


def mujoco_run(path: str, model: symgen.Model, q: np.ndarray, rates: np.ndarray, dt: float,
               steps: int, crank: int, substeps: int = 1, timeconst: float | None = None):
    """MuJoCo's simulation of the file from the same state, RK4 at dt / substeps, contacts
    and joint limits off (``timeconst``: the equality constraints' solref time constant,
    None: the file's): (crank angle at each of the ``steps`` steps of dt, final qpos,
    energy change, the equality constraints' smallest solref time constant)."""
    m = mujoco.MjModel.from_xml_path(path)
    m.opt.timestep = dt / substeps
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT
                           | mujoco.mjtDisableBit.mjDSBL_LIMIT)
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    if timeconst is not None:
        m.eq_solref[:, 0] = timeconst
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], _ = symgen.to_mujoco(model, q, rates)
    mujoco.mj_forward(m, d)
    e0 = float(np.sum(d.energy))
    angles = np.empty(steps)
    for i in range(steps):
        mujoco.mj_step(m, d, substeps)
        angles[i] = symgen.from_mujoco(model, d.qpos)[0][crank]
    mujoco.mj_forward(m, d)
    solref = float(np.min(m.eq_solref[:, 0])) if m.neq else float("nan")
    return angles, d.qpos.copy(), float(np.sum(d.energy)) - e0, solref


def save_plot(path: str, t: np.ndarray, crank: np.ndarray, energy: np.ndarray,
              crank_mj: np.ndarray | None, crank_name: str) -> None:
    try:
        import matplotlib
    except ImportError:
        print(f"--plot: matplotlib is not installed, no picture written ({path})")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    top.plot(t, crank, label="symgen (minimal coordinates)")
    if crank_mj is not None:
        top.plot(t, crank_mj, "--", label="MuJoCo (soft <connect>)")
    top.set_ylabel(f"{crank_name} [rad]")
    top.legend()
    bottom.plot(t, energy - energy[0])
    bottom.set_ylabel("energy (+ damper work) − E(0) [J]")
    bottom.set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=str(MODELS / "four_bar.xml"))
    parser.add_argument("--duration", type=float, default=1.0, help="seconds (default 1)")
    parser.add_argument("--dt", type=float, default=1e-3, help="RK4 step, s (default 1e-3)")
    parser.add_argument("--crank", type=float, default=0.5,
                        help="start without keyframe: the crank turned by this, rad (0.5)")
    parser.add_argument("--plot", default=None, help="save crank angle and energy (PNG)")
    parser.add_argument("--no-mujoco", action="store_true",
                        help="skip the comparison with MuJoCo's own simulation")
    args = parser.parse_args()

    model = symgen.load(args.model)
    if any(j.nq != j.nv for j in model.independent_joints):
        raise SystemExit("this example integrates q̇ = v: joints with quaternions need "
                         "the integrate kernel")
    ks = symgen.generate(model, KERNELS)
    lib = symgen.compile_kernels(ks)
    emb = ks.context.embedding
    ind = list(emb.independent)
    names = [j.name for j in model.independent_joints]
    crank = crank_index(model, ind)
    loops = ", ".join(f"{j.name} ({j.type.value})" for j in model.loop_joints)
    print(f"{model.name}: {model.nv} joint coordinates, loop joints {loops}; independent: "
          f"{', '.join(names[d] for d in ind)} ({emb.split.source})")
    tau = np.zeros(model.nv)

    def drawn(q_full: np.ndarray, rates: np.ndarray) -> float:
        """Power drawn by the dampers, −Q_d·θ̇ ≥ 0 (Q_d = Q(q, θ̇) − Q(q, 0))."""
        return float((lib.element_forces(q_full, tau) - lib.element_forces(q_full, rates))
                     @ rates)

    def close(seed: np.ndarray, x: np.ndarray,
              hint: str = "near a singular configuration, or a step too long for the "
              "motion (try a smaller --dt)") -> np.ndarray:
        """The configuration with independent coordinates x, Newton seeded by ``seed``."""
        q_new = seed.copy()
        q_new[ind] = x
        q_new, status = lib.dependent_coordinates(q_new)
        if status[1] < 1e-8:
            raise SystemExit("singular configuration: the independent coordinates no longer "
                             "determine the motion")
        if status[0] > 1e-9:
            raise SystemExit(f"the loops did not close (residual {status[0]:.1e}, pivot ratio "
                             f"{status[1]:.1e}): {hint}")
        return q_new

    def rates(q_full: np.ndarray, v_ind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(θ̈_R, θ̇ of every coordinate)."""
        a_ind, v_full, _ = lib.embedded_forward_dynamics(q_full, v_ind, tau)
        return a_ind, v_full

    if model.keyframes:
        key = model.keyframes[0]
        q, v_key, _ = symgen.from_mujoco(model, key.qpos, key.qvel)
        q = close(q, q[ind])
        v = v_key[ind]
        start = f"keyframe {key.name!r}"
    else:  # turn the crank from the assembled reference, closing the loops on the way
        q = LoopClosure(model).assemble(np.zeros(model.nq))
        target = q[ind].copy()
        target[ind.index(crank)] += args.crank
        x0 = q[ind].copy()
        for s in np.linspace(0.0, 1.0, 11)[1:]:
            q = close(q, x0 + s * (target - x0), f"{names[crank]} cannot turn {args.crank:g} "
                      "rad from the reference: try a smaller --crank")
        v = np.zeros(len(ind))
        start = (f"{names[crank]} turned {args.crank:g} rad from the assembled reference, "
                 "at rest")
    print(f"start: {start}; {args.duration:g} s of RK4 steps of {args.dt:g} s, no motor torque")

    h, steps = args.dt, int(round(args.duration / args.dt))
    x = q[ind].copy()
    _, w = rates(q, v)
    q_start, w_start = q.copy(), w.copy()
    work = 0.0  # energy drawn by the dampers so far
    e0 = float(np.sum(lib.energy(q, w)))
    times, cranks, energies = [0.0], [q[crank]], [e0]
    drift = 0.0
    phi = float(np.max(np.abs(lib.loop_constraints(q))))
    for n in range(steps):
        k1, w1 = rates(q, v)
        q2 = close(q + 0.5 * h * w1, x + 0.5 * h * v)
        k2, w2 = rates(q2, v + 0.5 * h * k1)
        q3 = close(q + 0.5 * h * w2, x + 0.5 * h * (v + 0.5 * h * k1))
        k3, w3 = rates(q3, v + 0.5 * h * k2)
        q4 = close(q + h * w3, x + h * (v + 0.5 * h * k2))
        k4, w4 = rates(q4, v + h * k3)
        work += h / 6 * (drawn(q, w1) + 2 * drawn(q2, w2) + 2 * drawn(q3, w3)
                         + drawn(q4, w4))
        x = x + h / 6 * (6 * v + h * (k1 + k2 + k3))
        v = v + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        # the seed: the RK4 combination of the stages' rates (its independent part is x)
        q = close(q + h / 6 * (w1 + 2 * w2 + 2 * w3 + w4), x)
        _, w = rates(q, v)
        energy = float(np.sum(lib.energy(q, w))) + work
        drift = max(drift, abs(energy - e0))
        phi = max(phi, float(np.max(np.abs(lib.loop_constraints(q)))))
        times.append((n + 1) * h)
        cranks.append(q[crank])
        energies.append(energy)
    damped = " + damper work" if any(float(getattr(e, "damping", 0.0))
                                     for e in model.resolve().force_elements) else ""
    print(f"energy{damped} drift {drift:.2e} J (relative {drift / max(abs(e0), 1e-300):.1e}), "
          f"largest loop residual {phi:.1e}")
    print(f"final {names[crank]} {q[crank]:.6f} rad, rate {w[crank]:.6f} rad/s")
    qpos, qvel, _ = symgen.to_mujoco(model, q, w)
    with np.printoptions(precision=6, suppress=True, floatmode="fixed"):
        print(f"final state for MuJoCo: qpos {qpos}, qvel {qvel}")

    crank_mj = None
    if not args.no_mujoco:
        print("MuJoCo's own simulation from the same state (RK4, contacts and limits off; a "
              "comparison, not a check):")
        symgen_cranks = np.array(cranks)
        for label, substeps, timeconst in (("the file as written", 1, None),
                                           ("constraints stiffened", 100, 0.2 * h)):
            angles, qpos_mj, change, solref = mujoco_run(
                args.model, model, q_start, w_start, h, steps, crank, substeps, timeconst)
            angles = np.r_[q_start[crank], angles]
            crank_mj = angles if crank_mj is None else crank_mj
            opened = float(np.max(np.abs(lib.loop_constraints(
                symgen.from_mujoco(model, qpos_mj)[0]))))
            print(f"  {label} (solref {solref:g} s, step {h / substeps:g} s): final {names[crank]} "
                  f"{angles[-1]:.6f} rad, largest difference "
                  f"{np.max(np.abs(angles - symgen_cranks)):.1e} rad, energy change "
                  f"{change:.1e} J, final |Phi| {opened:.1e}")
    if args.plot:
        save_plot(args.plot, np.array(times), np.array(cranks), np.array(energies),
                  crank_mj, names[crank])


if __name__ == "__main__":
    main()

"""A robot read from MJCF: its C kernels generated, compiled and checked against MuJoCo.

    python examples/mjcf_robot.py [MODEL.xml] [--states 5] [--seed 0]

MODEL.xml defaults to a real robot shipped by an installed package: gymnasium's ant
(``gymnasium/envs/mujoco/assets/ant.xml``), else dm_control's suite humanoid
(``dm_control/suite/humanoid.xml``), else examples/models/gripper_arm.xml (neither package is
a dependency of symgen); the first line says which file was used. Needs MuJoCo
(``pip install 'symgen[mjcf]'``). The script

1. loads the file (MuJoCo compiles it, symgen maps the compiled model) and prints what
   ``symgen info`` summarises: name, nq/nv, loop joints, couplings, motors, force elements
   and the reader's notes (``model.notes``: what it left out);
2. generates the default kernels and compiles them (``symgen.compile_kernels``);
3. checks the compiled ``mass_matrix`` and ``inverse_dynamics`` against MuJoCo itself at the
   file's first keyframe (if any) and at ``--states`` random MuJoCo states (seeded): each
   MuJoCo state is mapped with ``symgen.from_mujoco``, MuJoCo's matrix and forces are
   mapped into symgen's coordinates by T(q), the MuJoCo velocity of each unit symgen
   velocity (columns ``symgen.to_mujoco(model, q, e_k)[1]``): M = Tᵀ M_mj T, τ = Tᵀ τ_mj with
   τ_mj = ``mj_inverse`` at (qpos, T v, T a + c), c = ``to_mujoco(model, q, v, 0)[2]`` (a free
   joint's velocity-product term; zero without free joints). T covers free joints and
   couplings (a coupled joint moves with its master) alike. MuJoCo runs with constraints,
   joint springs and dampers disabled: symgen's tree kernels are those of the spanning tree
   (a model with ``<connect>``/``<weld>`` loops is compared with its equality constraints
   off; the constrained kernels handle the loops) and take the force elements as joint
   forces;
4. prints the largest relative difference of each kernel (max|symgen − MuJoCo| / max(max
   |MuJoCo|, 1) over every element and state), how a controller calls a kernel from a
   MuJoCo state (with the motor inputs tau/gear at the keyframe, else qpos0, at rest: the
   spanning tree's for a model with loops), and PASS or FAIL (tolerance 1e-9); exits with
   status 1 on FAIL.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import warnings
from pathlib import Path

import mujoco
import numpy as np

import symgen
from symgen.io.mjcf_state import forces_to_mujoco

MODELS = Path(__file__).resolve().parent / "models"
TOLERANCE = 1e-9
#: Real robots shipped by packages that may be installed: (package, file inside it).
CANDIDATES = [("gymnasium", "envs/mujoco/assets/ant.xml"),
              ("dm_control", "suite/humanoid.xml")]


def default_model() -> tuple[Path, str]:
    """The first candidate robot whose package is installed, else the gripper arm."""
    for package, relative in CANDIDATES:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin is not None:
            path = Path(spec.origin).parent / relative
            if path.is_file():
                return path, f"from the installed package {package}"
    return MODELS / "gripper_arm.xml", "gymnasium and dm_control are not installed"


def summary(model: symgen.Model) -> list[str]:
    """What ``symgen info`` summarises, one item a line."""
    fc = model.file_coordinates
    lines = [f"{model.name}: nq = {model.nq}, nv = {model.nv} (MuJoCo qpos {fc.nq}, "
             f"qvel {fc.nv}); {model.nbodies} bodies"]
    loops = [f"{j.name} ({j.type.value}, {j.parent} -> {j.child})" for j in model.loop_joints]
    lines.append(f"  loop joints: {', '.join(loops) or 'none'}")
    couplings = [f"q[{c.joint}] = {float(c.ratio):g} q[{c.master}] + {float(c.offset):g}"
                 for c in model.couplings]
    lines.append(f"  couplings: {', '.join(couplings) or 'none'}")
    motors = [f"{m.name} ({m.joint}, gear {m.gear:g})" for m in model.motors]
    lines.append(f"  motors: {', '.join(motors) or 'none'}")
    lines.append(f"  force elements: {len(model.force_elements)} (joint springs and dampers: "
                 "inputs of the tree kernels, disabled in MuJoCo for the comparison)")
    keys = ", ".join(k.name or "(unnamed)" for k in model.keyframes)
    lines.append(f"  keyframes: {keys or 'none'}")
    lines += ["  notes from the reader:"] + [f"    {n}" for n in model.notes]
    return lines


def velocity_map(model: symgen.Model, q: np.ndarray) -> np.ndarray:
    """T(q): column k is MuJoCo's qvel for the unit symgen velocity e_k (qvel = T v)."""
    return np.column_stack([symgen.to_mujoco(model, q, e)[1] for e in np.eye(model.nv)])


def mujoco_states(m, model: symgen.Model, count: int, seed: int) -> list[tuple[str, ...]]:
    """(label, qpos, qvel): the first keyframe, then ``count`` random states."""
    states = []
    if model.keyframes:
        key = model.keyframes[0]
        states.append((f"keyframe {key.name!r}", np.array(key.qpos), np.array(key.qvel)))
    rng = np.random.default_rng(seed)
    for i in range(count):
        qpos = m.qpos0.copy()
        mujoco.mj_integratePos(m, qpos, rng.uniform(-1.0, 1.0, m.nv), 1.0)  # also quaternions
        states.append((f"random {i}", qpos, rng.normal(size=m.nv)))
    return states


def relative(actual: np.ndarray, expected: np.ndarray) -> float:
    return float(np.max(np.abs(actual - expected)) / max(float(np.max(np.abs(expected))), 1.0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", type=Path, default=None,
                        help="an MJCF file (default: ant, humanoid or gripper_arm, see above)")
    parser.add_argument("--states", type=int, default=5, help="random states (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    path, why = (args.model, "given") if args.model else default_model()
    print(f"model file: {path} ({why})")
    model = symgen.load(path)
    print("\n".join(summary(model)))

    start = time.perf_counter()
    with warnings.catch_warnings():  # the force elements left out: said in the summary
        warnings.simplefilter("ignore", UserWarning)
        ks = symgen.generate(model)
    derived = time.perf_counter() - start
    start = time.perf_counter()
    lib = symgen.compile_kernels(ks)
    print(f"{len(ks.programs)} kernels derived in {derived:.1f} s, compiled in "
          f"{time.perf_counter() - start:.1f} s (cffi, cached)")

    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
                           | mujoco.mjtDisableBit.mjDSBL_SPRING
                           | mujoco.mjtDisableBit.mjDSBL_DAMPER)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(args.seed + 1)
    worst = {"mass_matrix": (0.0, ""), "inverse_dynamics": (0.0, "")}
    states = mujoco_states(m, model, args.states, args.seed)
    for label, qpos, qvel in states:
        q, v, _ = symgen.from_mujoco(model, qpos, qvel)  # MuJoCo's state in symgen's q, v
        # the same state with coupled joints on their masters (unchanged without couplings)
        qpos, qvel, _ = symgen.to_mujoco(model, q, v)
        a = rng.normal(size=model.nv)
        t = velocity_map(model, q)
        c = symgen.to_mujoco(model, q, v, np.zeros(model.nv))[2]
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        m_mj = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, m_mj)
        d.qacc[:] = t @ a + c
        mujoco.mj_inverse(m, d)
        errors = {"mass_matrix": relative(lib.mass_matrix(q), t.T @ m_mj @ t),
                  "inverse_dynamics": relative(lib.inverse_dynamics(q, v, a),
                                               t.T @ d.qfrc_inverse)}
        for name, error in errors.items():
            if error >= worst[name][0]:
                worst[name] = (error, label)

    print(f"compared with MuJoCo {mujoco.__version__} (mj_fullM, mj_inverse; constraints, "
          f"springs and dampers disabled) at {len(states)} states "
          f"({'keyframe and ' if model.keyframes else ''}{args.states} random, seed "
          f"{args.seed}):")
    for name, (error, label) in worst.items():
        print(f"  {name:<17} largest relative difference {error:.1e} ({label})")

    print("a controller calls the kernels from MuJoCo's state (forces_to_mujoco is in "
          "symgen.io.mjcf_state):")
    print("  q, v, _ = symgen.from_mujoco(model, d.qpos, d.qvel); "
          "tau = lib.inverse_dynamics(q, v, a_des)")
    print("  d.qfrc_applied[:] = forces_to_mujoco(model, q, tau)")
    key = model.keyframes[0] if model.keyframes else None
    pose = f"keyframe {key.name!r}" if key else "qpos0"
    q, _, _ = symgen.from_mujoco(model, key.qpos if key else m.qpos0)
    qfrc = forces_to_mujoco(model, q, lib.inverse_dynamics(q, np.zeros(model.nv),
                                                           np.zeros(model.nv)))
    layout = model.file_coordinates
    inputs = [f"{mo.name} {qfrc[layout.joint(mo.joint).dof_address] / mo.gear + 0.0:.3g}"
              for mo in model.motors]
    if inputs:
        tree = ", spanning tree" if model.loop_joints else ""
        print(f"  e.g. at {pose}, v = a_des = 0{tree}: motor inputs tau/gear "
              + ", ".join(inputs[:5]) + (", ..." if len(inputs) > 5 else ""))

    worst_error = max(error for error, _ in worst.values())
    if worst_error > TOLERANCE:
        print(f"FAIL: symgen and MuJoCo differ by {worst_error:.1e} > {TOLERANCE:.0e}")
        return 1
    print(f"PASS: symgen's compiled kernels agree with MuJoCo to {worst_error:.1e} "
          f"(tolerance {TOLERANCE:.0e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

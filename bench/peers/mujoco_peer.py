"""MuJoCo's C API timed on the same model and states as symgen's generated kernels.

The symgen model is written as MJCF (:func:`mjcf_from_symgen`): one MuJoCo body per symgen
body, its frame at the inboard joint (MuJoCo body ``pos``/``quat`` = the joint placement,
joint anchor at the body origin), ``<inertial>`` with the full inertia about the centre of
mass, no geoms, no limits, damping, armature or friction loss, and every pipeline stage a bare
rigid-body dynamics call would not do disabled (contact, constraint, ...). Gravity stays.

State conversion, symgen -> MuJoCo (:func:`to_mujoco`), per joint:

- revolute / continuous (hinge), prismatic (slide): the same numbers; MuJoCo numbers its
  joints in depth-first body order, symgen base to tip, so both are placed by MuJoCo's
  ``jnt_qposadr`` / ``jnt_dofadr`` of the joint (named ``j<i>`` after symgen's index).
- free (root joint, placement P): symgen q = (p, x, y, z, w) and v = (ω_b, v_b), both in the
  body frame; MuJoCo qpos = (P·p, quaternion of P·R scalar FIRST) and qvel = (R_w v_b, ω_b)
  with R_w the body's world rotation: linear velocity of the body origin in world axes,
  angular velocity in body axes. qacc is the time derivative of qvel, so its linear part is
  R_w (a_lin + ω_b × v_b) and its angular part a_ang. Generalised forces have the same power
  pairing: qfrc = (R_w f_b, n_b), the moment taken about the body origin.

So qvel = T v, qfrc = T τ and qacc = T a + c with T orthogonal (a permutation with 3x3
rotation blocks), and back: τ = Tᵀ qfrc, M = Tᵀ M_mj T, a = Tᵀ (qacc − c).

A C99 driver (:data:`DRIVER`) linked to the wheel's ``libmujoco.so`` loads the MJCF, prints
the first state's results (checked in Python against :mod:`symgen.reference`) and times each
call sequence: ``repeats`` passes over all states, the median pass divided by the number of
states (ns per call).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from symgen import Model
from symgen import reference as ref
from symgen.model import JointType
from symgen.reference.spatial import quaternion_to_rotation

from ..common import CHECK_TOLERANCE, TIMING_DIR, random_states, relative_error

Array = np.ndarray

KEYS = ("mujoco rne", "mujoco inverse", "mujoco crb", "mujoco forward")
TIMED = {
    "mujoco rne": "copy qpos, qvel, qacc into mjData, then mj_kinematics, mj_comPos, "
    "mj_comVel and mj_rne(m, d, 1, out) (out = M(q) qacc + bias, gravity included).",
    "mujoco inverse": "copy qpos, qvel, qacc into mjData, then mj_inverse(m, d) (the full "
    "public inverse-dynamics pipeline, contacts and constraints disabled; qfrc_inverse).",
    "mujoco crb": "copy qpos into mjData, then mj_kinematics, mj_comPos, mj_makeM (= mj_crb "
    "plus tendon armature, none here) and mj_fullM into a dense nv x nv array.",
    "mujoco forward": "copy qpos, qvel, qfrc_applied (= tau) into mjData, then mj_forward(m, "
    "d) (the full forward pipeline, contacts and constraints disabled; qacc).",
}
SUPPORTED = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC, JointType.FREE)
#: <option><flag> attributes set to "disable" (MuJoCo 4.0 names); gravity stays enabled.
DISABLED = (
    "constraint",
    "equality",
    "frictionloss",
    "limit",
    "contact",
    "spring",
    "damper",
    "clampctrl",
    "warmstart",
    "actuation",
    "sensor",
    "island",
    "autoreset",
)

#: The opening of a MuJoCo timing driver's main(): arguments S R nq nv, model.xml loaded and
#: checked, mjData, and the states' qpos and qvel read (shared with bench.loop_dynamics).
DRIVER_MAIN = r"""int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: driver S R nq nv\n"); return 2; }
    const int S = atoi(argv[1]), R = atoi(argv[2]), NQ = atoi(argv[3]), NV = atoi(argv[4]);
    char error[1000] = "";
    mjModel *m = mj_loadXML("model.xml", NULL, error, sizeof(error));
    if (!m) { fprintf(stderr, "mj_loadXML: %s\n", error); return 2; }
    if (m->nq != NQ || m->nv != NV) { fprintf(stderr, "nq/nv mismatch\n"); return 2; }
    mjData *d = mj_makeData(m);
    const size_t bq = (size_t)NQ * sizeof(mjtNum), bv = (size_t)NV * sizeof(mjtNum);
    double *qpos = bench_load("qpos.bin", (size_t)S * NQ);
    double *qvel = bench_load("qvel.bin", (size_t)S * NV);
"""

DRIVER = r"""
#include "timing.h"
#include <string.h>
#include <mujoco/mujoco.h>

/* times the statements that follow over the states and prints "LABEL": ns per call */
#define TIME(LABEL, ...) do { \
    double t_; \
    BENCH_TIME(t_, S, R, passes, __VA_ARGS__); \
    printf("%s\"%s\": %.3f", first ? "" : ", ", LABEL, t_); \
    first = 0; \
} while (0)

""" + DRIVER_MAIN + r"""    double *qacc = bench_load("qacc.bin", (size_t)S * NV);
    double *qfrc = bench_load("qfrc.bin", (size_t)S * NV);
    mjtNum *out = (mjtNum *)calloc((size_t)NV * NV + 1, sizeof(mjtNum));
    double *passes = (double *)malloc((size_t)R * sizeof(double));
    volatile double sink = 0;
    int first = 1;

    /* first state: one result of each call sequence, for the check in Python */
    printf("{");
    memcpy(d->qpos, qpos, bq); memcpy(d->qvel, qvel, bv); memcpy(d->qacc, qacc, bv);
    mj_kinematics(m, d); mj_comPos(m, d); mj_comVel(m, d); mj_rne(m, d, 1, out);
    bench_print("mujoco rne", out, NV);
    mj_inverse(m, d);
    bench_print("mujoco inverse", d->qfrc_inverse, NV);
    mj_kinematics(m, d); mj_comPos(m, d); mj_makeM(m, d); mj_fullM(m, d, out);
    bench_print("mujoco crb", out, NV * NV);
    memcpy(d->qfrc_applied, qfrc, bv);
    mj_forward(m, d);
    bench_print("mujoco forward", d->qacc, NV);
    mju_zero(d->qfrc_applied, NV);

    printf("\"ns\": {");
    /* state k's position, velocity and acceleration into mjData */
#define SET_STATE(k) \
    memcpy(d->qpos, qpos + (size_t)(k) * NQ, bq); \
    memcpy(d->qvel, qvel + (size_t)(k) * NV, bv); \
    memcpy(d->qacc, qacc + (size_t)(k) * NV, bv)
    TIME("mujoco rne",
         SET_STATE(k);
         mj_kinematics(m, d); mj_comPos(m, d); mj_comVel(m, d); mj_rne(m, d, 1, out);
         sink = sink + out[0];);
    TIME("mujoco inverse",
         SET_STATE(k);
         mj_inverse(m, d);
         sink = sink + d->qfrc_inverse[0];);
    TIME("mujoco crb",
         memcpy(d->qpos, qpos + (size_t)k * NQ, bq);
         mj_kinematics(m, d); mj_comPos(m, d); mj_makeM(m, d); mj_fullM(m, d, out);
         sink = sink + out[0];);
    TIME("mujoco forward",
         memcpy(d->qpos, qpos + (size_t)k * NQ, bq);
         memcpy(d->qvel, qvel + (size_t)k * NV, bv);
         memcpy(d->qfrc_applied, qfrc + (size_t)k * NV, bv);
         mj_forward(m, d);
         sink = sink + d->qacc[0];);
    printf("}}\n");
    mj_deleteData(d);
    mj_deleteModel(m);
    return sink == 12345.678 ? 1 : 0;
}
"""


# ----------------------------------------------------------------------------- availability
def _paths() -> tuple[Path, Path]:
    """The wheel's C include directory and its ``libmujoco.so.*``."""
    import mujoco

    pkg = Path(mujoco.__file__).resolve().parent
    include = pkg / "include"
    if not (include / "mujoco" / "mujoco.h").is_file():
        raise FileNotFoundError(f"no C headers in the mujoco wheel ({include / 'mujoco'})")
    libs = sorted(pkg.glob("libmujoco.so*"))
    if not libs:
        raise FileNotFoundError(f"no libmujoco.so* in the mujoco wheel ({pkg})")
    return include, libs[-1]


def unavailable() -> str | None:
    """None when MuJoCo's C API can be used here, else a one-line reason."""
    try:
        import mujoco  # noqa: F401
    except ImportError as exc:
        return f"the mujoco Python package is not installed ({exc})"
    try:
        _paths()
    except FileNotFoundError as exc:
        return str(exc)
    if shutil.which("gcc") is None:
        return "gcc is needed to build the MuJoCo driver"
    return None


def versions() -> dict[str, str]:
    """Versions of the peer's software."""
    import mujoco

    return {"mujoco": mujoco.__version__}


# ----------------------------------------------------------------------------- MJCF
def _fmt(*values: float) -> str:
    return " ".join(repr(float(x)) for x in values)


def _quat_wxyz(r: Array) -> Array:
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    t = np.trace(r)
    k = int(np.argmax([t, r[0, 0], r[1, 1], r[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = [(r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def _numeric(model: Model) -> Model:
    """A copy without runtime parameters, every joint type checked."""
    model = model.resolve()
    for i, joint in enumerate(model.joints):
        if joint.type not in SUPPORTED:
            raise ValueError(
                f"MuJoCo peer: joint {joint.name!r} of type {joint.type.value!r} "
                "is not supported (revolute, continuous, prismatic, root free)"
            )
        if joint.type is JointType.FREE and model.parents[i] != -1:
            raise ValueError(f"MuJoCo peer: free joint {joint.name!r} is not on the root")
    return model


def mjcf_from_symgen(model: Model) -> str:
    """MJCF of a symgen model: body ``b<i>`` moved by joint ``j<i>`` (symgen indices)."""
    model = _numeric(model)
    kinds = {
        JointType.REVOLUTE: "hinge",
        JointType.CONTINUOUS: "hinge",
        JointType.PRISMATIC: "slide",
        JointType.FREE: "free",
    }

    def body(i: int, depth: int) -> list[str]:
        pad = "  " * depth
        b, j = model.bodies[i], model.joints[i]
        rot = np.array(j.placement.rotation, dtype=float)
        inertia = np.array(b.inertia, dtype=float)
        full = (
            inertia[0, 0],
            inertia[1, 1],
            inertia[2, 2],
            inertia[0, 1],
            inertia[0, 2],
            inertia[1, 2],
        )
        lines = [
            f'{pad}<body name="b{i}" pos="{_fmt(*j.placement.translation)}" '
            f'quat="{_fmt(*_quat_wxyz(rot))}">',
            f'{pad}  <inertial pos="{_fmt(*b.com)}" mass="{_fmt(b.mass)}" '
            f'fullinertia="{_fmt(*full)}"/>',
        ]
        if j.type is JointType.FREE:
            lines.append(f'{pad}  <joint name="j{i}" type="free"/>')
        else:
            lines.append(
                f'{pad}  <joint name="j{i}" type="{kinds[j.type]}" pos="0 0 0" '
                f'axis="{_fmt(*j.axis)}"/>'
            )
        for c in model.children(i):
            lines += body(c, depth + 1)
        lines.append(f"{pad}</body>")
        return lines

    flags = " ".join(f'{name}="disable"' for name in DISABLED)
    lines = [
        f"<mujoco model={quoteattr('symgen_' + model.name)}>",
        '  <compiler angle="radian" inertiafromgeom="false" autolimits="true" '
        'balanceinertia="false" boundmass="0" boundinertia="0"/>',
        f'  <option gravity="{_fmt(*model.gravity)}">',
        f"    <flag {flags}/>",
        "  </option>",
        "  <default>",
        '    <joint armature="0" damping="0" frictionloss="0" stiffness="0" limited="false"/>',
        "  </default>",
        "  <worldbody>",
    ]
    for i, parent in enumerate(model.parents):
        if parent == -1:
            lines += body(i, 2)
    lines += ["  </worldbody>", "</mujoco>", ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- states
@dataclass(frozen=True)
class Layout:
    """Where each symgen joint's coordinates sit in MuJoCo's qpos and dof vectors."""

    model: Model
    qpos_adr: tuple[int, ...]
    dof_adr: tuple[int, ...]


def layout(model: Model, xml: str) -> Layout:
    """Load the MJCF with the Python bindings, check it and read the joint addresses."""
    import mujoco

    model = _numeric(model)
    try:
        mj = mujoco.MjModel.from_xml_string(xml)
    except ValueError as exc:
        raise RuntimeError(f"MuJoCo rejected the MJCF of {model.name!r}: {exc}") from exc
    if (mj.nq, mj.nv, mj.nbody) != (model.nq, model.nv, model.nbodies + 1):
        raise RuntimeError(
            f"MuJoCo model of {model.name!r}: nq, nv, nbody = "
            f"{mj.nq}, {mj.nv}, {mj.nbody}; expected {model.nq}, {model.nv}, "
            f"{model.nbodies + 1}"
        )
    qadr, dadr = [], []
    types = {
        JointType.FREE: mujoco.mjtJoint.mjJNT_FREE,
        JointType.PRISMATIC: mujoco.mjtJoint.mjJNT_SLIDE,
    }
    for i, joint in enumerate(model.joints):
        jid = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, f"j{i}")
        if jid < 0 or mj.jnt_type[jid] != types.get(joint.type, mujoco.mjtJoint.mjJNT_HINGE):
            raise RuntimeError(f"MuJoCo model of {model.name!r}: joint j{i} missing or mistyped")
        qadr.append(int(mj.jnt_qposadr[jid]))
        dadr.append(int(mj.jnt_dofadr[jid]))
    return Layout(model, tuple(qadr), tuple(dadr))


def transform(lay: Layout, q: Array, v: Array) -> tuple[Array, Array, Array]:
    """MuJoCo's qpos, and T, c with qvel = T v, qfrc = T τ, qacc = T a + c (T orthogonal)."""
    model = lay.model
    qpos = np.zeros(model.nq)
    t = np.zeros((model.nv, model.nv))
    c = np.zeros(model.nv)
    for i, joint in enumerate(model.joints):
        qs, vs = model.q_slices[joint.name], model.v_slices[joint.name]
        qa, da = lay.qpos_adr[i], lay.dof_adr[i]
        if joint.type is not JointType.FREE:
            qpos[qa] = q[qs][0]
            t[da, vs.start] = 1.0
            continue
        qj, vj = q[qs], v[vs]
        pr = np.array(joint.placement.rotation, dtype=float)
        pt = np.array(joint.placement.translation, dtype=float)
        rot = pr @ quaternion_to_rotation(qj[3:7])  # body -> world
        qpos[qa : qa + 3] = pr @ qj[:3] + pt
        qpos[qa + 3 : qa + 7] = _quat_wxyz(rot)
        t[da : da + 3, vs.start + 3 : vs.start + 6] = rot  # linear: world axes
        t[da + 3 : da + 6, vs.start : vs.start + 3] = np.eye(3)  # angular: body axes
        c[da : da + 3] = rot @ np.cross(vj[:3], vj[3:])
    return qpos, t, c


def to_mujoco(lay: Layout, states: Mapping[str, Array]) -> dict[str, Array]:
    """symgen states (q, v, a, tau) as MuJoCo's qpos, qvel, qacc, qfrc (one row per state)."""
    out: dict[str, list[Array]] = {"qpos": [], "qvel": [], "qacc": [], "qfrc": []}
    for q, v, a, tau in zip(states["q"], states["v"], states["a"], states["tau"], strict=True):
        qpos, t, c = transform(lay, q, v)
        out["qpos"].append(qpos)
        out["qvel"].append(t @ v)
        out["qacc"].append(t @ a + c)
        out["qfrc"].append(t @ tau)
    return {k: np.ascontiguousarray(rows, dtype=np.float64) for k, rows in out.items()}


# ----------------------------------------------------------------------------- measure
def build_driver(work: Path, flags: Sequence[str]) -> Path:
    """Compile :data:`DRIVER` in ``work`` with ``flags``, linked to the wheel's libmujoco."""
    include, lib = _paths()
    (work / "driver.c").write_text(DRIVER)
    cmd = [
        "gcc",
        "-std=c99",
        *flags,
        f"-I{include}",
        f"-I{TIMING_DIR}",
        "driver.c",
        "-o",
        "driver",
        str(lib),
        f"-Wl,-rpath,{lib.parent}",
        "-lm",
    ]
    run = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"building the MuJoCo driver failed: {' '.join(cmd)}\n{run.stderr}")
    return work / "driver"


def measure(
    model: Model, states: Mapping[str, Array], repeats: int, flags: Sequence[str], work: Path | str
) -> dict[str, dict[str, float | str]]:
    """Time MuJoCo's rne, inverse, crb and forward calls on ``states`` (symgen layout, one row
    per state); ns per call (median of ``repeats`` passes) and the first state's error against
    :mod:`symgen.reference`. Raises RuntimeError when an error exceeds ``CHECK_TOLERANCE``."""
    return prepare(model, states, flags, work)(repeats)


def prepare(
    model: Model, states: Mapping[str, Array], flags: Sequence[str], work: Path | str
) -> Callable[[int], dict[str, dict[str, float | str]]]:
    """Write the model and states and build the driver in ``work``; return ``run(repeats)``,
    which times the calls and checks the first state (what :func:`measure` returns)."""
    work = Path(work)
    model = _numeric(model)
    xml = mjcf_from_symgen(model)
    (work / "model.xml").write_text(xml)
    lay = layout(model, xml)
    arrays = {k: np.asarray(states[k], dtype=np.float64) for k in ("q", "v", "a", "tau")}
    n = arrays["q"].shape[0]
    if arrays["q"].shape != (n, model.nq) or any(
        arrays[k].shape != (n, model.nv) for k in ("v", "a", "tau")
    ):
        raise ValueError(
            f"states must be (S, nq) for q and (S, nv) for v, a, tau "
            f"(nq = {model.nq}, nv = {model.nv})"
        )
    for key, rows in to_mujoco(lay, arrays).items():
        rows.tofile(work / f"{key}.bin")
    driver = build_driver(work, flags)
    return lambda repeats: _run(model, lay, arrays, driver, repeats)


def _run(
    model: Model, lay: Layout, arrays: Mapping[str, Array], driver: Path, repeats: int
) -> dict[str, dict[str, float | str]]:
    n = arrays["q"].shape[0]
    work = driver.parent
    run = subprocess.run(
        [str(driver), str(n), str(repeats), str(model.nq), str(model.nv)],
        cwd=work,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        raise RuntimeError(f"MuJoCo driver failed on {model.name!r}: {run.stderr.strip()}")
    try:
        out = json.loads(run.stdout)
    except json.JSONDecodeError as exc:  # e.g. a NaN printed by the driver
        raise RuntimeError(
            f"MuJoCo driver output unreadable on {model.name!r}: {run.stdout[:200]!r}"
        ) from exc

    q, v, a, tau = (arrays[k][0] for k in ("q", "v", "a", "tau"))
    _, t, c = transform(lay, q, v)
    nv = model.nv
    expected_id = ref.inverse_dynamics(model, q, v, a)
    mine = {
        "mujoco rne": (t.T @ np.array(out["mujoco rne"]), expected_id),
        "mujoco inverse": (t.T @ np.array(out["mujoco inverse"]), expected_id),
        "mujoco crb": (
            t.T @ np.array(out["mujoco crb"]).reshape(nv, nv) @ t,
            ref.mass_matrix(model, q),
        ),
        "mujoco forward": (
            t.T @ (np.array(out["mujoco forward"]) - c),
            ref.forward_dynamics(model, q, v, tau),
        ),
    }
    errors = {key: relative_error(x, y) for key, (x, y) in mine.items()}
    bad = {k: e for k, e in errors.items() if not e <= CHECK_TOLERANCE}
    if bad:
        raise RuntimeError(
            f"MuJoCo and symgen.reference disagree on {model.name!r}: "
            + ", ".join(f"{k} {e:.1e}" for k, e in bad.items())
        )
    return {
        "ns": {k: float(out["ns"][k]) for k in KEYS},
        "check_error": errors,
        "timed": dict(TIMED),
    }


def _self_test() -> None:
    """Measure UR5, Solo-12 (floating base) and a 5-link chain; print the results."""
    import tempfile

    import symgen
    from symgen.io.robots import robot_urdf, spatial_chain

    reason = unavailable()
    if reason:
        raise SystemExit(f"MuJoCo peer unavailable: {reason}")
    print(versions())
    models = [
        ("ur5", symgen.load(robot_urdf("ur5"))),
        ("solo12", symgen.load(robot_urdf("solo12"), floating_base=True)),
        ("chain5", spatial_chain(5)),
    ]
    for name, model in models:
        with tempfile.TemporaryDirectory() as tmp:
            result = measure(model, random_states(model, 200), 5, ["-O3"], tmp)
        ns = "  ".join(f"{k.split()[1]} {result['ns'][k]:8.1f} ns" for k in KEYS)
        err = max(result["check_error"].values())
        print(f"{name:8s} nv={model.nv:3d}  {ns}  max error {err:.1e}")


if __name__ == "__main__":
    _self_test()

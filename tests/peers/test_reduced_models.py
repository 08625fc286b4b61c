"""Reduced models: joints locked at given values (``lock``, ``--lock``), against the full
model (a locked joint is one whose velocity and acceleration are zero) and against
Pinocchio's ``buildReducedModel``: Panda (fingers, elbow) and Romeo (hands)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner
from kernel_checks import TOLERANCE, check_kernel_set
from random_models import build, builder, random_spec

import symgen
import symgen.reference as ref
from symgen import generate
from symgen.apps.cli import main, parse_locks
from symgen.apps.verify import random_states, relative_error
from symgen.errors import ModelError, SymgenError
from symgen.io import load
from symgen.io.builder import ModelBuilder
from symgen.io.robots import example_robot_data_dir, robot_urdf
from symgen.model import JointType
from symgen.peers.pinocchio import Bridge

ROMEO = "romeo_description/urdf/romeo.urdf"
#: Romeo's hands: every finger and thumb joint mimics LHand / RHand, and every finger link
#: is massless, so the full model is rejected; locking the two masters locks all 24.
ROMEO_LOCKS = {"LHand": None, "RHand": None}
#: Seeds of the random locked trees: together they lock every joint type (checked below).
SEEDS = range(9)


def romeo_path() -> str:
    return str(example_robot_data_dir() / ROMEO)


def sym(m: np.ndarray) -> np.ndarray:
    return np.triu(m) + np.triu(m, 1).T  # Pinocchio fills the upper triangle only


# --------------------------------------------------------------------------- vs full model
def lock_random_joints(seed: int):
    """A random tree (every joint type), the same tree with about half of its moving joints
    locked at random configurations, and those configurations."""
    spec = random_spec(seed, n_bodies=7)
    full = build(spec)
    rng = np.random.default_rng(seed + 31)
    q_full = ref.random_configuration(full, rng)
    moving = list(full.joints)
    chosen = [j for j in moving if rng.random() < 0.5] or moving[:1]
    b = builder(spec)
    values = {j.name: q_full[full.q_slices[j.name]] for j in chosen}
    for name, value in values.items():
        b.lock(name, list(value) if len(value) > 1 else float(value[0]))
    return full, b.build(), values


def embed(full, reduced, values, q, v, a):
    """Full-model q, v, a with the locked joints at their values and at rest."""
    qf, vf, af = np.zeros(full.nq), np.zeros(full.nv), np.zeros(full.nv)
    for j in full.joints:
        qs, vs = full.q_slices[j.name], full.v_slices[j.name]
        if j.name in values:
            qf[qs] = values[j.name]
        else:
            qf[qs] = q[reduced.q_slices[j.name]]
            vf[vs] = v[reduced.v_slices[j.name]]
            af[vs] = a[reduced.v_slices[j.name]]
    return qf, vf, af


def kept_dofs(full, reduced) -> np.ndarray:
    return np.concatenate(
        [np.arange(full.nv)[full.v_slices[name]] for name in reduced.joint_names]
    ).astype(int)


@pytest.mark.parametrize("seed", SEEDS)
def test_locked_tree_equals_full_tree_at_rest_in_the_locked_joints(seed):
    """Locking J at θ0 (placement ∘ X_J(θ0), then lumping) gives the dynamics of the full
    model with q_J = θ0 and v_J = a_J = 0: ID and M restricted to the kept coordinates, the
    same kinetic energy, the same world pose of every body and frame, and the same potential
    energy up to a constant (bodies lumped into the fixed root drop out of it)."""
    full, reduced, values = lock_random_joints(seed)
    assert reduced.nv == full.nv - sum(full.joints[full.joint_names.index(n)].nv for n in values)
    assert set(reduced.locked_joint_names) == set(values)
    keep = kept_dofs(full, reduced)
    rng = np.random.default_rng(seed)
    offsets = []
    for _ in range(3):
        q = ref.random_configuration(reduced, rng)
        v, a = rng.standard_normal(reduced.nv), rng.standard_normal(reduced.nv)
        qf, vf, af = embed(full, reduced, values, q, v, a)
        assert relative_error(
            ref.inverse_dynamics(reduced, q, v, a), ref.inverse_dynamics(full, qf, vf, af)[keep]
        ) < 1e-11
        assert relative_error(
            ref.mass_matrix(reduced, q), ref.mass_matrix(full, qf)[np.ix_(keep, keep)]
        ) < 1e-11
        assert abs(ref.kinetic_energy(reduced, q, v) - ref.kinetic_energy(full, qf, vf)) < 1e-10
        offsets.append(ref.potential_energy(reduced, q) - ref.potential_energy(full, qf))
        fk_full, fk_red = ref.forward_kinematics(full, qf), ref.forward_kinematics(reduced, q)
        for name in [*full.body_names, *full.frame_names]:
            assert relative_error(fk_red[name], fk_full[name]) < 1e-11, name
    assert np.ptp(offsets) < 1e-10


@pytest.mark.parametrize("seed", range(2))
def test_kernels_of_a_locked_tree_match_the_reference(seed):
    _, reduced, _ = lock_random_joints(seed)
    ks = generate(reduced, ["inverse_dynamics", "mass_matrix", "forward_dynamics"])
    for state in random_states(ks, 3, seed):
        check_kernel_set(ks, state)


# --------------------------------------------------------------------------- Pinocchio
def pinocchio_reduced(path: str, model, free_flyer: bool) -> Bridge:
    """Pinocchio's own reading of the URDF, reduced by buildReducedModel at symgen's locks
    (the same joints, the same values), bridged to the symgen model by joint names."""
    full = (
        pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        if free_flyer
        else pin.buildModelFromUrdf(path)
    )
    q_ref = pin.neutral(full)
    ids = []
    for lock in model.locks:
        jid = full.getJointId(lock.name)
        j = full.joints[jid]
        values = [float(x) for x in lock.values]
        if j.nq == 2 and len(values) == 1:  # Pinocchio's continuous joint: (cos θ, sin θ)
            values = [np.cos(values[0]), np.sin(values[0])]
        q_ref[j.idx_q : j.idx_q + j.nq] = values
        ids.append(jid)
    return Bridge(model, pin.buildReducedModel(full, ids, q_ref))


def pin_errors(br: Bridge, n_states: int, seed: int, kernels=None) -> dict[str, float]:
    """Worst relative errors of the reference (or of ``kernels``, a compiled library) against
    Pinocchio's rnea, crba and aba."""
    model, pm, pd = br.model, br.pin_model, br.data
    rng = np.random.default_rng(seed)
    worst: dict[str, float] = {}
    for _ in range(n_states):
        q = ref.random_configuration(model, rng)
        v, a, tau = (rng.standard_normal(model.nv) for _ in range(3))
        qp, vp = br.q_to_pin(q), br.v_to_pin(v)
        expected = {
            "inverse_dynamics": br.v_from_pin(pin.rnea(pm, pd, qp, vp, br.v_to_pin(a))),
            "mass_matrix": br.matrix_from_pin(sym(pin.crba(pm, pd, qp))),
            "forward_dynamics": br.v_from_pin(pin.aba(pm, pd, qp, vp, br.v_to_pin(tau))),
        }
        if kernels is None:
            got = {
                "inverse_dynamics": ref.inverse_dynamics(model, q, v, a),
                "mass_matrix": ref.mass_matrix(model, q),
                "forward_dynamics": ref.forward_dynamics(model, q, v, tau),
            }
        else:
            got = {
                "inverse_dynamics": kernels.inverse_dynamics(q, v, a),
                "mass_matrix": kernels.mass_matrix(q),
                "forward_dynamics": kernels.forward_dynamics(q, v, tau),
            }
        for key, value in got.items():
            error = relative_error(np.reshape(value, expected[key].shape), expected[key])
            worst[key] = max(worst.get(key, 0.0), error)
    return worst


PANDA_LOCKS = [
    {"panda_finger_joint1": 0.02},  # panda_finger_joint2 mimics it: locked at 0.02 too
    {"panda_finger_joint1": 0.035, "panda_finger_joint2": 0.01},  # both given: each its own
    {"panda_joint4": -1.2, "panda_joint7": 0.4, "panda_finger_joint1": None},
]


@pytest.mark.parametrize("locks", PANDA_LOCKS, ids=["fingers", "both_fingers", "elbow_wrist"])
def test_panda_reference_matches_pinocchio_reduced_model(locks):
    path = str(robot_urdf("panda"))
    model = load(path, lock=locks)
    assert "panda_finger_joint2" in model.locked_joint_names
    br = pinocchio_reduced(path, model, free_flyer=False)
    worst = pin_errors(br, 10, 0)
    assert max(worst.values()) < TOLERANCE, worst
    # the frames of the locked links are where Pinocchio's reduced model puts them
    q = ref.random_configuration(model, np.random.default_rng(1))
    pin.framesForwardKinematics(br.pin_model, br.data, br.q_to_pin(q))
    fk = ref.forward_kinematics(model, q)
    for name in ("panda_leftfinger", "panda_rightfinger", "panda_hand"):
        expected = br.data.oMf[br.pin_model.getFrameId(name)].homogeneous
        assert relative_error(fk[name], expected) < TOLERANCE, name


def test_panda_mimic_joint_follows_its_master():
    model = load(str(robot_urdf("panda")), lock={"panda_finger_joint1": 0.03})
    locks = {lock.name: lock for lock in model.locks}
    assert locks["panda_finger_joint2"].values == (0.03,)
    assert locks["panda_finger_joint2"].master == "panda_finger_joint1"
    assert model.nv == 7 and model.couplings == ()


def test_panda_compiled_kernels_match_pinocchio_reduced_model():
    path = str(robot_urdf("panda"))
    model = load(path, lock={"panda_finger_joint1": 0.02})
    ks = generate(model, ["inverse_dynamics", "mass_matrix", "forward_dynamics"])
    worst = pin_errors(pinocchio_reduced(path, model, False), 20, 2, symgen.compile_kernels(ks))
    print("panda (fingers locked) vs pinocchio:", worst)
    assert max(worst.values()) < TOLERANCE, worst


def test_romeo_needs_its_hands_locked():
    with pytest.raises(ModelError, match=r"romeo\.urdf:\d+: body '\w+': zero mass .*lock the"):
        load(romeo_path(), floating_base=True)
    model = load(romeo_path(), floating_base=True, lock=ROMEO_LOCKS)
    assert (model.nq, model.nv) == (38, 37)
    assert len(model.locks) == 24 and model.couplings == ()
    assert {lock.master for lock in model.locks} == {None, "LHand", "RHand"}


def test_romeo_reference_matches_pinocchio_reduced_model():
    model = load(romeo_path(), floating_base=True, lock=ROMEO_LOCKS)
    worst = pin_errors(pinocchio_reduced(romeo_path(), model, True), 10, 0)
    assert max(worst.values()) < TOLERANCE, worst


@pytest.mark.slow
def test_romeo_compiled_kernels_match_pinocchio_reduced_model():
    """The Done-when point: Romeo with its hands locked, compiled ID, M and FD against
    Pinocchio's buildReducedModel of its own reading of romeo.urdf (about 2 minutes, mostly
    the C compiler)."""
    model = load(romeo_path(), floating_base=True, lock=ROMEO_LOCKS)
    ks = generate(model, ["inverse_dynamics", "mass_matrix", "forward_dynamics"])
    lib = symgen.compile_kernels(ks)
    worst = pin_errors(pinocchio_reduced(romeo_path(), model, True), 20, 3, lib)
    print("romeo (hands locked) vs pinocchio:", worst)
    assert max(worst.values()) < TOLERANCE, worst


# --------------------------------------------------------------------------- couplings, values
def small_chain() -> ModelBuilder:
    """base -j1(revolute)- l1 -j2(revolute, limits [-1, 1])- l2 -ball(spherical)- l3,
    j2 coupled to j1 by q2 = 2 q1 + 0.1, and a loop joint."""
    from symgen.model import Limits

    b = ModelBuilder("chain", root="base")
    for name in ("l1", "l2", "l3"):
        b.body(name, mass=1.0, com=(0.1, 0.02, 0.0), inertia=(0.01, 0.02, 0.02))
    b.joint("j1", "revolute", "base", "l1", axis=(0, 0, 1), limits=Limits(-2.0, 2.0))
    b.joint("j2", "revolute", "l1", "l2", xyz=(0.3, 0, 0), axis=(0, 1, 0), limits=Limits(-1, 1))
    b.joint("ball", "spherical", "l2", "l3", xyz=(0.3, 0, 0))
    b.loop_joint("close", "revolute", "l3", "base", xyz=(0.2, 0, 0))
    b.coupling("j2", "j1", ratio=2.0, offset=0.1)
    return b


def test_locking_a_master_locks_its_coupled_joint():
    b = small_chain()
    b.lock("j1", 0.3)
    model = b.build()
    assert model.joint_names == ["ball"]
    locks = {lock.name: lock for lock in model.locks}
    assert locks["j2"].values == pytest.approx((0.7,)) and locks["j2"].master == "j1"
    full = small_chain().build()
    q = np.array([0.1, 0.2, 0.3, np.sqrt(1 - 0.14)])
    qf = np.concatenate([[0.3], q])  # j2 = 2·j1 + 0.1 = 0.7 follows (no coordinate)
    fk, fk_full = ref.forward_kinematics(model, q), ref.forward_kinematics(full, qf)
    assert relative_error(fk["l3"], fk_full["l3"]) < 1e-14


def test_multi_dof_lock_values_and_neutral_default():
    b = small_chain()
    b.lock("ball")
    assert b.build().locks[-1].values == (0.0, 0.0, 0.0, 1.0)
    b = small_chain()
    s = np.sqrt(0.5)
    b.lock("ball", [0.0, 0.0, s, s])
    model = b.build()
    full = small_chain().build()
    q = np.array([0.4])  # j1; j2 follows it
    fk, fk_full = ref.forward_kinematics(model, q), ref.forward_kinematics(
        full, np.array([0.4, 0.0, 0.0, s, s])  # j2 follows j1: 2·0.4 + 0.1 = 0.9
    )
    assert relative_error(fk["l3"], fk_full["l3"]) < 1e-14


@pytest.mark.parametrize(
    ("lock", "message"),
    [
        (("nope",), r"lock of joint 'nope': the model has no joint 'nope'"),
        (("jj1",), r"no joint 'jj1' \(did you mean 'j1'\?\)"),
        (("close",), r"lock of joint 'close': a loop joint cannot be locked"),
        (("j1", 2.5), r"lock of joint 'j1': value 2\.5 is outside the joint limits \[-2, 2\]"),
        (("j1", 0.6), r"lock of joint 'j2': value 1\.3 \(ratio·q \+ offset of its master 'j1'\)"
                      r" is outside the joint limits \[-1, 1\]"),
        (("j2", 0.2), r"lock of joint 'j2': the joint is coupled to joint 'j1'.*lock 'j1'"),
        (("j1", [0.1, 0.2]), r"lock of joint 'j1': a revolute joint is locked by 1 value, got 2"),
        (("ball", 0.1), r"'ball': a spherical joint is locked by 4 values \(qx, qy, qz, qw\)"),
        (("ball", [0, 0, 0, 2]), r"'ball': the quaternion .* must have unit norm, got 2"),
        (("j1", "$nope"), r"lock of joint 'j1': unknown parameter 'nope'"),
    ],
)
def test_bad_locks_are_model_errors(lock, message):
    b = small_chain()
    with pytest.raises(ModelError, match=message):  # at lock() or at build()
        b.lock(*lock)
        b.build()


def test_locking_twice_or_a_fixed_joint_is_an_error():
    b = small_chain()
    b.lock("j1")
    with pytest.raises(ModelError, match=r"lock of joint 'j1': the joint is locked twice"):
        b.lock("j1", 0.1)
    b = small_chain()
    b.body("tool", mass=0.1)
    b.joint("weld", "fixed", "l3", "tool")
    b.lock("weld")
    with pytest.raises(ModelError, match=r"lock of joint 'weld': the joint is already fixed"):
        b.build()


def test_lock_value_may_be_a_parameter():
    b = small_chain()
    b.parameter("angle", 0.25)
    b.lock("j1", "$angle")
    model = b.build()
    assert model.parameter_names == ["angle"]
    full = small_chain().build()
    q = np.array([0.0, 0.0, 0.0, 1.0])
    for angle in (0.25, -0.3):
        fk = ref.forward_kinematics(model, q, params={"angle": angle})
        fk_full = ref.forward_kinematics(full, np.concatenate([[angle], q]))  # j2 follows
        assert relative_error(fk["l3"], fk_full["l3"]) < 1e-14


# --------------------------------------------------------------------------- YAML
YAML = """\
name: arm
bodies:
  - {name: l1, mass: 1.0, com: [0.1, 0, 0], inertia: [0.01, 0.02, 0.02]}
  - {name: l2, mass: 0.5, inertia: [0.01, 0.01, 0.01]}
  - {name: l3, mass: 0.2, inertia: [0.01, 0.01, 0.01]}
joints:
  - {name: j1, type: revolute, parent: ground, child: l1, axis: [0, 0, 1]}
  - {name: j2, type: prismatic, parent: l1, child: l2, origin: {xyz: [0.3, 0, 0]},
     axis: [1, 0, 0], limits: {lower: 0, upper: 0.2}}
  - {name: j3, type: spherical, parent: l2, child: l3, origin: {xyz: [0.1, 0, 0]}}
lock:
  j2: 0.1
  j3: null
"""


def test_yaml_lock_section_and_load_argument(tmp_path: Path):
    path = tmp_path / "arm.yaml"
    path.write_text(YAML)
    model = load(path)
    assert model.joint_names == ["j1"]
    assert [(lock.name, lock.values) for lock in model.locks] == [
        ("j2", (0.1,)),
        ("j3", (0.0, 0.0, 0.0, 1.0)),
    ]
    # the load argument adds to the file's section and overrides it for the same joint
    model = load(path, lock={"j2": 0.15, "j1": 0.5})
    assert [(lock.name, lock.values) for lock in model.locks] == [
        ("j1", (0.5,)),
        ("j2", (0.15,)),
        ("j3", (0.0, 0.0, 0.0, 1.0)),
    ]
    assert model.nv == 0


def test_yaml_bad_lock_names_file_and_line(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text(YAML.replace("j2: 0.1", "j2: 0.5"))
    lineno = YAML.splitlines().index("  j2: 0.1") + 1
    with pytest.raises(ModelError, match=rf"bad\.yaml:{lineno}: lock of joint 'j2': value 0\.5"):
        load(path)
    path.write_text(YAML.replace("j2: 0.1", "j9: 0.1"))
    with pytest.raises(ModelError, match=rf"bad\.yaml:{lineno}: lock of joint 'j9': the model"):
        load(path)
    path.write_text(YAML.replace("j2: 0.1", "j2: [a, b]"))
    with pytest.raises(ModelError, match=rf"bad\.yaml:{lineno}: lock of joint 'j2'"):
        load(path)
    path.write_text(YAML.replace("lock:\n  j2: 0.1\n  j3: null", "lock: [j2]"))
    with pytest.raises(ModelError, match=r"bad\.yaml:\d+: lock: expected a mapping"):
        load(path)


# --------------------------------------------------------------------------- CLI
def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_parse_locks():
    assert parse_locks(("a", "b=0.5", "c=1,2,3", "d=e=-1")) == {
        "a": None,
        "b": [0.5],
        "c": [1.0, 2.0, 3.0],
        "d=e": [-1.0],
    }
    for bad in (("a=x",), ("=1",), ("a", "a=1"), ("a=",)):
        with pytest.raises(SymgenError):
            parse_locks(bad)


def test_cli_info_romeo_with_locked_hands():
    result = run("info", romeo_path(), "--floating-base", "--lock", "LHand", "--lock", "RHand")
    assert result.exit_code == 0, result.output
    assert re.search(r"nq, nv\s+38, 37", result.output)
    movable, locked = result.output.split("locked joints (", 1)
    assert "LFinger23" not in [line.split()[0] for line in movable.splitlines() if line]
    assert "LFinger23" in [line.split()[0] for line in locked.splitlines()[1:] if line]
    result = run("info", romeo_path(), "--floating-base")
    assert result.exit_code == 2
    assert "zero mass" in result.output and "lock the joint" in result.output



def test_cli_info_lists_locked_joints_and_armature(tmp_path):
    path = tmp_path / "two.yaml"
    path.write_text(
        "name: two\n"
        "bodies:\n"
        "  - {name: a, mass: 1, com: [0.5, 0, 0], inertia: [0.01, 0.1, 0.1]}\n"
        "  - {name: b, mass: 1, com: [0.5, 0, 0], inertia: [0.01, 0.1, 0.1]}\n"
        "joints:\n"
        "  - {name: j1, type: revolute, parent: ground, child: a, armature: 0.3}\n"
        "  - {name: j2, type: revolute, parent: a, child: b, origin: {xyz: [1, 0, 0]}}\n"
    )
    result = run("info", str(path), "--lock", "j2=0.5")
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.output.splitlines()]
    assert ["j2", "(0.5)"] in lines  # under "locked joints"
    assert ["j1", "(0.3)"] in lines  # under "armature"
    assert re.search(r"nq, nv\s+1, 1", result.output)

@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("panda_joint4", r"lock of joint 'panda_joint4': value 0 \(its neutral value\) is "
                         r"outside the joint limits \[-3\.0718, -0\.0698\]"),
        ("panda_finger_joint2=0.01", r"coupled to joint 'panda_finger_joint1'"),
        ("panda_joint1=abc", r"--lock 'panda_joint1=abc': 'abc' is not a number"),
    ],
)
def test_cli_bad_lock_is_one_line_exit_2(option, message):
    result = run("info", str(robot_urdf("panda")), "--lock", option)
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert re.search(message, result.output), result.output


def test_cli_verify_panda_with_locked_fingers():
    result = run(
        "verify", str(robot_urdf("panda")), "--lock", "panda_finger_joint1=0.02",
        "--kernels", "inverse_dynamics,mass_matrix,forward_dynamics", "--states", "5",
    )
    assert result.exit_code == 0, result.output
    assert "pinocchio" in result.output and "FAIL" not in result.output


@pytest.mark.slow
def test_cli_verify_romeo_with_locked_hands():
    result = run(
        "verify", romeo_path(), "--floating-base", "--lock", "LHand", "--lock", "RHand",
        "--kernels", "inverse_dynamics,mass_matrix,forward_dynamics", "--states", "5",
    )
    assert result.exit_code == 0, result.output
    assert "pinocchio" in result.output and "FAIL" not in result.output


def test_locked_joint_types_cover_every_type():
    """The random trees above lock every joint type at least once over their seeds."""
    types = set()
    for seed in SEEDS:
        full, _, values = lock_random_joints(seed)
        types |= {j.type for j in full.joints if j.name in values}
    assert types >= set(JointType) - {JointType.FIXED}, types

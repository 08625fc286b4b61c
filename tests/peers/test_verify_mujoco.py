"""MuJoCo as a peer of ``symgen verify`` for MJCF models, and Pinocchio's own MJCF reading as
the Pinocchio peer where it reads the file as MuJoCo does (else one note saying what it
reads differently, and the fallback to the model built from symgen's)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_split
from paths import EXAMPLES, TESTS

import symgen
import symgen.apps.verify.mujoco_queries as mujoco_queries
import symgen.reference as ref
from symgen.apps.verify import random_states, verify_compiled
from symgen.build.compiler import compile_kernels
from symgen.errors import ModelError
from symgen.peers.pinocchio import pinocchio_counterpart
from symgen.peers.pinocchio_mjcf import DIFFERS

mujoco = pytest.importorskip("mujoco")
#: arm.xml's spring on shoulder_pitch (off in MuJoCo's tree quantities, as in symgen's)
pytestmark = pytest.mark.filterwarnings("ignore:.*leave out the force elements")

MJCF = TESTS / "data" / "mjcf"
ARM, COUPLED = MJCF / "arm.xml", MJCF / "coupled.xml"
FAST = ("-O0", "-std=c99")
#: The kernels MuJoCo has (symgen.apps.verify.mujoco_queries.MUJOCO), default ones.
MUJOCO_KERNELS = ("mass_matrix", "inverse_dynamics", "bias_forces", "gravity_forces",
                  "forward_dynamics", "mass_matrix_inverse", "energy")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMGEN_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def _verify(model, kernels=MUJOCO_KERNELS, states=3):
    ks = symgen.generate(model, list(kernels))
    return verify_compiled(compile_kernels(ks, flags=FAST), random_states(ks, states, seed=5))


def _peers(report) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for c in report.performed:
        out.setdefault(c.peer, set()).add(c.program)
    return out


# ---------------------------------------------------------------- the MuJoCo peer
def test_arm_verifies_against_mujoco_and_pinocchios_own_mjcf_reading():
    """A free base, a body with two hinges (one with a ref), armature from a default class,
    a slide and a ball in one body: every kernel MuJoCo has is checked against it, and
    Pinocchio's own reading of the file (composite joints, coordinates from the file's
    zero) is the Pinocchio model."""
    report = _verify(symgen.load(ARM))
    assert not report.failed and not report.skipped, report.checks
    peers = _peers(report)
    assert peers["mujoco"] == set(MUJOCO_KERNELS)
    assert peers["pinocchio"] == set(MUJOCO_KERNELS) - {"energy"}
    assert report.note("Pinocchio") == (
        "Pinocchio model: Pinocchio's own reading of arm.xml (pinocchio.buildModelFromMJCF)")
    assert report.note("MuJoCo").startswith("MuJoCo model: arm.xml compiled by MuJoCo")


def test_joint_coupling_and_locks_map_onto_mujocos_coordinates():
    """A coupled joint has no coordinate in symgen (T is 4 × 3), a locked one neither: MuJoCo
    agrees through qvel = T v; Pinocchio's MJCF reading ignores the joint equality, so its
    model is built from symgen's, with that reason (and its crba, which keeps stale sums
    below a mimic joint from call to call, gets fresh data); with a lock, Pinocchio's
    reading is reduced (buildReducedModel)."""
    report = _verify(symgen.load(COUPLED))
    assert not report.failed and not report.skipped, report.checks
    assert _peers(report)["mujoco"] == set(MUJOCO_KERNELS)
    note = report.note("Pinocchio")
    assert note.endswith(f"built from symgen's model ({DIFFERS}: it ignores the joint "
                         "couplings of <equality> (its coupled joints keep coordinates of "
                         "their own: right_finger))")
    locked = _verify(symgen.load(ARM, lock={"elbow": [0.2]}),
                     kernels=("mass_matrix", "forward_dynamics", "mass_matrix_inverse"))
    assert not locked.failed and not locked.skipped, locked.checks
    assert _peers(locked)["mujoco"] == {"mass_matrix", "forward_dynamics",
                                        "mass_matrix_inverse"}
    assert "buildModelFromMJCF + buildReducedModel" in locked.note("Pinocchio")


def test_a_wrong_state_mapping_fails_against_mujoco(monkeypatch):
    """A mapping that forgets the hinges' ref (qpos = q) agrees with symgen's own reference
    and with Pinocchio, not with MuJoCo."""
    right = mujoco_queries.to_mujoco

    def without_ref(model, q, v=None, a=None):
        qpos, qvel, qacc = right(model, q, v, a)
        for joint in model.file_coordinates.joints:
            if joint.kind == "hinge":
                qpos[joint.qpos_address] -= joint.zero
        return qpos, qvel, qacc

    monkeypatch.setattr(mujoco_queries, "to_mujoco", without_ref)
    report = _verify(symgen.load(ARM), kernels=("mass_matrix", "inverse_dynamics"))
    assert {(c.program, c.peer) for c in report.failed} == {
        ("mass_matrix", "mujoco"), ("inverse_dynamics", "mujoco")}
    assert min(c.error for c in report.failed) > 1e-3  # a 0.3 rad turn: not rounding


def test_mujoco_is_no_peer_of_urdf_models_and_says_why(monkeypatch):
    result = run_split("verify", str(EXAMPLES / "double_pendulum.yaml"), "--states", "2",
                       "--kernels", "mass_matrix")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "MuJoCo: not compared (the model was not read from an MJCF file)" in result.stdout
    assert "mujoco" not in result.stdout.strip().splitlines()[-1]
    model = symgen.load(ARM)
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco raises ImportError
    assert mujoco_queries.mujoco_unavailable(model) == (
        "the mujoco package is not installed (pip install mujoco)")


def test_a_mujoco_failure_is_a_skipped_check(monkeypatch):
    import symgen.io.mjcf as mjcf

    def broken(path):
        raise ModelError("the file went away")

    model = symgen.load(ARM)
    monkeypatch.setattr(mjcf, "compile_mjcf", broken)
    report = _verify(model, kernels=("mass_matrix",))
    (skipped,) = report.skipped
    assert (skipped.program, skipped.peer) == ("all kernels", "mujoco")
    assert "the file went away" in skipped.skipped and not report.failed


def test_cli_reports_the_mujoco_peer():
    result = run_split("verify", str(ARM), "--states", "2", "--kernels",
                       "mass_matrix,forward_dynamics")
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.split()[:2] == ["forward_dynamics", "mujoco"] for line in lines)
    assert any(line.startswith("MuJoCo model: arm.xml compiled by MuJoCo") for line in lines)
    assert lines[-1] == "all 6 checks passed (mujoco, pinocchio, reference)"


# ---------------------------------------------------------------- Pinocchio's MJCF reading
#: Files Pinocchio 4.1's MJCF reader reads differently from MuJoCo, and the note's words.
#: In each, symgen's model agrees with MuJoCo (test below) and Pinocchio's does not.
BODY = '<geom type="capsule" fromto="0 0 0 0.3 0 0.1" size="0.02" mass="1"/>'
MISREAD = {
    "second body tree": (f'<body name="a"><joint name="j1" axis="0 1 0"/>{BODY}</body>'
                         f'<body name="b" pos="1 0 0"><joint name="j2"/>{BODY}</body>',
                         "it has 1 of MuJoCo's 2 joints ('j2' missing)"),
    "pose of a top-level body without joints": (
        f'<body name="base" pos="0.5 0 1" euler="0.5 0 0">{BODY}<body name="a">'
        f'<joint name="j1" axis="0 1 0"/>{BODY}</body></body>',
        "at q = 0, body 'a' has its centre of mass at"),
    "joint pos of a default class": (
        f'<body name="a"><joint name="j1" class="off" axis="0 1 0"/>{BODY}</body>',
        "its mass matrix differs at q = 0"),
    "ref of a joint before another in its body": (
        f'<body name="a"><joint name="j1" axis="0 1 0" ref="0.5"/><joint name="j2" '
        f'axis="1 0 0"/>{BODY}</body>', "at q = 0, body 'a' has its centre of mass at"),
    "rotated free body": (
        f'<body name="a" pos="1 0 1" euler="1 0 0"><freejoint name="f"/>{BODY}</body>',
        "at q = 0, body 'a' has its centre of mass at"),
    "geom mass of a default class": (
        '<body name="a"><joint name="j1" axis="0 1 0"/><geom class="heavy" type="sphere" '
        'size="0.1"/></body>', "body 'a' weighs 4.18879 kg, in MuJoCo 2 kg"),
    "geom without collisions": (
        '<body name="a"><joint name="j1" axis="0 1 0"/><geom type="sphere" size="0.1" '
        'contype="0" conaffinity="0" mass="3"/></body>', "body 'a' weighs 0 kg, in MuJoCo 3 kg"),
}


def _mjcf(tmp_path: Path, bodies: str) -> Path:
    path = tmp_path / "misread.xml"
    path.write_text('<mujoco><compiler angle="radian"/><default><default class="off">'
                    '<joint pos="0 0 0.2"/></default><default class="heavy"><geom mass="2"/>'
                    f'</default></default><worldbody>{bodies}</worldbody></mujoco>')
    return path


@pytest.mark.parametrize("case", sorted(MISREAD))
def test_pinocchios_misreadings_fall_back_with_one_note(tmp_path, case):
    bodies, words = MISREAD[case]
    model = symgen.load(_mjcf(tmp_path, bodies))
    bridge, note = pinocchio_counterpart(model)
    assert note.startswith(f"built from symgen's model ({DIFFERS}: "), note
    assert words in note, note
    # MuJoCo defines the file's meaning: symgen's model agrees with it
    mj, data = mujoco_queries.tree_model(model)
    for q in (np.array(model.neutral_configuration, float),
              ref.random_configuration(model, np.random.default_rng(1))):
        query = mujoco_queries.MujocoQuery(mujoco, mj, data, model, {"q": q})
        np.testing.assert_allclose(query.mass_matrix(), ref.mass_matrix(model, q), atol=1e-12)
        np.testing.assert_allclose(query.bias(np.zeros(model.nv)), ref.gravity_forces(model, q),
                                   atol=1e-12)


def test_pinocchio_takes_mujocos_gravity(tmp_path):
    """Pinocchio 4.1's MJCF reader ignores <option gravity>: its reading is used with
    MuJoCo's gravity, and the note says so."""
    path = tmp_path / "tilted.xml"
    path.write_text('<mujoco><option gravity="1 0 -9"/><worldbody><body name="a">'
                    f'<joint name="j1" axis="0 1 0"/>{BODY}</body></worldbody></mujoco>')
    model = symgen.load(path)
    bridge, note = pinocchio_counterpart(model)
    assert note == ("Pinocchio's own reading of tilted.xml (pinocchio.buildModelFromMJCF; "
                    "MuJoCo's gravity (1, 0, -9): Pinocchio reads (0, 0, -9.81))")
    np.testing.assert_array_equal(bridge.pin_model.gravity.linear, [1.0, 0.0, -9.0])


def test_pinocchios_reading_of_a_closed_loop_is_the_spanning_tree(tmp_path):
    """A <connect> closes the loop in MuJoCo and in symgen (a loop joint); Pinocchio's
    reading, which leaves it out, is the spanning tree that the tree kernels compute."""
    path = tmp_path / "loop.xml"
    path.write_text(f'<mujoco><worldbody><body name="a"><joint name="j1" axis="0 1 0"/>{BODY}'
                    f'<body name="b" pos="0.3 0 0.1"><joint name="j2" axis="0 1 0"/>{BODY}'
                    '</body></body></worldbody><equality><connect body1="b" body2="world" '
                    'anchor="0.3 0 0.1"/></equality></mujoco>')
    model = symgen.load(path)
    assert model.loop_joints
    _, note = pinocchio_counterpart(model)
    assert note == "Pinocchio's own reading of loop.xml (pinocchio.buildModelFromMJCF)"


def test_a_file_pinocchio_cannot_read_falls_back_with_its_message(tmp_path):
    path = tmp_path / "terrain.xml"
    path.write_text('<mujoco><asset><hfield name="h" nrow="2" ncol="2" size="1 1 1 0.1"/>'
                    f'</asset><worldbody><body name="a"><joint name="j1"/>{BODY}</body>'
                    '</worldbody></mujoco>')
    _, note = pinocchio_counterpart(symgen.load(path))
    assert note == ("built from symgen's model (Pinocchio's MJCF reading not used: "
                    "pinocchio.buildModelFromMJCF: hfields are not supported yet)")


# ---------------------------------------------------------------- the reference vs MuJoCo
def _suite_files() -> list[Path]:
    files = []
    for package, folder in (("gymnasium", "envs/mujoco/assets"), ("dm_control", "suite")):
        try:
            module = __import__(package)
        except ImportError:
            continue
        files += sorted((Path(module.__file__).parent / folder).glob("*.xml"))
    return files


@pytest.mark.skipif(not _suite_files(), reason="neither gymnasium nor dm_control is installed")
def test_reference_agrees_with_mujoco_on_gymnasium_and_dm_control_models():
    """symgen's numpy reference M and ID against MuJoCo (mj_fullM, mj_inverse through the
    state map) on every MuJoCo model of gymnasium and dm_control's suite that symgen reads,
    three random states each."""
    checked = []
    for path in _suite_files():
        try:
            model = symgen.load(path)
        except ModelError:
            continue  # not a model symgen reads (lqr.xml has no body, tendon couplings)
        mj, data = mujoco_queries.tree_model(model)
        rng = np.random.default_rng(3)
        for _ in range(3):
            q, v, a = (ref.random_configuration(model, rng), rng.normal(size=model.nv),
                       rng.normal(size=model.nv))
            query = mujoco_queries.MujocoQuery(mujoco, mj, data, model, {"q": q})
            pairs = {"M": (query.mass_matrix(), ref.mass_matrix(model, q)),
                     "tau": (query.inverse(v, a), ref.inverse_dynamics(model, q, v, a))}
            for key, (got, expected) in pairs.items():
                error = np.max(np.abs(got - expected)) / max(1.0, np.max(np.abs(expected)))
                assert error < 1e-10, (path.name, key, error)
        checked.append(path.name)
    assert len(checked) >= 20, checked

"""MJCF models read by symgen against MuJoCo's own computation of the same file.

- Kinematics: the world pose of every MuJoCo body and named site (``xpos``/``xmat``,
  ``site_xpos``/``site_xmat`` after ``mj_kinematics``) equals symgen's reference forward
  kinematics of the body or frame with that name, at MuJoCo states mapped by
  ``from_mujoco``; 1e-12 (m and rotation entries; poses of O(1) m chains).
- Dynamics: M, bias forces (``qfrc_bias``) and inverse dynamics (``mj_inverse``, armature
  included) with equality constraints, contacts, springs and dampers disabled, mapped into
  symgen's coordinates (``forces_from_mujoco``: power-preserving, exact), against the
  reference's; 1e-10 relative to max(1, |·|∞), the issue's bound (measured ≤ 3e-15).
- The state maps: to_mujoco ∘ from_mujoco is the identity on (q, v, a) (1e-14).

States: MuJoCo qpos uniform in [-1, 1] per hinge/slide coordinate, random unit
quaternions, qvel and qacc ~ N(0, 1); seed 0, 3 states per model.
"""

from __future__ import annotations

import numpy as np
import pytest
from paths import EXAMPLES

import symgen
from symgen import reference as ref
from symgen.io.mjcf_state import forces_from_mujoco, from_mujoco, to_mujoco

mujoco = pytest.importorskip("mujoco")

#: Hand-written files covering the mapping: several joints in one body with anchors off the
#: body origin, ``ref`` in degrees, a ball after a hinge, a free body, sites, armature.
CHAIN = """<mujoco model="chain">
  <compiler angle="degree"/>
  <worldbody>
    <body name="a" pos="0 0 1" euler="0 0 30">
      <joint name="h" type="hinge" axis="0 1 0" pos="0 0 0.1" ref="20" armature="0.01"/>
      <joint name="s" type="slide" axis="1 0 1" pos="0.05 0 0"/>
      <geom type="capsule" size="0.05" fromto="0 0.1 0 0 0 -0.5"/>
      <site name="a_tip" pos="0 0 -0.5" euler="10 0 0"/>
      <body name="b" pos="0 0 -0.5" quat="0.9 0.1 0.3 0.2">
        <joint name="h2" axis="1 0 0" pos="0 0.2 0"/>
        <joint name="ball" type="ball" pos="0.1 0 0" armature="0.002"/>
        <geom type="box" size="0.1 0.2 0.3" pos="0 0 -0.2" euler="10 20 30"/>
        <site name="b_tip" pos="0.1 0 -0.4"/>
        <body name="welded" pos="0 0.1 -0.5" euler="0 45 0">
          <geom type="sphere" size="0.05"/>
        </body>
      </body>
    </body>
    <body name="c" pos="1 0 0" euler="0 30 0">
      <freejoint/>
      <geom type="box" size="0.1 0.2 0.3" pos="0.1 0.2 0.3"/>
      <site name="c_site" pos="0.1 0 0"/>
    </body>
  </worldbody>
</mujoco>
"""


def mjcf_files(tmp_path) -> list:
    chain = tmp_path / "chain.xml"
    chain.write_text(CHAIN)
    return [chain, EXAMPLES / "gripper_arm.xml", EXAMPLES / "four_bar_knee.xml"]


def random_mujoco_state(mj, rng):
    qpos = np.array(mj.qpos0)
    for j in range(mj.njnt):
        i, kind = int(mj.jnt_qposadr[j]), int(mj.jnt_type[j])
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            qpos[i:i + 3] = rng.uniform(-1, 1, 3)
            quat = rng.standard_normal(4)
            qpos[i + 3:i + 7] = quat / np.linalg.norm(quat)
        elif kind == mujoco.mjtJoint.mjJNT_BALL:
            quat = rng.standard_normal(4)
            qpos[i:i + 4] = quat / np.linalg.norm(quat)
        else:
            qpos[i] = rng.uniform(-1, 1)
    return qpos, rng.standard_normal(mj.nv), rng.standard_normal(mj.nv)


def relative(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - b), initial=0.0)
                 / max(1.0, float(np.max(np.abs(b), initial=0.0))))


def test_kinematics_of_bodies_and_sites_is_mujocos(tmp_path):
    rng = np.random.default_rng(0)
    for path in mjcf_files(tmp_path):
        model = symgen.load(path, couplings=False)
        mj = mujoco.MjModel.from_xml_path(str(path))
        data = mujoco.MjData(mj)
        for _ in range(3):
            qpos, _, _ = random_mujoco_state(mj, rng)
            data.qpos[:] = qpos
            mujoco.mj_kinematics(mj, data)
            q, _, _ = from_mujoco(model, qpos)
            poses = ref.forward_kinematics(model, q)
            for b in range(1, mj.nbody):
                pose = poses[mj.body(b).name]
                assert np.abs(pose[:3, 3] - data.xpos[b]).max() < 1e-12, (path, b)
                assert np.abs(pose[:3, :3] - data.xmat[b].reshape(3, 3)).max() < 1e-12
            for s in range(mj.nsite):
                pose = poses[mj.site(s).name]
                assert np.abs(pose[:3, 3] - data.site_xpos[s]).max() < 1e-12, (path, s)
                assert np.abs(pose[:3, :3] - data.site_xmat[s].reshape(3, 3)).max() < 1e-12


def tree_mujoco(path):
    mj = mujoco.MjModel.from_xml_path(str(path))
    bits = mujoco.mjtDisableBit
    mj.opt.disableflags |= bits.mjDSBL_CONSTRAINT | bits.mjDSBL_SPRING | bits.mjDSBL_DAMPER
    return mj


def test_mass_matrix_bias_and_inverse_dynamics_are_mujocos(tmp_path):
    rng = np.random.default_rng(0)
    for path in mjcf_files(tmp_path):
        model = symgen.load(path, couplings=False)  # MuJoCo's tree coordinates
        mj = tree_mujoco(path)
        data = mujoco.MjData(mj)
        for _ in range(3):
            qpos, qvel, qacc = random_mujoco_state(mj, rng)
            q, v, a = from_mujoco(model, qpos, qvel, qacc)
            data.qpos[:], data.qvel[:] = qpos, qvel
            mujoco.mj_forward(mj, data)
            full = np.zeros((mj.nv, mj.nv))
            mujoco.mj_fullM(mj, data, full)
            bias = forces_from_mujoco(model, q, data.qfrc_bias)
            data.qacc[:] = qacc
            mujoco.mj_inverse(mj, data)
            tau = forces_from_mujoco(model, q, data.qfrc_inverse)
            assert relative(ref.inverse_dynamics(model, q, v, a), tau) < 1e-10, path
            # bias: symgen's a = 0 is MuJoCo's qacc = c(q, v) (free joints), so the
            # reference's bias forces equal MuJoCo's qfrc_bias + M c in symgen's layout
            _, _, c = to_mujoco(model, q, v, np.zeros(model.nv))
            expected = bias + forces_from_mujoco(model, q, full @ c)
            assert relative(ref.bias_forces(model, q, v), expected) < 1e-10, path
            x = rng.standard_normal(model.nv)
            _, x_mj, _ = to_mujoco(model, q, x)
            m_x = forces_from_mujoco(model, q, full @ x_mj)
            assert relative(ref.mass_matrix(model, q) @ x, m_x) < 1e-10, path


def test_state_maps_are_inverse(tmp_path):
    rng = np.random.default_rng(0)
    for path in mjcf_files(tmp_path):
        for couplings in (False, True):
            model = symgen.load(path, couplings=couplings)
            mj = mujoco.MjModel.from_xml_path(str(path))
            qpos, qvel, qacc = random_mujoco_state(mj, rng)
            q, v, a = from_mujoco(model, qpos, qvel, qacc)
            back = from_mujoco(model, *to_mujoco(model, q, v, a))
            for x, y in zip((q, v, a), back, strict=True):
                np.testing.assert_allclose(y, x, atol=1e-14)


TENDON_COUPLED = """<mujoco model="gripper">
  <worldbody>
    <body name="palm" pos="0 0 0.5">
      <joint name="wrist" axis="0 1 0"/>
      <geom type="box" size="0.05 0.05 0.02"/>
      <body name="thumb" pos="0.05 0 -0.02"><joint name="thumb" axis="0 1 0" ref="5"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.08" size="0.01"/></body>
      <body name="finger" pos="-0.05 0 -0.02"><joint name="finger" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.08" size="0.01"/></body>
      <body name="pinky" pos="0 0.03 -0.02"><joint name="pinky" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.05" size="0.01"/></body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="coupling"><joint joint="thumb" coef="-0.5"/><joint joint="finger" coef="0.8"/>
    </fixed>
    <fixed name="hold"><joint joint="pinky" coef="2"/></fixed>
  </tendon>
  <equality>
    <tendon tendon1="coupling" polycoef="0.05 1 0 0 0"/>
    <tendon tendon1="hold" polycoef="0.3 1 0 0 0"/>
    <joint joint1="finger" joint2="wrist" polycoef="0 0 0 0 0" active="false"/>
  </equality>
</mujoco>
"""


def test_coupled_states_satisfy_mujocos_equalities(tmp_path):
    """States mapped by to_mujoco satisfy MuJoCo's own equality residuals: a fixed-tendon
    equality L − L₀ = a₀ (a coupling of two joints, a lock of one) and a joint equality
    (gripper_arm.xml's mirror), to 1e-14; seed 2."""
    path = tmp_path / "gripper.xml"
    path.write_text(TENDON_COUPLED)
    model = symgen.load(path)
    assert model.joint_names[:2] == ["wrist", "thumb"] and model.nv == 2
    assert model.locked_joint_names == ["pinky"]
    rng = np.random.default_rng(2)
    for file in (path, EXAMPLES / "gripper_arm.xml"):
        model = symgen.load(file)
        mj = mujoco.MjModel.from_xml_path(str(file))
        data = mujoco.MjData(mj)
        for _ in range(3):
            q = ref.random_configuration(model, rng)
            data.qpos[:], _, _ = to_mujoco(model, q)
            mujoco.mj_fwdPosition(mj, data)
            for e in range(mj.neq):
                if not mj.eq_active0[e]:
                    continue
                if mj.eq_type[e] == mujoco.mjtEq.mjEQ_TENDON:
                    t = mj.eq_obj1id[e]
                    residual = data.ten_length[t] - mj.tendon_length0[t] - mj.eq_data[e][0]
                    assert abs(residual) < 1e-14
                elif mj.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT:
                    i1, i2 = (mj.jnt_qposadr[mj.eq_obj1id[e]], mj.jnt_qposadr[mj.eq_obj2id[e]])
                    a0, a1 = mj.eq_data[e][:2]
                    x = data.qpos[i2] - mj.qpos0[i2]
                    assert abs(data.qpos[i1] - mj.qpos0[i1] - a0 - a1 * x) < 1e-14


SITE_LOOPS = """<mujoco model="site_loops">
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="crank" pos="0 0 0.3">
      <joint name="crank_joint" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.1" size="0.01"/>
      <body name="coupler" pos="0 0 0.1" euler="0 20 0">
        <joint name="coupler_joint" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0.3" size="0.01"/>
        <site name="coupler_end" pos="0.4 0 0.3" euler="10 0 0"/>
      </body>
    </body>
    <body name="rocker" pos="0.5 0 0.3">
      <joint name="rocker_joint" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.4" size="0.01"/>
      <site name="rocker_end" pos="0 0 0.4"/>
    </body>
    <body name="plate" pos="1 0 0">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.01"/>
      <site name="plate_corner" pos="0.1 0.1 0" euler="0 0 30"/>
    </body>
    <site name="wall" pos="1.1 0.1 0" euler="0 0 30"/>
  </worldbody>
  <equality>
    <connect site1="coupler_end" site2="rocker_end"/>
    <weld site1="wall" site2="plate_corner"/>
  </equality>
</mujoco>
"""


def test_loops_satisfy_mujocos_connect_and_weld(tmp_path):
    """At states assembled by symgen's loop closure (LoopClosure.assemble from the zero
    configuration moved by 0.3 N(0, 1), seed 3) and mapped by to_mujoco, MuJoCo's own
    equality residuals (efc_pos of every equality row) vanish, 1e-10 (the assembly's
    tolerance is 1e-12 in m and rad): symgen's loop joints are MuJoCo's connect and weld,
    between bodies and between sites."""
    from symgen.loops import LoopClosure

    path = tmp_path / "site_loops.xml"
    path.write_text(SITE_LOOPS)
    rng = np.random.default_rng(3)
    for file in (path, EXAMPLES / "gripper_arm.xml", EXAMPLES / "four_bar_knee.xml"):
        model = symgen.load(file)
        mj = mujoco.MjModel.from_xml_path(str(file))
        mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
        data = mujoco.MjData(mj)
        closure = LoopClosure(model)
        zero = np.asarray(ref.neutral_configuration(model))
        for _ in range(3):
            step = 0.3 * rng.standard_normal(model.nv)
            q = closure.assemble(ref.integrate(model, zero, step, 1.0))
            data.qpos[:], _, _ = to_mujoco(model, q)
            mujoco.mj_forward(mj, data)
            rows = data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
            assert rows.sum() == 3 * sum(
                mj.eq_type == mujoco.mjtEq.mjEQ_CONNECT) + 6 * sum(
                mj.eq_type == mujoco.mjtEq.mjEQ_WELD) + sum(mj.eq_type == mujoco.mjtEq.mjEQ_JOINT)
            assert np.abs(data.efc_pos[rows]).max() < 1e-10, file

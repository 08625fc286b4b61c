"""One bad input per validation rule: each error names the offending element (and, read
from a file, its file:line). The builder is used for most; YAML and URDF files for a few."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from model_files import line_of, write

from symgen.errors import ModelError, SourceRef
from symgen.io import load
from symgen.io.builder import ModelBuilder

BOX = (0.1, 0.1, 0.1)
HERE = SourceRef("model.py", 7)


def chain(**body_overrides) -> ModelBuilder:
    """A valid two-link chain world -> a -> b; ``body_overrides`` replace body b's arguments."""
    b = ModelBuilder("chain", root="world")
    b.body("a", mass=1.0, com=(0, 0, -0.5), inertia=BOX)
    args = {"mass": 1.0, "com": (0, 0, -0.5), "inertia": BOX, "source": HERE}
    args.update(body_overrides)
    b.body("b", **args)
    b.joint("ja", "revolute", parent="world", child="a", axis=(0, 1, 0))
    b.joint("jb", "revolute", parent="a", child="b", xyz=(0, 0, -1), axis=(0, 1, 0))
    return b


def fails(builder: ModelBuilder, pattern: str) -> ModelError:
    with pytest.raises(ModelError, match=pattern) as err:
        builder.build()
    return err.value


def test_a_valid_model_passes():
    model = chain().build()
    assert model.body_names == ["a", "b"]
    assert model.parents == (-1, 0)


# ---------------------------------------------------------------------- bodies
def test_negative_mass():
    err = fails(chain(mass=-1.0), r"body 'b': negative mass -1 kg")
    assert str(err).startswith("model.py:7: ")


def test_zero_mass_on_a_moving_leaf():
    fails(chain(mass=0.0), r"body 'b': zero mass on a leaf body moved by joint 'jb'")


def test_zero_mass_is_fine_on_an_inner_body():
    b = ModelBuilder("m", root="world")
    b.body("a")  # no mass, but it carries b
    b.body("b", mass=1.0, inertia=BOX)
    b.joint("ja", "revolute", "world", "a")
    b.joint("jb", "revolute", "a", "b", axis=(1, 0, 0))
    b.build()


def test_inertia_not_symmetric():
    inertia = ((0.1, 0.01, 0.0), (0.0, 0.1, 0.0), (0.0, 0.0, 0.1))
    fails(chain(inertia=inertia), r"body 'b': rotational inertia is not symmetric")


def test_inertia_not_positive_semidefinite():
    fails(chain(inertia=(0.1, 0.1, -0.01)), r"body 'b': .*not positive semi-definite")


def test_inertia_violates_triangle_inequality():
    fails(chain(inertia=(0.1, 0.1, 0.3)), r"body 'b': .*violates the triangle inequality")


def test_mass_not_finite():
    b = ModelBuilder("m", root="world")
    m = b.parameter("m", float("inf"))
    b.body("a", mass=m, inertia=BOX)
    b.joint("ja", "revolute", "world", "a")
    fails(b, r"body 'a': mass is not a finite number")


def test_value_not_finite():
    with pytest.raises(ModelError, match=r"body 'b': .* is not a finite number"):
        chain(com=(0, 0, float("nan")))


def test_inertia_not_finite_through_a_parameter():
    b = ModelBuilder("m", root="world")
    i = b.parameter("i", float("nan"))
    b.body("a", mass=1.0, inertia=(i, i, i))
    b.joint("ja", "revolute", "world", "a")
    fails(b, r"body 'a': inertia or centre of mass is not finite")


def test_value_of_the_wrong_type():
    with pytest.raises(ModelError, match=r"body 'b': .*is not a number"):
        chain(mass=[1.0])
    with pytest.raises(ModelError, match=r"body 'b': 'heavy' is neither a number nor"):
        chain(mass="heavy")
    with pytest.raises(ModelError, match=r"body 'b': expected a list of 3 numbers"):
        chain(com=(0, 0))
    with pytest.raises(ModelError, match=r"body 'b': inertia must be a 3x3 matrix"):
        chain(inertia=(1, 2))


# ---------------------------------------------------------------------- joints
def test_zero_length_axis():
    b = chain()
    b.body("c", mass=1.0, inertia=BOX)
    b.joint("jc", "prismatic", "b", "c", axis=(0, 0, 0), source=HERE)
    err = fails(b, r"joint 'jc': zero-length axis")
    assert str(err).startswith("model.py:7: ")


def test_zero_length_axis_of_a_loop_joint():
    b = chain()
    b.loop_joint("close", "revolute", "b", "world", axis=(0, 0, 0))
    fails(b, r"joint 'close': zero-length axis")


def test_zero_length_second_axis():
    b = chain()
    b.body("c", mass=1.0, inertia=BOX)
    b.joint("jc", "universal", "b", "c", axis=(1, 0, 0), axis2=(0, 0, 0))
    fails(b, r"joint 'jc': zero-length second axis")


def test_parallel_universal_axes():
    b = chain()
    b.body("c", mass=1.0, inertia=BOX)
    b.joint("jc", "universal", "b", "c", axis=(1, 0, 0), axis2=(2, 0, 0))
    fails(b, r"joint 'jc': universal joint axes are parallel")


def test_unknown_joint_type():
    b = chain()
    b.body("c", mass=1.0, inertia=BOX)
    b.joint("jc", "hinge", "b", "c", source=HERE)
    err = fails(b, r"joint 'jc': unknown joint type 'hinge' \(known: revolute, ")
    assert str(err).startswith("model.py:7: ")


def test_unknown_loop_joint_type():
    b = chain()
    b.loop_joint("close", "weld", "b", "world")
    fails(b, r"loop joint 'close': unknown joint type 'weld'")


def test_joint_to_a_missing_body():
    b = chain()
    b.joint("jc", "revolute", "b", "ghost")
    fails(b, r"joint 'jc': child body 'ghost' does not exist")
    b = chain()
    b.loop_joint("close", "revolute", "nowhere", "b")
    fails(b, r"joint 'close': parent body 'nowhere' does not exist")


def test_joint_connecting_a_body_to_itself():
    b = chain()
    b.loop_joint("self", "revolute", "b", "b")
    fails(b, r"joint 'self': connects body 'b' to itself")


# ---------------------------------------------------------------------- topology
def test_body_unreachable_from_the_root():
    b = chain()
    b.body("island", mass=1.0, inertia=BOX, source=HERE)
    err = fails(b, r"body 'island': unreachable from the root 'world'")
    assert str(err).startswith("model.py:7: ")


def test_cycle_not_declared_as_a_loop_joint():
    b = chain()
    b.joint("back", "revolute", "b", "a")  # a gets a second parent
    fails(b, r"joint 'back': body 'a' already has parent joint 'ja'; .*not declared as a loop")


def test_cycle_through_the_root():
    b = chain()
    b.joint("to_root", "revolute", "b", "world")
    fails(b, r"joint 'to_root': makes the root 'world' a child.*loop joint")


def test_detached_cycle():
    b = chain()
    b.body("p", mass=1.0, inertia=BOX)
    b.body("q", mass=1.0, inertia=BOX)
    b.joint("pq", "revolute", "p", "q")
    b.joint("qp", "revolute", "q", "p")
    fails(b, r"joint '(pq|qp)': belongs to a cycle that is not declared as a loop joint")


def test_the_same_cycle_declared_as_a_loop_joint_is_valid():
    b = chain()
    b.loop_joint("back", "revolute", "b", "a", xyz=(0, 0, -1))
    model = b.build()
    assert [j.name for j in model.loop_joints] == ["back"]


# ---------------------------------------------------------------------- names
def test_duplicate_body_names():
    b = chain()
    b.body("a", mass=2.0, inertia=BOX, source=HERE)
    err = fails(b, r"duplicate name 'a': body has the same name as a body")
    assert str(err).startswith("model.py:7: ")


def test_body_named_like_the_root():
    b = chain()
    b.body("world", mass=2.0, inertia=BOX)
    fails(b, r"duplicate name 'world'")


def test_duplicate_joint_names():
    b = chain()
    b.body("c", mass=1.0, inertia=BOX)
    b.joint("ja", "revolute", "b", "c", source=HERE)
    err = fails(b, r"duplicate joint name 'ja'")
    assert str(err).startswith("model.py:7: ")


def test_loop_joint_named_like_a_tree_joint():
    b = chain()
    b.loop_joint("jb", "revolute", "b", "world")
    fails(b, r"duplicate joint name 'jb'")


def test_duplicate_frame_names():
    b = chain()
    b.frame("tool", "b")
    b.frame("tool", "a", source=HERE)
    err = fails(b, r"duplicate name 'tool': frame has the same name as a frame")
    assert str(err).startswith("model.py:7: ")


def test_frame_named_like_a_body():
    b = chain()
    b.frame("a", "b")
    fails(b, r"duplicate name 'a': frame has the same name as a body")


def test_frame_on_a_missing_body():
    b = chain()
    b.frame("tool", "ghost")
    fails(b, r"frame 'tool': body 'ghost' does not exist")


# ---------------------------------------------------------------------- couplings
def test_coupling_to_a_missing_master():
    b = chain()
    b.coupling("jb", "motor", ratio=2.0, source=HERE)
    err = fails(b, r"coupling of joint 'jb': master joint 'motor' does not exist")
    assert str(err).startswith("model.py:7: ")


def test_coupling_of_a_missing_joint():
    b = chain()
    b.coupling("wheel", "ja")
    fails(b, r"coupling of joint 'wheel': joint 'wheel' does not exist")


def test_coupling_of_a_multi_dof_joint():
    b = chain()
    b.body("c", mass=1.0, inertia=BOX)
    b.joint("ball", "spherical", "b", "c")
    b.coupling("ball", "ja")
    fails(b, r"coupling of joint 'ball': joint 'ball' is not a 1-DOF joint")


# ---------------------------------------------------------------------- parameters
def test_unknown_parameter_reference():
    b = ModelBuilder("m", root="world")
    b.parameter("m", 1.0)
    with pytest.raises(ModelError, match=r"body 'a': unknown parameter 'mass'") as err:
        b.body("a", mass="$mass", inertia=BOX, source=HERE)
    assert str(err.value).startswith("model.py:7: ")


def test_unknown_parameter_in_an_expression():
    import sympy

    b = ModelBuilder("m", root="world")
    with pytest.raises(ModelError, match=r"joint 'j': unknown parameter 'L'"):
        b.joint("j", "revolute", "world", "a", xyz=(0, 0, -sympy.Symbol("L", real=True)))


def test_duplicate_parameter():
    b = ModelBuilder("m", root="world")
    b.parameter("m", 1.0)
    with pytest.raises(ModelError, match=r"duplicate parameter name 'm'"):
        b.parameter("m", 2.0)


def test_parameter_name_and_default():
    b = ModelBuilder("m", root="world")
    with pytest.raises(ModelError, match=r"parameter name '2x' is not a valid identifier"):
        b.parameter("2x", 1.0)
    with pytest.raises(ModelError, match=r"parameter 'm': default 'one' is not a number"):
        b.parameter("m", "one")


def test_parameter_default_is_validated():
    b = ModelBuilder("m", root="world")
    m = b.parameter("m", -2.0)
    b.body("a", mass=m, inertia=BOX)
    b.joint("ja", "revolute", "world", "a")
    fails(b, r"body 'a': negative mass -2 kg")


def test_unknown_parameter_override():
    b = ModelBuilder("m", root="world")
    m = b.parameter("m", 1.0)
    b.body("a", mass=m, inertia=BOX)
    b.joint("ja", "revolute", "world", "a")
    model = b.build()
    with pytest.raises(ModelError, match=r"unknown parameter 'n' \(model parameters: m\)"):
        model.resolve({"n": 1.0})


# ---------------------------------------------------------------------- planar mechanisms
def planar() -> ModelBuilder:
    b = ModelBuilder("flat", root="ground", plane="xy")
    b.body("a", mass=1.0, inertia=BOX)
    return b


def test_unknown_plane():
    b = ModelBuilder("m", root="world", plane="xz")
    fails(b, r"model 'm': unknown plane 'xz'")


def test_spatial_joint_in_a_planar_mechanism():
    b = planar()
    b.joint("j", "spherical", "ground", "a")
    fails(b, r"joint 'j': a spherical joint cannot be part of a planar mechanism")


def test_revolute_axis_off_the_normal():
    b = planar()
    b.joint("j", "revolute", "ground", "a", axis=(1, 0, 0))
    fails(b, r"joint 'j': axis must be along z")


def test_prismatic_axis_out_of_the_plane():
    b = planar()
    b.joint("j", "prismatic", "ground", "a", axis=(0, 0, 1))
    fails(b, r"joint 'j': prismatic axis must lie in the xy plane")


def test_placement_rotating_out_of_the_plane():
    b = planar()
    b.joint("j", "revolute", "ground", "a", rpy=(0.3, 0, 0))
    fails(b, r"joint 'j': placement rotates out of the xy plane")


# ---------------------------------------------------------------------- from files: file:line
def test_yaml_duplicate_body_cites_its_line(tmp_path):
    path = write(
        tmp_path,
        name="dup.yaml",
        text="""
        bodies:
          - {name: a, mass: 1, inertia: [1, 1, 1]}
          - {name: a, mass: 2, inertia: [1, 1, 1]}
        joints:
          - {name: j, type: revolute, parent: ground, child: a}
        """,
    )
    with pytest.raises(ModelError, match=r"duplicate name 'a'") as err:
        load(path)
    assert str(err.value).startswith(f"{path}:3: ")


def test_yaml_unreachable_body_cites_its_line(tmp_path):
    path = write(
        tmp_path,
        name="island.yaml",
        text="""
        bodies:
          - {name: a, mass: 1, inertia: [1, 1, 1]}
          - name: island
            mass: 1
        joints:
          - {name: j, type: revolute, parent: ground, child: a}
        """,
    )
    with pytest.raises(ModelError, match=r"body 'island': unreachable") as err:
        load(path)
    assert str(err.value).startswith(f"{path}:{line_of(path, 'name: island')}: ")


def test_yaml_coupling_to_a_missing_joint_cites_its_line(tmp_path):
    path = write(
        tmp_path,
        name="gear.yaml",
        text="""
        bodies:
          - {name: a, mass: 1, inertia: [1, 1, 1]}
        joints:
          - {name: j, type: revolute, parent: ground, child: a}
        couplings:
          - {joint: j, master: motor, ratio: 3}
        """,
    )
    with pytest.raises(ModelError, match=r"master joint 'motor' does not exist") as err:
        load(path)
    assert str(err.value).startswith(f"{path}:{line_of(path, 'master: motor')}: ")


def test_yaml_zero_axis_cites_the_joint_line(tmp_path):
    path = write(
        tmp_path,
        name="axis.yaml",
        text="""
        bodies:
          - {name: a, mass: 1, inertia: [1, 1, 1]}
        joints:
          - name: slide
            type: prismatic
            parent: ground
            child: a
            axis: [0, 0, 0]
        """,
    )
    with pytest.raises(ModelError, match=r"joint 'slide': zero-length axis") as err:
        load(path)
    assert str(err.value).startswith(f"{path}:{line_of(path, 'name: slide')}: ")


URDF_CYCLE = """
<robot name="cyc">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/>
    <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="b"><inertial><mass value="1"/>
    <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/></joint>
  <joint name="j3" type="revolute"><parent link="base"/><child link="b"/></joint>
</robot>
"""


def test_urdf_cycle_cites_the_joint_line(tmp_path):
    path = write(tmp_path, name="cyc.urdf", text=URDF_CYCLE)
    with pytest.raises(ModelError, match=r"already has parent joint") as err:
        load(path)
    line = line_of(path, '<joint name="j3"')
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_urdf_indefinite_inertia_cites_the_link_line(tmp_path):
    path = write(
        tmp_path,
        name="psd.urdf",
        text=URDF_CYCLE.replace(
            '<joint name="j3" type="revolute"><parent link="base"/><child link="b"/></joint>', ""
        ).replace(
            'iyy="1" iyz="0" izz="1"/></inertial></link>\n  <link name="b">',
            'iyy="1" iyz="0" izz="-1"/></inertial></link>\n  <link name="b">',
        ),
    )
    with pytest.raises(ModelError, match=r"body 'a': .*not positive semi-definite") as err:
        load(path)
    line = line_of(path, '<link name="a"')
    assert str(err.value).startswith(f"{path}:{line}: ")


# ---------------------------------------------------------------------- lumped bodies
def test_placeholder_inertia_merged_into_a_real_body_is_accepted():
    """Triangle/PSD checks apply to the bodies that carry dynamics, after lumping: a
    massless link with a placeholder inertia (all entries equal, as some URDFs have) is
    fine once merged into a real body."""
    b = chain()
    b.body("placeholder", mass=0.0, inertia=((1e-6,) * 3,) * 3)
    b.joint("weld", "fixed", parent="b", child="placeholder", xyz=(0, 0, -0.2))
    b.build()


def test_lumped_body_that_is_not_positive_semidefinite_is_named():
    b = chain()
    b.body("bad", mass=0.0, inertia=((-1.0, 0, 0), (0, -1.0, 0), (0, 0, -1.0)))
    b.joint("weld", "fixed", parent="b", child="bad")
    fails(
        b,
        r"body 'b': rotational inertia is not positive semi-definite "
        r".*after merging the fixed links 'bad'",
    )


def test_tiny_inertia_noise_is_tolerated():
    chain(inertia=(5.45e-20, 1e-20, 2e-20)).build()


# ---------------------------------------------------------------------- limits
def test_lower_limit_above_upper():
    from symgen.model import Limits

    b = ModelBuilder("r")
    b.body("a", mass=1.0, inertia=BOX)
    b.joint("ja", "revolute", "world", "a", limits=Limits(lower=1.0, upper=-1.0), source=HERE)
    fails(b, r"model.py:7: joint 'ja': lower limit 1 is above upper limit -1")


# ---------------------------------------------------------------------- couplings
def test_joint_coupled_to_itself():
    b = chain()
    b.coupling("jb", master="jb", source=HERE)
    fails(b, r"coupling of joint 'jb': a joint cannot be coupled to itself")


def test_joint_coupled_twice():
    b = chain()
    b.coupling("jb", master="ja")
    b.coupling("jb", master="ja", ratio=2.0, source=HERE)
    fails(b, r"model.py:7: coupling of joint 'jb': joint already coupled to 'ja'")


def test_coupling_cycle():
    b = chain()
    b.coupling("jb", master="ja")
    b.coupling("ja", master="jb")
    fails(b, r"couplings form a cycle through joint")


def test_coupling_to_a_loop_joint():
    b = chain()
    b.loop_joint("close", "revolute", parent="world", child="b", axis=(0, 1, 0))
    b.coupling("jb", master="close", source=HERE)
    fails(b, r"coupling of joint 'jb': master joint 'close' is a loop joint")


# ---------------------------------------------------------------------- parameter values
def test_resolve_rejects_a_negative_parameter_mass():
    b = chain()
    m = b.parameter("payload", 1.0)
    b.body("tool", mass=m, inertia=BOX)
    b.joint("flange", "fixed", parent="b", child="tool")
    model = b.build()
    assert model.resolve({"payload": 2.0}).bodies[1].mass == pytest.approx(3.0)
    with pytest.raises(ModelError, match=r"body 'b': negative mass"):
        model.resolve({"payload": -5.0})


# ---------------------------------------------------------------------- values (issue 11)
# Every value is a finite real number at the parameters' defaults, and so is every quantity
# derived from it at load time; checks print no numpy RuntimeWarning ("error" filter).
hostile = pytest.mark.filterwarnings("error")


@hostile
@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"mass": sympy.I}, r"body 'b': I is not a real number"),
        ({"mass": 1 + sympy.sqrt(-4)}, r"body 'b': 1 \+ 2\*I is not a real number"),
        ({"mass": sympy.zoo}, r"body 'b': zoo is not a finite number"),
        ({"mass": 10**400}, r"body 'b': 1000.* is not a finite number"),
        ({"mass": "inf"}, r"body 'b': 'inf' is not a finite number"),
        ({"mass": "1e400"}, r"body 'b': '1e400' is not a finite number"),
        ({"mass": sympy.true}, r"body 'b': True is not a number"),
        ({"com": (0, 0, complex(1, 1))}, r"body 'b': \(1\+1j\) is not a number"),
    ],
)
def test_builder_values_that_are_not_finite_real_numbers(kwargs, pattern):
    with pytest.raises(ModelError, match=pattern):
        chain(**kwargs)


def test_builder_accepts_numpy_scalars_and_plain_symbols():
    b = chain(mass=np.float32(2.0), com=(np.int64(0), 0, -0.5))
    m = b.parameter("m", 1.0)
    b.body("c", mass=sympy.Symbol("m") * 2, inertia=BOX)  # a symbol made outside the builder
    b.joint("jc", "revolute", "b", "c")
    model = b.build()
    assert model.bodies[1].mass == 2.0
    assert model.bodies[2].mass == 2 * m  # the parameter's own (real) symbol


@hostile
def test_parameter_expression_complex_at_the_default():
    b = ModelBuilder("m", root="world")
    m = b.parameter("m", 1.0)
    b.body("a", mass=1.0, com=(0, 0, sympy.sqrt(m - 2)), inertia=BOX, source=HERE)
    b.joint("ja", "revolute", "world", "a")
    fails(b, r"model.py:7: body 'a': centre of mass: sqrt\(m - 2\) = 0\+1i is not a real number "
             r"at m = 1")


@hostile
@pytest.mark.parametrize(
    ("element", "pattern"),
    [
        ("joint", r"joint 'jc': origin: sqrt\(m - 2\) = 0\+1i is not a real number at m = 1"),
        ("axis", r"joint 'jc': axis: .* is not a real number"),
        ("pitch", r"joint 'jc': pitch: .* is not a real number"),
        ("limit", r"joint 'jc': lower limit: .* is not a real number"),
        ("loop", r"loop joint 'close': child origin: .* is not a real number"),
        ("frame", r"frame 'tool': origin: .* is not a real number"),
        ("coupling", r"coupling of joint 'jc': ratio: .* is not a real number"),
        ("gravity", r"model 'chain': gravity: .* is not a real number"),
    ],
)
def test_every_kind_of_value_is_checked_at_the_defaults(element, pattern):
    from symgen.model import Limits

    b = chain()
    bad = sympy.sqrt(b.parameter("m", 1.0) - 2)
    b.body("c", mass=1.0, inertia=BOX)
    joint = {"xyz": (bad, 0, 0)} if element == "joint" else {}
    joint |= {"axis": (bad, 0, 1)} if element == "axis" else {}
    joint |= {"pitch": bad} if element == "pitch" else {}
    joint |= {"limits": Limits(lower=bad)} if element == "limit" else {}
    b.joint("jc", "helical", "b", "c", **joint)
    if element == "loop":
        b.loop_joint("close", "revolute", "c", "world", child_xyz=(0, bad, 0))
    if element == "frame":
        b.frame("tool", "c", rpy=(0, bad, 0))
    if element == "coupling":
        b.coupling("jc", "jb", ratio=bad)
    if element == "gravity":
        b._gravity_raw = (0, 0, bad)
    fails(b, pattern)


@hostile
def test_huge_inertia_is_checked_without_overflow():
    # a physical but absurd inertia: the PSD and triangle checks run on inertia / max entry
    # (eigvalsh on 1e308 entries did not converge); 1e308 itself is above MAX_MAGNITUDE
    fails(chain(inertia=(1e299, 1e299, -1e299)), r"body 'b': .*not positive semi-definite "
                                                  r"\(principal moments -1e\+299")
    fails(chain(inertia=(1e299, 1e299, 3e299)), r"violates the triangle inequality")
    fails(chain(inertia=(1e308, 1e308, 1e308)), r"body 'b': rotational inertia is too large")
    chain(inertia=(1e299, 1e299, 1e299)).build()


@hostile
@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"mass": 1e308}, r"body 'b': mass is too large \(1e\+308"),
        ({"mass": 1e308, "com": (1e308, 0, 0)}, r"body 'b': mass is too large"),
        ({"mass": 1e200, "com": (1e60, 0, 0)}, r"body 'b': mass x squared distance from the "
                                               r"root \(along joint 'jb' and its ancestors\)"),
        ({"com": (0, 0, 1e200)}, r"body 'b': squared distance from the root"),
        ({"mass": 3e299, "com": (0, 0, 1)}, r"body 'b': mass x squared distance"),  # 1.2e300
    ],
)
def test_quantities_that_would_overflow_in_the_kernels(kwargs, pattern):
    fails(chain(**kwargs), pattern)


@hostile
def test_lumping_that_overflows_names_the_merged_links():
    b = chain(mass=1e150, com=(0, 0, 0))
    b.body("heavy", mass=1e150, com=(0, 0, 0), inertia=BOX)
    b.joint("weld", "fixed", parent="b", child="heavy", xyz=(1e160, 0, 0))
    # first moment m c = 1e310 overflows while merging
    fails(b, r"body 'b': inertia or centre of mass is not finite, after merging the fixed "
             r"links 'heavy'")


@hostile
def test_totals_over_the_model_are_bounded():
    b = ModelBuilder("many", root="world")
    parent = "world"
    for k in range(3):
        b.body(f"b{k}", mass=4e299, inertia=BOX)
        b.joint(f"j{k}", "prismatic", parent, f"b{k}")
        parent = f"b{k}"
    fails(b, r"model 'many': total mass of all bodies is too large \(1\.2e\+300")


@hostile
def test_huge_and_tiny_axes_normalise_exactly():
    for axis, unit in (((1e200, 0, 0), (1.0, 0, 0)), ((0, -3e300, 4e300), (0, -0.6, 0.8)),
                       ((3e-6, 0, -4e-6), (0.6, 0, -0.8))):
        b = chain()
        b.body("c", mass=1.0, inertia=BOX)
        b.joint("jc", "universal", "b", "c", axis=axis, axis2=(0, 1e250, 0))
        model = b.build()
        assert model.joints[2].axis == pytest.approx(unit, rel=1e-15, abs=0)
        assert model.joints[2].axis2 == (0.0, 1.0, 0.0)


def test_unused_second_axis_is_not_normalised():
    b = chain()
    b.body("c", mass=1.0, inertia=BOX)
    b.joint("jc", "revolute", "b", "c", axis2=(0, 0, 0))  # not used by a revolute joint
    assert b.build().joints[2].axis2 == (0.0, 0.0, 0.0)


@hostile
def test_resolve_with_a_value_that_makes_an_expression_complex():
    from symgen.model.scalars import NonRealValueError

    b = ModelBuilder("m", root="world")
    m = b.parameter("m", 3.0)
    b.body("a", mass=sympy.sqrt(m - 2), inertia=BOX)
    b.joint("ja", "revolute", "world", "a")
    model = b.build()
    with pytest.raises(NonRealValueError, match=r"sqrt\(m - 2\) = 0\+1i is not a real number "
                                                r"at m = 1"):
        model.resolve({"m": 1.0})


def test_names_are_bounded():
    b = chain()
    b.frame("f" * 257, "b", source=HERE)
    fails(b, r"model.py:7: frame name 'fffff.*\.\.\..*' is too long \(257 characters, at most "
             r"256\)")
    b = ModelBuilder("m" * 300)
    fails(b, r"model name .* is too long \(300 characters")
    chain().frame("f" * 256, "b")  # the limit itself is fine


def test_planar_joint_normal_must_not_depend_on_a_parameter():
    # found by tests/test_fuzz_readers.py: generate failed with TypeError in tree.py
    b = ModelBuilder("m", root="world")
    r = b.parameter("r", 1.9)
    b.body("a", mass=1.0, inertia=BOX)
    b.joint("ja", "planar", "world", "a", axis=(0, r, 1), source=HERE)
    fails(b, r"model.py:7: joint 'ja': the axis \(plane normal\) of a planar joint cannot "
             r"depend on parameters")

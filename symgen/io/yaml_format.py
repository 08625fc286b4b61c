"""Reader of symgen's native YAML model format (documented in docs/model-format.md).

The format says what URDF cannot: loop joints closing kinematic loops, named runtime
parameters (any numeric value may be ``"$name"`` or an arithmetic expression of parameters),
planar mechanisms with a 2-D shorthand, every symgen joint type, gear couplings, springs,
dampers and joint actuators. The reader
only reads: it checks the shape of the file (unknown keys, wrong types), turns it into
:class:`symgen.ModelBuilder` calls with the file:line of every element, and lets
:meth:`ModelBuilder.build` validate the physics.
"""

from __future__ import annotations

import difflib
import math
import reprlib
from pathlib import Path

from symgen.errors import ModelError, SourceRef
from symgen.io._expr import ExpressionError, parse_value
from symgen.io._yaml_loader import LineDict, LineList, load_yaml
from symgen.io.builder import Locks, ModelBuilder
from symgen.model import JointType, Limits, Model
from symgen.model.scalars import Scalar

#: Keys of each kind of entry (docs/model-format.md).
TOP_KEYS = (
    "name",
    "description",
    "root",
    "plane",
    "gravity",
    "parameters",
    "bodies",
    "joints",
    "loops",
    "frames",
    "couplings",
    "forces",
    "lock",
)
BODY_KEYS = ("name", "mass", "com", "inertia")
JOINT_KEYS = (
    "name",
    "type",
    "parent",
    "child",
    "origin",
    "axis",
    "axis2",
    "pitch",
    "limits",
    "armature",
)
LOOP_KEYS = ("name", "type", "parent", "child", "origin", "child_origin", "axis", "axis2", "pitch",
             "cut")
FRAME_KEYS = ("name", "body", "origin")
COUPLING_KEYS = ("joint", "master", "ratio", "offset")
#: Keys of each type of entry under ``forces`` (name and type are required for all).
FORCE_KEYS = {
    "spring": ("name", "type", "body_a", "point_a", "body_b", "point_b", "stiffness", "damping",
               "rest_length"),
    "joint_spring": ("name", "type", "joint", "stiffness", "damping", "rest"),
    "actuator": ("name", "type", "joint", "force"),
}
FORCE_REQUIRED = {
    "spring": ("body_a", "point_a", "body_b", "point_b", "stiffness"),
    "joint_spring": ("joint", "stiffness"),
    "actuator": ("joint", "force"),
}
PARAMETER_KEYS = ("default", "description")
LIMIT_KEYS = ("lower", "upper", "velocity", "effort")
INERTIA_KEYS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
ORIGIN_KEYS = ("xyz", "rpy")
PLANAR_ORIGIN_KEYS = ("xy", "angle")

DEFAULT_ROOT = "ground"
WORLD = "world"
UNIVERSE = "universe"
ROOT_JOINT = "root_joint"
GRAVITY_3D = (0.0, 0.0, -9.81)
GRAVITY_PLANAR = (0.0, -9.81, 0.0)


def read_yaml(
    path: str | Path, floating_base: bool = False, lock: Locks | None = None
) -> Model:
    """Read a symgen YAML model file into a validated :class:`Model`.

    ``floating_base=True`` adds a root body ``world`` and attaches the file's root body to it
    by a joint ``root_joint`` (free; planar for a planar model). The file's root body may then
    be listed under ``bodies`` to give it an inertia. ``lock`` maps joint names to the
    values they are held at (None: neutral); it adds to the file's ``lock`` section and
    overrides it for a joint named in both.
    """
    path = Path(path)
    try:
        return _YamlReader(path).read(floating_base, lock)
    except RecursionError:  # nesting is bounded by the loader; this is the last defence
        raise ModelError("the model is nested too deeply to read", SourceRef(str(path))) from None


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 60


def _show(x: object) -> str:
    """``repr(x)`` shortened for a one-line message (aliases can make huge values)."""
    return _REPR.repr(x)


def _type_name(x: object) -> str:
    if isinstance(x, bool):
        return "a boolean"
    if isinstance(x, int | float):
        return "a number"
    if isinstance(x, str):
        return "a string"
    if isinstance(x, list):
        return "a list"
    if isinstance(x, dict):
        return "a mapping"
    if x is None:
        return "nothing (null)"
    return type(x).__name__


class _YamlReader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = str(path)
        self.planar = False
        self.parameters: set[str] = set()

    # ------------------------------------------------------------------ helpers
    def ref(self, line: int | None) -> SourceRef:
        return SourceRef(self.file, line)

    def fail(self, message: str, line: int | None) -> ModelError:
        return ModelError(message, self.ref(line))

    def mapping(self, value: object, what: str, line: int) -> LineDict:
        if not isinstance(value, LineDict):
            raise self.fail(
                f"{what}: expected a mapping (key: value), got {_type_name(value)}", line
            )
        return value

    def sequence(self, value: object, what: str, line: int) -> LineList:
        if not isinstance(value, LineList):
            raise self.fail(f"{what}: expected a list, got {_type_name(value)}", line)
        return value

    def check_keys(
        self, d: LineDict, what: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
    ) -> None:
        for key in d:
            if key not in allowed:
                hint = difflib.get_close_matches(str(key), allowed, n=1)
                suggestion = f"did you mean {hint[0]!r}? " if hint else ""
                raise self.fail(
                    f"{what}: unknown key {key!r} ({suggestion}allowed: {', '.join(allowed)})",
                    d.line_of(key),
                )
        for key in required:
            if key not in d:
                raise self.fail(f"{what}: missing required key {key!r}", d.line)

    def string(self, d: LineDict, key: str, what: str, default: str | None = None) -> str:
        if key not in d:
            if default is None:
                raise self.fail(f"{what}: missing required key {key!r}", d.line)
            return default
        value = d[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(
                f"{what}: {key} must be a name (a string), got {_type_name(value)} {_show(value)}",
                d.line_of(key),
            )
        return value

    def scalar(self, value: object, what: str, line: int) -> Scalar:
        """A number, or a string holding ``$name`` or an expression of parameters."""
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.fail(
                f"{what}: expected a number or a '$parameter' expression, got "
                f"{_type_name(value)} {_show(value)}",
                line,
            )
        if isinstance(value, str):
            try:
                return parse_value(value, self.parameters)
            except ExpressionError as exc:
                raise self.fail(f"{what}: {exc}", line) from None
        return self.finite(value, what, line)

    def finite(self, value: int | float, what: str, line: int) -> float:
        """``value`` as a float; an integer too large for one is an error."""
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise self.fail(f"{what}: {_show(value)} is not a finite number", line)
        return number

    def number(self, d: LineDict, key: str, what: str, default: float) -> Scalar:
        if key not in d:
            return default
        return self.scalar(d[key], f"{what}: {key}", d.line_of(key))

    def vector(
        self, d: LineDict, key: str, what: str, default: tuple, sizes: tuple[int, ...]
    ) -> list[Scalar]:
        """A list of numbers of one of the lengths ``sizes``; 2-D vectors get z = 0."""
        if key not in d:
            return list(default)
        value, line = d[key], d.line_of(key)
        label = f"{what}: {key}"
        if not isinstance(value, list) or len(value) not in sizes:
            n = " or ".join(str(s) for s in sizes)
            raise self.fail(
                f"{label}: expected a list of {n} numbers, got {_type_name(value)} {_show(value)}",
                line,
            )
        out = [self.scalar(x, label, line) for x in value]
        return out + [0.0] * (3 - len(out))

    def origin(self, d: LineDict, key: str, what: str) -> tuple[list, list]:
        """``xyz``/``rpy`` of an origin mapping (or ``xy``/``angle`` in a planar model)."""
        zero = (0.0, 0.0, 0.0)
        if key not in d:
            return list(zero), list(zero)
        label = f"{what}: {key}"
        o = self.mapping(d[key], label, d.line_of(key))
        allowed = ORIGIN_KEYS + (PLANAR_ORIGIN_KEYS if self.planar else ())
        self.check_keys(o, label, allowed)
        for a, b in (("xy", "xyz"), ("angle", "rpy")):
            if a in o and b in o:
                raise self.fail(f"{label}: give either {a!r} or {b!r}, not both", o.line_of(a))
        xyz = (
            self.vector(o, "xy", label, zero, (2,))
            if "xy" in o
            else self.vector(o, "xyz", label, zero, (3,))
        )
        if "angle" in o:
            rpy = [0.0, 0.0, self.scalar(o["angle"], f"{label}: angle", o.line_of("angle"))]
        else:
            rpy = self.vector(o, "rpy", label, zero, (3,))
        return xyz, rpy

    def entries(self, doc: LineDict, key: str) -> list[tuple[LineDict, int]]:
        """The mappings listed under top-level ``key`` (an empty list when absent)."""
        if key not in doc or doc[key] is None:
            return []
        items = self.sequence(doc[key], key, doc.line_of(key))
        out = []
        for k, item in enumerate(items):
            line = getattr(item, "line", items.line)
            out.append((self.mapping(item, f"{key}[{k}]", line), line))
        return out

    # ------------------------------------------------------------------ sections
    def read(self, floating_base: bool, lock: Locks | None = None) -> Model:
        doc = load_yaml(self.path)
        if doc is None:
            raise self.fail("empty model file", 1)
        doc = self.mapping(doc, "model file", 1)
        self.check_keys(doc, "model", TOP_KEYS)
        name = self.string(doc, "name", "model", self.path.stem)
        if "description" in doc and not isinstance(doc["description"], str | None):
            raise self.fail("model: description must be text", doc.line_of("description"))
        plane = doc.get("plane")
        if plane is not None and plane != "xy":
            raise self.fail(
                f"model: plane {_show(plane)} is not supported (the only plane is 'xy')",
                doc.line_of("plane"),
            )
        self.planar = plane == "xy"
        file_root = self.string(doc, "root", "model", DEFAULT_ROOT)

        params = self.read_parameters(doc)
        gravity = self.vector(
            doc,
            "gravity",
            "model",
            GRAVITY_PLANAR if self.planar else GRAVITY_3D,
            (2, 3) if self.planar else (3,),
        )
        root = file_root
        if floating_base:
            root = WORLD if file_root != WORLD else UNIVERSE
        builder = ModelBuilder(
            name, root=root, gravity=gravity, plane=plane, source=self.ref(doc.line)
        )
        for pname, default, description, line in params:
            builder.parameter(pname, default, description, source=self.ref(line))

        root_body_line = None
        for d, line in self.entries(doc, "bodies"):
            bname = self.string(d, "name", "body entry")
            what = f"body {bname!r}"
            self.check_keys(d, what, BODY_KEYS, ("name",))
            mass = self.body_mass(d, what)
            com = self.vector(d, "com", what, (0.0, 0.0, 0.0), (2, 3) if self.planar else (3,))
            inertia = self.inertia(d, what)
            if bname == file_root:
                root_body_line = line
                if not floating_base:
                    continue  # a fixed root carries no dynamics
            builder.body(bname, mass=mass, com=com, inertia=inertia, source=self.ref(line))
        if root_body_line is None:
            root_body_line = doc.line_of("root")
            if floating_base:  # the file's root is not listed under bodies: no inertia
                builder.body(file_root, source=self.ref(root_body_line))
        if floating_base:
            builder.joint(
                ROOT_JOINT,
                "planar" if self.planar else "free",
                parent=root,
                child=file_root,
                source=self.ref(root_body_line),
            )

        for d, line in self.entries(doc, "joints"):
            self.read_joint(builder, d, line, loop=False)
        for d, line in self.entries(doc, "loops"):
            self.read_joint(builder, d, line, loop=True)
        for d, line in self.entries(doc, "frames"):
            fname = self.string(d, "name", "frame entry")
            what = f"frame {fname!r}"
            self.check_keys(d, what, FRAME_KEYS, ("name", "body"))
            xyz, rpy = self.origin(d, "origin", what)
            builder.frame(
                fname, self.string(d, "body", what), xyz=xyz, rpy=rpy, source=self.ref(line)
            )
        for d, line in self.entries(doc, "couplings"):
            joint = self.string(d, "joint", "coupling entry")
            what = f"coupling of joint {joint!r}"
            self.check_keys(d, what, COUPLING_KEYS, ("joint", "master"))
            builder.coupling(
                joint,
                self.string(d, "master", what),
                ratio=self.number(d, "ratio", what, 1.0),
                offset=self.number(d, "offset", what, 0.0),
                source=self.ref(line),
            )
        for d, line in self.entries(doc, "forces"):
            self.read_force(builder, d, line)
        locks = self.read_locks(doc)
        for jname, value in (lock or {}).items():
            locks[jname] = (value, None)
        for jname, (value, line) in locks.items():
            builder.lock(jname, value, source=None if line is None else self.ref(line))
        return builder.build()

    def read_force(self, builder: ModelBuilder, d: LineDict, line: int) -> None:
        """One entry of ``forces``: a spring, a joint spring or an actuator."""
        fname = self.string(d, "name", "force entry")
        what = f"force {fname!r}"
        ftype = self.string(d, "type", what)
        if ftype not in FORCE_KEYS:
            hint = difflib.get_close_matches(ftype, list(FORCE_KEYS), n=1)
            suggestion = f"did you mean {hint[0]!r}? " if hint else ""
            raise self.fail(
                f"{what}: unknown type {ftype!r} ({suggestion}known: {', '.join(FORCE_KEYS)})",
                d.line_of("type"),
            )
        what = f"{ftype.replace('_', ' ')} {fname!r}"
        self.check_keys(d, what, FORCE_KEYS[ftype], ("name", "type") + FORCE_REQUIRED[ftype])
        source = self.ref(line)
        if ftype == "spring":
            sizes = (2, 3) if self.planar else (3,)
            zero = (0.0, 0.0, 0.0)
            rest = None
            if d.get("rest_length") is not None:
                rest = self.number(d, "rest_length", what, 0.0)
            builder.spring(
                fname,
                self.string(d, "body_a", what),
                self.vector(d, "point_a", what, zero, sizes),
                self.string(d, "body_b", what),
                self.vector(d, "point_b", what, zero, sizes),
                stiffness=self.number(d, "stiffness", what, 0.0),
                damping=self.number(d, "damping", what, 0.0),
                rest_length=rest,
                source=source,
            )
        elif ftype == "joint_spring":
            builder.joint_spring(
                fname,
                self.string(d, "joint", what),
                stiffness=self.number(d, "stiffness", what, 0.0),
                damping=self.number(d, "damping", what, 0.0),
                rest=self.number(d, "rest", what, 0.0),
                source=source,
            )
        else:
            builder.actuator(
                fname, self.string(d, "joint", what), self.number(d, "force", what, 0.0),
                source=source,
            )

    def read_locks(self, doc: LineDict) -> dict[str, tuple[object, int | None]]:
        """The ``lock`` section: joint name -> value (number, list of nq numbers, or null for
        the neutral value) and line."""
        if "lock" not in doc or doc["lock"] is None:
            return {}
        section = self.mapping(doc["lock"], "lock", doc.line_of("lock"))
        out: dict[str, tuple[object, int | None]] = {}
        for jname, value in section.items():
            line = section.line_of(jname)
            what = f"lock of joint {jname!r}"
            if not isinstance(jname, str) or not jname.strip():
                raise self.fail(f"lock: {jname!r} is not a joint name", line)
            if value is None:
                out[jname] = (None, line)
            elif isinstance(value, list):
                if not value:
                    raise self.fail(f"{what}: an empty list of values", line)
                out[jname] = ([self.scalar(x, what, line) for x in value], line)
            else:
                out[jname] = (self.scalar(value, what, line), line)
        return out

    def read_parameters(self, doc: LineDict) -> list[tuple[str, float, str, int]]:
        if "parameters" not in doc or doc["parameters"] is None:
            return []
        section = self.mapping(doc["parameters"], "parameters", doc.line_of("parameters"))
        out = []
        for pname, spec in section.items():
            line = section.line_of(pname)
            if not isinstance(pname, str) or not pname.isidentifier():
                raise self.fail(
                    f"parameter {pname!r}: a parameter name must be an identifier "
                    f"(letters, digits, underscores)",
                    line,
                )
            what = f"parameter {pname!r}"
            description = ""
            if isinstance(spec, LineDict):
                self.check_keys(spec, what, PARAMETER_KEYS, ("default",))
                default = spec["default"]
                line = spec.line_of("default")
                description = spec.get("description") or ""
                if not isinstance(description, str):
                    raise self.fail(
                        f"{what}: description must be text", spec.line_of("description")
                    )
            else:
                default = spec
            if isinstance(default, bool) or not isinstance(default, int | float):
                raise self.fail(
                    f"{what}: the default value must be a number, got "
                    f"{_type_name(default)} {_show(default)}",
                    line,
                )
            out.append((pname, self.finite(default, f"{what}: default", line), description, line))
            self.parameters.add(pname)
        return out

    def body_mass(self, d: LineDict, what: str) -> Scalar:
        """The required ``mass`` of a body entry (a massless body says ``mass: 0``, so that a
        forgotten mass is an error, not 0 kg)."""
        if "mass" not in d:
            raise self.fail(f"{what}: missing required key 'mass' (write 'mass: 0' for a "
                            "massless body)", d.line)
        return self.number(d, "mass", what, 0.0)

    def inertia(self, d: LineDict, what: str):
        """Rotational inertia about the COM: the builder's forms, a mapping, or (planar) izz."""
        if "inertia" not in d:
            return (0.0, 0.0, 0.0)
        value, line = d["inertia"], d.line_of("inertia")
        label = f"{what}: inertia"
        if isinstance(value, LineDict):
            self.check_keys(value, label, INERTIA_KEYS)
            return [self.number(value, k, label, 0.0) for k in INERTIA_KEYS]
        if isinstance(value, list):
            if len(value) == 3 and all(isinstance(r, list) for r in value):
                if any(len(r) != 3 for r in value):
                    raise self.fail(f"{label}: a 3x3 matrix needs 3 rows of 3 numbers", line)
                return [[self.scalar(x, label, line) for x in row] for row in value]
            if len(value) in (3, 6):
                return [self.scalar(x, label, line) for x in value]
        elif self.planar and not isinstance(value, bool) and isinstance(value, int | float | str):
            izz = self.scalar(value, label, line)
            # A thin lamina in the xy plane: ixx + iyy = izz, so the tensor is physical.
            return (izz / 2, izz / 2, izz)
        forms = (
            "[ixx, iyy, izz], [ixx, iyy, izz, ixy, ixz, iyz], a 3x3 matrix or a mapping "
            "{ixx: .., iyy: .., ...}"
        )
        if self.planar:
            forms = "a single number izz, " + forms
        raise self.fail(f"{label}: expected {forms}; got {_type_name(value)} {_show(value)}", line)

    def read_joint(self, builder: ModelBuilder, d: LineDict, line: int, loop: bool) -> None:
        section = "loops" if loop else "joints"
        jname = self.string(d, "name", f"{section[:-1]} entry")
        what = f"{'loop joint' if loop else 'joint'} {jname!r}"
        self.check_keys(
            d, what, LOOP_KEYS if loop else JOINT_KEYS, ("name", "type", "parent", "child")
        )
        jtype_text = self.string(d, "type", what)
        parent = self.string(d, "parent", what)
        child = self.string(d, "child", what)
        jtype = JointType.parse(jtype_text)
        if jtype is not None:  # an unknown type is reported by ModelBuilder.build
            for key, applies in (
                ("axis", jtype.layout.uses_axis),
                ("axis2", jtype.layout.uses_axis2),
                ("pitch", jtype.layout.uses_pitch),
            ):
                if key in d and not applies:
                    raise self.fail(
                        f"{what}: {key!r} does not apply to a {jtype.value} joint", d.line_of(key)
                    )
        along_plane = jtype is not None and jtype.layout.plane_axis == "in-plane"
        in_plane_default = (1.0, 0.0, 0.0) if along_plane else (0.0, 0.0, 1.0)
        axis = self.vector(
            d,
            "axis",
            what,
            in_plane_default if self.planar else (0.0, 0.0, 1.0),
            (2, 3) if self.planar else (3,),
        )
        axis2 = self.vector(d, "axis2", what, (0.0, 1.0, 0.0), (3,))
        pitch = self.number(d, "pitch", what, 0.0)
        xyz, rpy = self.origin(d, "origin", what)
        source = self.ref(line)
        armature = None
        if "armature" in d:
            label, aline = f"{what}: armature", d.line_of("armature")
            value = d["armature"]
            if isinstance(value, list):
                if not value:
                    raise self.fail(f"{label}: an empty list of values", aline)
                armature = [self.scalar(x, label, aline) for x in value]
            else:
                armature = self.scalar(value, label, aline)
        if loop:
            cxyz, crpy = self.origin(d, "child_origin", what)
            builder.loop_joint(
                jname,
                jtype_text,
                parent,
                child,
                xyz=xyz,
                rpy=rpy,
                child_xyz=cxyz,
                child_rpy=crpy,
                axis=axis,
                axis2=axis2,
                pitch=pitch,
                cut=self.string(d, "cut", what, "declared"),
                source=source,
            )
        else:
            builder.joint(
                jname,
                jtype_text,
                parent,
                child,
                xyz=xyz,
                rpy=rpy,
                axis=axis,
                axis2=axis2,
                pitch=pitch,
                limits=self.limits(d, what),
                armature=armature,
                source=source,
            )

    def limits(self, d: LineDict, what: str) -> Limits | None:
        if "limits" not in d or d["limits"] is None:
            return None
        label = f"{what}: limits"
        spec = self.mapping(d["limits"], label, d.line_of("limits"))
        self.check_keys(spec, label, LIMIT_KEYS)
        values = {k: self.number(spec, k, label, None) if k in spec else None for k in LIMIT_KEYS}
        return Limits(**values)


__all__ = ["read_yaml"]

"""Readers: each turns a model file into a validated :class:`symgen.model.Model`."""

from __future__ import annotations

import difflib
from pathlib import Path

from symgen.errors import ModelError
from symgen.io._xml import root_tag
from symgen.io.builder import Locks
from symgen.io.mjcf import read_mjcf
from symgen.io.robots import KNOWN_ROBOTS, find_robot, robot_names
from symgen.io.sdf import read_sdf
from symgen.io.urdf import read_urdf
from symgen.io.yaml_format import read_yaml
from symgen.model import Model


def load(path: str | Path, floating_base: bool = False, lock: Locks | None = None,
         couplings: bool = True, strict: bool = False) -> Model:
    """Read a model file, choosing the reader by extension (``.urdf``, ``.yaml``/``.yml``,
    ``.sdf``) or, for ``.xml`` files, by the root element (``<mujoco>``: MJCF, ``<sdf>``: SDF,
    ``<robot>``: URDF).

    ``floating_base=True`` attaches the file's root body to the world by a free joint
    (named ``root_joint``), as URDFs of legged and humanoid robots expect. ``lock`` holds
    joints at given values (None: the neutral value) and lumps what they carry, as
    Pinocchio's ``buildReducedModel``; see :meth:`symgen.ModelBuilder.lock`.
    ``couplings=False`` drops the file's gear and mimic couplings (every joint keeps its
    own coordinate, as Pinocchio's ``buildModelFromUrdf`` with ``mimic=False``); by default
    they are imposed (:mod:`symgen.model.couplings`); a URDF's ``<mimic>`` tags are then not
    read at all, so a broken one (a master that does not exist) is no error.
    An unknown URDF element or attribute (a likely typo, such as ``<axsi>``) is a
    :class:`~symgen.errors.ModelWarning`; ``strict=True`` makes it a :class:`ModelError`.
    """
    p = Path(path)
    if not p.is_file():
        p = _robot_file(str(path))
    suffix = p.suffix.lower()
    if suffix == ".xml" or suffix == ".mjcf":
        readers = {"mujoco": read_mjcf, "sdf": read_sdf, "robot": read_urdf}
        tag = root_tag(p)
        if tag == "mujocoinclude":
            raise ModelError(f"{p}: an MJCF fragment (<mujocoinclude>) for <include>, not a "
                             "model: load the file that includes it")
        if tag not in readers:
            raise ModelError(f"{p}: an XML model file must have the root element <mujoco> "
                             f"(MJCF), <sdf> or <robot> (URDF), not <{tag}>")
        read = readers[tag]
    elif suffix == ".urdf":
        read = read_urdf
    elif suffix == ".sdf":
        read = read_sdf
    elif suffix in (".yaml", ".yml"):
        read = read_yaml
    else:
        raise ModelError(f"{p}: unknown model format {suffix!r} (expected .urdf, .xml (MJCF "
                         "or SDF), .sdf, .yaml or .yml)")
    extra = {"couplings": couplings, "strict": strict} if read is read_urdf else {}
    model = read(p, floating_base=floating_base, lock=lock, **extra)
    return model if couplings else model.without_couplings()


def _robot_file(name: str) -> Path:
    """The example-robot-data URDF a name stands for (:func:`.robots.find_robot`), else the
    one-line error of a missing file, with the closest robot names."""
    found = find_robot(name)
    if found is not None:
        return found
    names = robot_names()
    if not names or Path(name).suffix:  # a file name: no robot name has a suffix
        raise ModelError(f"{name}: no such model file")
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    raise ModelError(f"{name}: no such model file, nor an example-robot-data robot ({hint}"
                     f"robot names: {', '.join(KNOWN_ROBOTS)} or any of its "
                     f"{len(names) - len(KNOWN_ROBOTS)} URDF file names, e.g. "
                     f"{', '.join(names[len(KNOWN_ROBOTS):][:3])})")


__all__ = ["Locks", "load"]

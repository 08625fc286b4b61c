"""Readers: each turns a model file into a validated :class:`symgen.model.Model`."""

from __future__ import annotations

from pathlib import Path

from symgen.errors import ModelError
from symgen.io._xml import root_tag
from symgen.io.builder import Locks
from symgen.io.mjcf import read_mjcf
from symgen.io.sdf import read_sdf
from symgen.io.urdf import read_urdf
from symgen.io.yaml_format import read_yaml
from symgen.model import Model


def load(path: str | Path, floating_base: bool = False, lock: Locks | None = None,
         couplings: bool = True) -> Model:
    """Read a model file, choosing the reader by extension (``.urdf``, ``.yaml``/``.yml``,
    ``.sdf``) or, for ``.xml`` files, by the root element (``<mujoco>``: MJCF, ``<sdf>``: SDF,
    ``<robot>``: URDF).

    ``floating_base=True`` attaches the file's root body to the world by a free joint
    (named ``root_joint``), as URDFs of legged and humanoid robots expect. ``lock`` holds
    joints at given values (None: the neutral value) and lumps what they carry, as
    Pinocchio's ``buildReducedModel``; see :meth:`symgen.ModelBuilder.lock`.
    ``couplings=False`` drops the file's gear and mimic couplings (every joint keeps its
    own coordinate, as Pinocchio's ``buildModelFromUrdf`` with ``mimic=False``); by default
    they are imposed (:mod:`symgen.model.couplings`).
    """
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"{p}: no such model file")
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
    model = read(p, floating_base=floating_base, lock=lock)
    return model if couplings else model.without_couplings()


__all__ = ["Locks", "load"]

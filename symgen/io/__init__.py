"""Readers: each turns a model file into a validated :class:`symgen.model.Model`."""

from __future__ import annotations

from pathlib import Path

from ..model import Model, ModelError


def load(path: str | Path, floating_base: bool = False) -> Model:
    """Read a model file, choosing the reader by extension (``.urdf``, ``.yaml``/``.yml``).

    ``floating_base=True`` attaches the file's root body to the world by a free joint
    (named ``root_joint``), as URDFs of legged and humanoid robots expect.
    """
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"{p}: no such model file")
    suffix = p.suffix.lower()
    if suffix == ".urdf":
        from .urdf import read_urdf

        return read_urdf(p, floating_base=floating_base)
    if suffix in (".yaml", ".yml"):
        from .yaml_format import read_yaml

        return read_yaml(p, floating_base=floating_base)
    raise ModelError(f"{p}: unknown model format {suffix!r} (expected .urdf, .yaml or .yml)")


__all__ = ["load"]

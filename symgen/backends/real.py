"""The real types of generated C: one row of :data:`REAL_TYPES` per C floating type, holding
everything the backends and the build spell differently for it (literal and math-function
suffixes, numpy's names, the SIMD lane layout). Code outside this table looks a real type up
by name (:func:`real_type`) and never compares the name itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from symgen.errors import SymgenError


@dataclass(frozen=True)
class RealType:
    """One C floating type of the generated kernels.

    - ``name``: its C spelling (``double``), also the user's option value;
    - ``literal_suffix``: of a number literal (``2.0f``);
    - ``math_suffix``: of a ``<math.h>`` function (``sinf``);
    - ``dtype``: numpy's dtype name (``float32``);
    - ``typenum``: numpy's C API type number (``NPY_FLOAT``);
    - ``size``: bytes; a vector register holds ``8 // size`` of them per double
      (:attr:`per_double`);
    - ``mask_int``: the signed integer of the same size (a SIMD comparison mask's lane);
    - ``wider``: the wider real type to generate with when a value does not fit (None: the
      widest, whose literals are the IR's doubles printed as they are, and which is the
      reference a build of a narrower type is compared with);
    - ``python_scalars``: a Python float stands for a size-1 argument on the fast call path
      (it converts exactly: :mod:`symgen.backends.c99.fastcall`).
    """

    name: str
    literal_suffix: str
    math_suffix: str
    dtype: str
    typenum: str
    size: int
    mask_int: str
    wider: str | None
    python_scalars: bool

    @property
    def per_double(self) -> int:
        """Values of this type in the bytes of one double."""
        return 8 // self.size


#: The real types, by name; the first is the default.
REAL_TYPES: dict[str, RealType] = {
    "double": RealType("double", "", "", "float64", "NPY_DOUBLE", 8, "int64_t", None, True),
    "float": RealType("float", "f", "f", "float32", "NPY_FLOAT", 4, "int32_t", "double",
                      False),
}
#: Their names, in the table's order.
REALS: tuple[str, ...] = tuple(REAL_TYPES)


def real_type(name: str | RealType) -> RealType:
    """The real type ``name`` (a :class:`RealType` is returned as is); an unknown name raises
    :class:`SymgenError` naming the known ones."""
    if isinstance(name, RealType):
        return name
    try:
        return REAL_TYPES[name]
    except (KeyError, TypeError):
        raise SymgenError(f"real must be one of {', '.join(REALS)}, got {name!r}") from None


__all__ = ["REALS", "REAL_TYPES", "RealType", "real_type"]

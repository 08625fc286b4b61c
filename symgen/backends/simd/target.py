"""Compile targets of the simd backend: the flags for ``<prefix>_simd.c``, the libraries to
link, and an identity string for the build cache key.

- ``"native"`` (default): ``-march=native``, the host CPU (AVX2 here gives W = 4 doubles);
- ``"portable"``: no ``-march`` (baseline x86-64 has SSE2: W = 2 doubles), runs on any CPU
  of the architecture;
- any ``-march`` name (``"x86-64-v3"``, ``"-march=skylake-avx512"``): that CPU.

Every target compiles with ``-std=c99 -ffp-contract=off`` (no multiply-add contraction, so
lanes round like the scalar kernels; never ``-ffast-math``) and, where the compiler can link
glibc's libmvec, ``-DSYMGEN_LIBMVEC`` with ``-lmvec``. The identity names the target and
hashes the compiler's predefined macros under these flags (``cc -dM -E``: every ISA
extension ``-march=native`` resolved to), so two hosts with different CPUs never share a
compiled module.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache

from symgen.errors import SymgenError

#: Optimisation and language flags of every simd build (the scalar builder's default is
#: ``-O2 -std=c99`` too).
BASE_FLAGS = ("-O2", "-std=c99", "-ffp-contract=off")
#: Named targets besides explicit ``-march`` values.
NAMED = ("native", "portable")


@dataclass(frozen=True)
class Target:
    """What the builder needs for ``<prefix>_simd.c``: ``flags`` (compile, including
    ``BASE_FLAGS``), ``libraries`` (link as ``-l<name>``, after the objects), ``identity``
    (for the cache key) and ``width``, the lanes of double the target gives (1: the scalar
    loop)."""

    name: str
    flags: tuple[str, ...]
    libraries: tuple[str, ...]
    identity: str
    width: int


def _compiler() -> list[str]:
    """``$CC`` with its arguments, else gcc (as the scalar builder)."""
    return shlex.split(os.environ.get("CC", "")) or ["gcc"]


def _run(argv: list[str], stdin: str = "") -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SymgenError(f"cannot run the C compiler {argv[0]!r}: {exc}") from None


def march_flags(spec: str) -> tuple[str, ...]:
    """The ``-march`` flags of a target name (see the module documentation)."""
    if spec == "native":
        return ("-march=native",)
    if spec == "portable":
        return ()
    name = spec.removeprefix("-march=")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", name):
        raise SymgenError(f"unknown simd target {spec!r} (native, portable or a -march name)")
    return (f"-march={name}",)


@cache
def _macros(cc: tuple[str, ...], flags: tuple[str, ...]) -> str:
    run = _run([*cc, *flags, "-dM", "-E", "-x", "c", "-"])
    if run.returncode:
        tail = (run.stderr or run.stdout).strip().splitlines()[-1:]
        raise SymgenError(f"the C compiler rejects the simd target flags {' '.join(flags)}: "
                          f"{' '.join(tail)}")
    return "\n".join(sorted(run.stdout.splitlines()))


@cache
def libmvec_available(cc: tuple[str, ...]) -> bool:
    """Whether ``cc`` links a program calling libmvec's SSE2 ``sin`` with ``-lmvec``
    (glibc on x86-64; not musl, macOS or ARM)."""
    program = ("typedef double v2 __attribute__((vector_size(16)));\n"
               "v2 _ZGVbN2v_sin(v2);\n"
               "int main(void) { v2 x = {0.5, 1.0}; return (int)_ZGVbN2v_sin(x)[0]; }\n")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "t.c"), os.path.join(tmp, "t")
        with open(src, "w") as f:
            f.write(program)
        return _run([*cc, src, "-o", exe, "-lmvec", "-lm"]).returncode == 0


def _width(macros: str) -> int:
    defined = set(re.findall(r"#define (\w+)", macros))
    for name, width in (("__AVX512F__", 8), ("__AVX__", 4), ("__SSE2__", 2),
                        ("__aarch64__", 2), ("__VSX__", 2)):
        if name in defined:
            return width
    return 1


def simd_target(spec: str | None = None, cc: list[str] | tuple[str, ...] | None = None
                ) -> Target:
    """The :class:`Target` of ``spec`` (default ``"native"``) for compiler ``cc`` (default:
    ``$CC``, else gcc)."""
    spec = spec or "native"
    compiler = tuple(cc) if cc else tuple(_compiler())
    march = march_flags(spec)
    macros = _macros(compiler, (*BASE_FLAGS, *march))
    x86_64 = "#define __x86_64__ 1" in macros
    mvec = x86_64 and libmvec_available(compiler)
    flags = (*BASE_FLAGS, *march, *(("-DSYMGEN_LIBMVEC",) if mvec else ()))
    digest = hashlib.sha256(macros.encode()).hexdigest()[:16]
    identity = f"simd {spec} {' '.join(flags)} macros:{digest}{' libmvec' if mvec else ''}"
    return Target(spec, flags, ("mvec", "m") if mvec else ("m",), identity, _width(macros))


__all__ = ["BASE_FLAGS", "NAMED", "Target", "libmvec_available", "march_flags", "simd_target"]

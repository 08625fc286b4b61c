"""Compile generated C with cffi (API mode), cache the module, and call it from numpy
(design.md §5).

The compiled module is cached under a hash of the C source, the compiler (its version
line), the flags and the Python ABI, in ``$SYMGEN_CACHE_DIR``, else
``$XDG_CACHE_HOME/symgen``, else ``~/.cache/symgen``. A build runs in a fresh temporary
directory inside the cache and is renamed into place atomically, so two processes building
the same kernels at once never see a half-built module: the loser of the race discards its
copy and loads the winner's.

Every kernel becomes a :class:`KernelFunction` taking numpy arrays: a single argument set,
or a batch with a leading axis that runs as one C loop (the ``*_batch`` C function).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

import cffi
import numpy as np

from .emit import CSource, emit_c
from .generate import KernelSet
from .model import SymgenError
from .program import ArraySpec

#: Flags of the cffi build (the generated C is also checked with the strict warning set,
#: which cffi's own wrapper code would not pass).
DEFAULT_FLAGS = ("-O2", "-std=c99")
DTYPES = {"double": np.float64, "float": np.float32}


def cache_dir() -> Path:
    """Where compiled modules are cached."""
    if os.environ.get("SYMGEN_CACHE_DIR"):
        return Path(os.environ["SYMGEN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "symgen"


def compiler_command() -> str:
    """The C compiler cffi will use: ``$CC`` or gcc."""
    return os.environ.get("CC", "gcc").split()[0]


def compiler_identity(cc: str) -> str:
    """The compiler's version line, or a clear error when it cannot run."""
    path = shutil.which(cc)
    if path is None:
        raise SymgenError(f"C compiler {cc!r} not found (install gcc, or set CC)")
    try:
        run = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise SymgenError(f"C compiler {cc!r} cannot run: {exc}") from None
    lines = (run.stdout or run.stderr).splitlines()
    return lines[0] if lines else cc


def _declarations(src: CSource) -> str:
    """The header's typedef and prototypes, for ``ffi.cdef``."""
    lines = [line for line in src.header.splitlines()
             if line.startswith("typedef ") or (line.startswith("void ") and line.endswith(";"))]
    return "\n".join(lines)


def build_key(src: CSource, cc_identity: str, flags: Sequence[str]) -> str:
    h = hashlib.sha256()
    for part in (src.header, src.source, cc_identity, " ".join(flags), cffi.__version__,
                 sys.version, sysconfig.get_config_var("EXT_SUFFIX") or ""):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _module_file(directory: Path, module: str) -> Path | None:
    for path in directory.glob(f"{module}*"):
        if path.suffix in (".so", ".pyd", ".dylib"):
            return path
    return None


def _compile(src: CSource, module: str, directory: Path, flags: Sequence[str]) -> None:
    ffi = cffi.FFI()
    ffi.cdef(_declarations(src))
    ffi.set_source(module, f'#include "{src.header_name}"', sources=[src.source_name],
                   include_dirs=["."], extra_compile_args=list(flags))
    cwd = os.getcwd()
    try:
        os.chdir(directory)  # relative source paths keep the build independent of the cache
        ffi.compile(tmpdir=".", verbose=False)
    except Exception as exc:  # distutils/setuptools raise a variety of types
        detail = str(exc).strip().splitlines()
        raise SymgenError(
            f"compiling {src.source_name} failed: {detail[-1] if detail else type(exc).__name__}"
        ) from None
    finally:
        os.chdir(cwd)


def load_module(src: CSource, flags: Sequence[str] = DEFAULT_FLAGS):
    """The compiled cffi module of ``src`` (built, or taken from the cache)."""
    cc = compiler_command()
    key = build_key(src, compiler_identity(cc), flags)
    module = f"_symgen_{src.prefix}_{key[:12]}"
    root = cache_dir()
    final = root / key[:32]
    path = _module_file(final, module) if final.is_dir() else None
    if path is None:
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=root, prefix=".build-"))
        try:
            src.write(work)
            _compile(src, module, work, flags)
            try:
                os.rename(work, final)
            except OSError:  # another process finished first: use its module
                if _module_file(final, module) is None:
                    raise
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)
        path = _module_file(final, module)
        if path is None:
            raise SymgenError(f"the compiled module {module} is missing from {final}")
    spec = importlib.util.spec_from_file_location(module, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class KernelFunction:
    """One compiled kernel: ``f(q, v, ...)`` with numpy arrays, single or batched."""

    def __init__(self, name: str, inputs: Sequence[ArraySpec], outputs: Sequence[ArraySpec],
                 ffi, lib, c_name: str, real: str, defaults: dict[str, np.ndarray]) -> None:
        self.name = name
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self._ffi, self._single = ffi, getattr(lib, c_name)
        self._batch = getattr(lib, c_name + "_batch")
        self._ctype = f"{real}[]"
        self.dtype = DTYPES[real]
        self._defaults = defaults
        returns = ", ".join(s.name for s in self.outputs)
        self.__doc__ = f"{name}({', '.join(s.name for s in inputs)}) -> {returns}"

    def __repr__(self) -> str:
        return f"<compiled kernel {self.__doc__}>"

    def _arguments(self, args: tuple, kwargs: dict) -> list[np.ndarray]:
        names = [s.name for s in self.inputs]
        if len(args) > len(names):
            raise TypeError(f"{self.name}() takes {len(names)} arrays ({', '.join(names)}), "
                            f"got {len(args)}")
        values = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{self.name}() got an unexpected argument {key!r} "
                                f"(arguments: {', '.join(names)})")
            if key in values:
                raise TypeError(f"{self.name}() got two values for {key!r}")
            values[key] = value
        out = []
        for spec in self.inputs:
            if spec.name not in values:
                if spec.name in self._defaults:
                    values[spec.name] = self._defaults[spec.name]
                else:
                    raise TypeError(f"{self.name}() is missing the argument {spec.name!r}")
            out.append(_real_array(self.name, spec.name, values[spec.name]))
        return out

    def __call__(self, *args, **kwargs):
        """The output array, or a tuple of arrays for a kernel with several outputs."""
        arrays = self._arguments(args, kwargs)
        batch = None
        for spec, a in zip(self.inputs, arrays, strict=True):
            n = _batch_size(self.name, spec, a)
            if n is not None:
                if batch is not None and n != batch:
                    raise ValueError(f"{self.name}: batch sizes differ ({batch} and {n})")
                batch = n
        prepared = []
        for spec, a in zip(self.inputs, arrays, strict=True):
            flat = a.reshape(-1) if batch is None else a.reshape(-1, spec.size)
            if batch is not None and flat.shape[0] == 1 and a.size == spec.size:
                flat = np.broadcast_to(flat, (batch, spec.size))
            prepared.append(np.ascontiguousarray(flat, dtype=self.dtype))
        results = [
            np.empty(spec.shape if batch is None else (batch, *spec.shape), dtype=self.dtype)
            for spec in self.outputs
        ]
        ptrs = [self._ffi.from_buffer(self._ctype, a) for a in prepared]
        ptrs += [self._ffi.from_buffer(self._ctype, r, require_writable=True) for r in results]
        if batch is None:
            self._single(*ptrs)
        else:
            self._batch(batch, *ptrs)
        return results[0] if len(results) == 1 else tuple(results)


def _real_array(kernel: str, name: str, value) -> np.ndarray:
    a = np.asarray(value)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{kernel}: {name} must be a real numeric array, got dtype {a.dtype}")
    return a


def _batch_size(kernel: str, spec: ArraySpec, a: np.ndarray) -> int | None:
    """None for one argument set, the batch size for a leading batch axis."""
    if a.shape in (spec.shape, (spec.size,)) or (spec.size == 1 and a.ndim == 0):
        return None
    if a.ndim >= 1 and a.shape[1:] in (spec.shape, (spec.size,)):
        return int(a.shape[0])
    if spec.size == 1 and a.ndim == 1:  # a batch of scalars, e.g. dt
        return int(a.shape[0])
    raise ValueError(
        f"{kernel}: {spec.name} must have shape {spec.shape} or (batch, "
        f"{', '.join(map(str, spec.shape))}), got {a.shape}"
    )


class CompiledKernels:
    """The compiled kernels of one model: ``lib.mass_matrix(q)``, ``lib["..."]``."""

    def __init__(self, ks: KernelSet, src: CSource, module, real: str) -> None:
        self.kernel_set = ks
        self.source = src
        self.real = real
        model = ks.model
        defaults = {}
        if model.parameters:
            defaults["params"] = np.array([p.default for p in model.parameters])
        self.functions: dict[str, KernelFunction] = {}
        for name, program in ks.programs.items():
            self.functions[name] = KernelFunction(
                name, program.inputs, program.output_specs, module.ffi, module.lib,
                f"{src.prefix}_{name}", real, defaults,
            )

    def __getitem__(self, name: str) -> KernelFunction:
        try:
            return self.functions[name]
        except KeyError:
            known = ", ".join(self.functions)
            raise SymgenError(f"no compiled kernel {name!r} (kernels: {known})") from None

    def __getattr__(self, name: str) -> KernelFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.functions))


def compile_kernels(ks: KernelSet, real: str = "double", prefix: str | None = None,
                    flags: Sequence[str] = DEFAULT_FLAGS) -> CompiledKernels:
    """Emit, compile (or take from the cache) and wrap the kernels of ``ks``."""
    src = emit_c(ks, prefix=prefix, real=real)
    return CompiledKernels(ks, src, load_module(src, flags), real)


__all__ = [
    "DEFAULT_FLAGS",
    "CompiledKernels",
    "KernelFunction",
    "cache_dir",
    "compile_kernels",
    "compiler_command",
    "load_module",
]



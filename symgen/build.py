"""Compile generated C with cffi (API mode), cache the module, and call it from numpy
(design.md §5).

The compiled module is cached under a hash of the C source, the compiler (its version
line), the flags and the Python ABI, in ``$SYMGEN_CACHE_DIR``, else
``$XDG_CACHE_HOME/symgen``, else ``~/.cache/symgen``; the key never depends on where the cache
is. Builds are safe from several threads and processes at once and touch no process-global
state: cffi only writes its wrapper C (no ``ffi.compile``, which changes the working
directory, and no distutils), and the compiler runs as a subprocess on absolute paths in a
fresh ``.build-<host>-<pid>-*`` directory inside the cache. That directory is renamed into
place atomically, so nobody sees a half-built module: the loser of a race between processes
discards its copy and loads the winner's; threads of one process building the same kernels
wait for each other (one lock per key). Build directories whose process has died, or older
than :data:`STALE_AFTER` seconds, are removed by the next build.

Every kernel becomes a :class:`KernelFunction` taking numpy arrays: one argument set, or a
batch with a leading axis that runs as one C loop (the ``*_batch`` C function).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shlex
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import cffi
import numpy as np
from cffi.recompiler import recompile

from .emit import CSource, emit_c
from .generate import KernelSet
from .model import SymgenError
from .program import ArraySpec

#: Flags of the cffi build (the generated C is also checked with the strict warning set,
#: which cffi's own wrapper code would not pass).
DEFAULT_FLAGS = ("-O2", "-std=c99")
DTYPES = {"double": np.float64, "float": np.float32}
#: A ``.build-*`` directory older than this (seconds) is a dead build and is removed.
STALE_AFTER = 3600.0


def cache_dir() -> Path:
    """Where compiled modules are cached."""
    if os.environ.get("SYMGEN_CACHE_DIR"):
        return Path(os.environ["SYMGEN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "symgen"


def _compiler_argv() -> list[str]:
    """``$CC`` with its arguments (e.g. ``ccache gcc``), else gcc."""
    return shlex.split(os.environ.get("CC", "")) or ["gcc"]


def compiler_command() -> str:
    """The C compiler: the first word of ``$CC``, else gcc."""
    return _compiler_argv()[0]


def compiler_identity(cc: str) -> str:
    """The compiler's version line, or a clear error when it cannot run."""
    path = shutil.which(cc)
    if path is None:
        raise SymgenError(f"C compiler {cc!r} not found (install gcc, or set CC)")
    try:
        run = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SymgenError(f"C compiler {cc!r} cannot run: {exc}") from None
    lines = (run.stdout or run.stderr).splitlines()
    return lines[0] if lines else cc


def _declarations(src: CSource) -> str:
    """The header's typedef and prototypes, for ``ffi.cdef``."""
    lines = [line for line in src.header.splitlines()
             if line.startswith("typedef ") or (line.startswith("void ") and line.endswith(";"))]
    return "\n".join(lines)


def _python_flags() -> list[str]:
    """Position-independent code, the Python headers, and the link step of an extension
    module on this platform (what distutils' ``build_ext`` would use)."""
    paths = sysconfig.get_paths()
    includes = dict.fromkeys(p for p in (paths.get("include"), paths.get("platinclude")) if p)
    flags = shlex.split(sysconfig.get_config_var("CCSHARED") or "")
    flags += [f"-I{p}" for p in includes]
    if sys.platform == "darwin":
        flags += ["-bundle", "-undefined", "dynamic_lookup"]
    elif os.name == "nt":  # MinGW gcc; links the Python import library
        v = sys.version_info
        flags += ["-shared", f"-L{Path(sys.base_prefix) / 'libs'}", f"-lpython{v.major}{v.minor}"]
    else:
        flags += ["-shared"]
    return flags


def build_key(src: CSource, cc_identity: str, flags: Sequence[str]) -> str:
    """sha256 of everything the compiled module depends on (never of the cache location)."""
    h = hashlib.sha256()
    for part in (src.header, src.source, cc_identity, " ".join(flags), cffi.__version__,
                 sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "",
                 " ".join(_python_flags())):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _module_file(directory: Path, module: str) -> Path | None:
    for path in directory.glob(f"{module}*"):
        if path.suffix in (".so", ".pyd", ".dylib"):
            return path
    return None


def _compile(src: CSource, module: str, work: Path, flags: Sequence[str]) -> None:
    """Build module ``module`` in ``work`` (which holds the model's .h and .c): cffi writes
    the wrapper C, the compiler (a subprocess, absolute paths) builds and links both."""
    ffi = cffi.FFI()
    ffi.cdef(_declarations(src))
    wrapper = work / f"{module}.c"
    # cffi's recompile with call_c_compiler=False only writes the wrapper (no chdir, no
    # distutils); ffi.emit_c_code is the same call but prints "generating ..." on stdout.
    recompile(ffi, module, f'#include "{src.header_name}"', c_file=str(wrapper),
              call_c_compiler=False, uses_ffiplatform=False, compiler_verbose=0)
    target = work / f"{module}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    command = [*_compiler_argv(), *flags, f"-I{work}", str(wrapper), str(work / src.source_name),
               *_python_flags(), "-o", str(target)]
    try:
        run = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                             errors="replace")
    except OSError as exc:
        raise SymgenError(f"compiling {src.source_name} failed: {exc}") from None
    if run.returncode != 0 or not target.is_file():
        text = (run.stderr + run.stdout).replace(f"{work}{os.sep}", "")  # a deleted directory
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        errors = [line for line in lines if "error" in line.lower()]
        detail = (errors or lines or [f"{command[0]} exited with code {run.returncode}"])[0]
        raise SymgenError(f"compiling {src.source_name} failed: {detail}")


def _host_tag() -> str:
    """8 hex digits naming this host and PID namespace (containers sharing a hostname and a
    cache each have their own), so that only our own dead builds are judged by their pid."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    return hashlib.sha256(f"{socket.gethostname()}|{namespace}".encode()).hexdigest()[:8]


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (True when it cannot be told)."""
    if os.name != "posix" or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True


def clean_stale_builds(root: Path, max_age: float = STALE_AFTER) -> list[Path]:
    """Remove the ``.build-*`` directories in ``root`` left by killed builds: those whose
    process (named in the directory, same host) is gone, and any older than ``max_age``
    seconds. A live build (its process exists and it is recent) is never touched. Returns
    what was removed."""
    removed = []
    host, now = _host_tag(), time.time()
    for path in root.glob(".build-*"):
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue
        parts = path.name.split("-")  # .build, host, pid, random
        orphan = (len(parts) == 4 and parts[1] == host and parts[2].isdigit()
                  and not _pid_alive(int(parts[2])))
        if orphan or age > max_age:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _cache_error(root: Path, exc: OSError) -> SymgenError:
    where = f" ({exc.filename})" if exc.filename and Path(exc.filename) != root else ""
    return SymgenError(
        f"cannot use the kernel cache {root}: {exc.strerror or exc}{where}; set "
        "SYMGEN_CACHE_DIR to a writable directory"
    )


_KEY_LOCKS: dict[str, threading.Lock] = {}
_KEY_LOCKS_GUARD = threading.Lock()


def _key_lock(key: str) -> threading.Lock:
    """The lock serialising this process's threads that build or load one module."""
    with _KEY_LOCKS_GUARD:
        return _KEY_LOCKS.setdefault(key, threading.Lock())


def _build(src: CSource, module: str, root: Path, final: Path, flags: Sequence[str]) -> Path:
    """Build into a fresh directory in ``root`` and rename it to ``final``."""
    root.mkdir(parents=True, exist_ok=True)
    clean_stale_builds(root)
    work = Path(tempfile.mkdtemp(dir=root, prefix=f".build-{_host_tag()}-{os.getpid()}-"))
    try:
        src.write(work)
        _compile(src, module, work, flags)
        try:
            os.rename(work, final)
        except OSError:  # another process finished first: use its module
            if _module_file(final, module) is None:  # or a damaged entry: replace it
                if not final.exists():
                    raise
                trash = root / f".build-{_host_tag()}-{os.getpid()}-{work.name[-8:]}x"
                os.rename(final, trash)
                shutil.rmtree(trash, ignore_errors=True)
                os.rename(work, final)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    path = _module_file(final, module)
    if path is None:
        raise SymgenError(f"the compiled module {module} is missing from {final}")
    return path


def load_module(src: CSource, flags: Sequence[str] = DEFAULT_FLAGS):
    """The compiled cffi module of ``src`` (built, or taken from the cache)."""
    cc = compiler_command()
    key = build_key(src, compiler_identity(cc), flags)
    module = f"_symgen_{src.prefix}_{key[:12]}"
    root = cache_dir()
    final = root / key[:32]
    with _key_lock(key):
        try:
            path = _module_file(final, module) if final.is_dir() else None
            if path is None:
                path = _build(src, module, root, final, flags)
        except OSError as exc:
            raise _cache_error(root, exc) from None
        spec = importlib.util.spec_from_file_location(module, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except ImportError as exc:
            raise SymgenError(f"cannot load the compiled module {path}: {exc} (delete "
                              f"{final} to rebuild it)") from None
    return mod


class KernelFunction:
    """One compiled kernel: ``f(q, v, ...)`` with numpy arrays, one call or a batch.

    Shapes never guess. Each input has a documented shape ``S`` (``inputs[i].shape``, e.g.
    ``q`` is ``(nq,)``, ``f_ext`` is ``(nbodies, 6)``, ``dt`` is ``(1,)``):

    - one call: every argument has shape ``S``; an argument of more than one dimension may
      also be given flat, ``(size,)``; a size-1 argument (``dt``, ``params`` of a
      1-parameter model) may be a scalar. The result has the output's shape.
    - a batch of ``n``: at least one argument has shape ``(n, *S)`` (exactly one more
      dimension than documented); every such argument must agree on ``n``. The others are
      single-call arguments, used for every entry of the batch; a size-1 argument may also be
      ``(n,)``, one scalar per entry. The result has shape ``(n, *output shape)``; it runs
      as one C loop.

    Anything else (e.g. a 1-D ``params`` of the wrong length) raises ``ValueError`` naming
    the kernel, the argument, the expected and the given shape. Inputs are converted to the
    build's real type; in a float build a finite value beyond the float range raises
    ``ValueError`` (it would become inf), while inf and nan pass through as in C.
    """

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
        batch = _batch_size(self.name, self.inputs, arrays)
        prepared = [self._prepare(spec, a, batch) for spec, a in zip(self.inputs, arrays,
                                                                     strict=True)]
        results = [
            np.empty(spec.shape if batch is None else (batch, *spec.shape), dtype=self.dtype)
            for spec in self.outputs
        ]
        if batch == 0:
            return results[0] if len(results) == 1 else tuple(results)
        ptrs = [self._ffi.from_buffer(self._ctype, a) for a in prepared]
        ptrs += [self._ffi.from_buffer(self._ctype, r, require_writable=True) for r in results]
        if batch is None:
            self._single(*ptrs)
        else:
            self._batch(batch, *ptrs)
        return results[0] if len(results) == 1 else tuple(results)

    def _prepare(self, spec: ArraySpec, a: np.ndarray, batch: int | None) -> np.ndarray:
        """``a`` as a contiguous array of the build's real type: ``(size,)`` for one call,
        ``(batch, size)`` for a batch (a single-call argument repeated)."""
        if batch is None:
            flat = a.reshape(spec.size)
        elif a.ndim == len(spec.shape) + 1:
            flat = a.reshape(batch, spec.size)
        elif spec.size == 1 and a.shape == (batch,):
            flat = a.reshape(batch, 1)
        else:
            flat = np.broadcast_to(a.reshape(1, spec.size), (batch, spec.size))
        if flat.dtype == self.dtype:
            return np.ascontiguousarray(flat)
        with np.errstate(over="raise", invalid="ignore"):
            try:
                return np.ascontiguousarray(flat, dtype=self.dtype)
            except FloatingPointError:
                top = float(np.finfo(self.dtype).max)
                raise ValueError(
                    f"{self.name}: {spec.name} has a value beyond the {self.dtype.__name__} "
                    f"range (|x| > {top:.3g}) of this build"
                ) from None


def _real_array(kernel: str, name: str, value) -> np.ndarray:
    a = np.asarray(value)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{kernel}: {name} must be a real numeric array, got dtype {a.dtype}")
    return a


def _shape_text(shape: tuple[int, ...], batch: str | None = None) -> str:
    items = ([batch] if batch else []) + [str(n) for n in shape]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _batch_size(kernel: str, specs: Sequence[ArraySpec], arrays: Sequence[np.ndarray]
                ) -> int | None:
    """None for one call, else the batch size: see :class:`KernelFunction` for the rule."""
    batch = None
    for spec, a in zip(specs, arrays, strict=True):
        if a.ndim == len(spec.shape) + 1 and a.shape[1:] == spec.shape:
            if batch is not None and a.shape[0] != batch:
                raise ValueError(f"{kernel}: batch sizes differ ({batch} and {a.shape[0]}, "
                                 f"the leading axis of {spec.name})")
            batch = int(a.shape[0])
    for spec, a in zip(specs, arrays, strict=True):
        single = (a.shape == spec.shape or a.shape == (spec.size,)
                  or (spec.size == 1 and a.ndim == 0))
        batched = batch is not None and (
            (a.ndim == len(spec.shape) + 1 and a.shape[1:] == spec.shape)
            or (spec.size == 1 and a.shape == (batch,)))
        if not (single or batched):
            one, many = _shape_text(spec.shape), _shape_text(spec.shape, "n")
            if spec.size == 1:
                expected = (f"be a scalar or have shape {one} for one call, {many} or (n,) "
                            "for a batch")
            else:
                expected = f"have shape {one} for one call or {many} for a batch"
            raise ValueError(f"{kernel}: {spec.name} must {expected} of n, got shape "
                             f"{a.shape}")
    return batch


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
    """Emit, compile (or take from the cache) and wrap the kernels of ``ks``. Safe to call
    from several threads and processes at once (see the module documentation)."""
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



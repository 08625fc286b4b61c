"""Compile generated C with cffi (API mode), cache the module, and call it from numpy
(docs/architecture.md).

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

The same shared library holds a second extension module, ``<module>_fast``
(:mod:`symgen.backends.c99.fastcall`, numpy's C API): the single-call fast path. Every
kernel becomes a :class:`KernelFunction` (:mod:`symgen.build.wrappers`) taking numpy arrays:
one argument set, or a batch with a leading axis that runs as one C loop (the ``*_batch`` C
function).
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
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import cffi
import numpy as np
from cffi.recompiler import recompile

from symgen.backends.c99.emit import CSource, emit_c
from symgen.backends.c99.fastcall import KEY_MODULE, fastcall_source
from symgen.backends.simd.target import Target
from symgen.build.progress import TICK, BuildProgress
from symgen.build.wrappers import DTYPES, CompiledKernels, KernelFunction
from symgen.errors import SymgenError
from symgen.generate import KernelSet

#: Flags of the cffi build (the generated C is also checked with the strict warning set,
#: which cffi's own wrapper code would not pass).
DEFAULT_FLAGS = ("-O2", "-std=c99")
#: A ``.build-*`` directory older than this (seconds) is a dead build and is removed.
STALE_AFTER = 3600.0


@dataclass(frozen=True)
class VectorBuild:
    """The SIMD batch backend's part of a build: its source (:func:`symgen.backends.emit_simd`)
    and the target it is compiled for (:func:`symgen.backends.simd_target`)."""

    source: CSource
    target: Target

    def key_parts(self) -> list[str]:
        return [self.source.header, self.source.source, self.target.identity]


def vector_build(ks: KernelSet, src: CSource, real: str, target: str) -> VectorBuild | None:
    """The SIMD batch source of ``ks`` next to its scalar source ``src``, for ``target``
    (``"native"``, ``"portable"`` or a ``-march`` name such as ``"x86-64-v3"``; ``"auto"``:
    native when the compiler can build for this CPU, else None: the scalar batch loop)."""
    from symgen.backends.simd.emit import emit_simd
    from symgen.backends.simd.target import simd_target

    if not isinstance(target, str):
        raise SymgenError(f"vectorize must be a target name ('auto', 'native', 'portable', a "
                          f"-march name) or None, got {target!r}")
    compiler_identity(compiler_command())  # a missing compiler: the one-line error first
    try:
        chosen = simd_target("native" if target == "auto" else target)
    except (ValueError, SymgenError) as exc:
        if target == "auto":
            return None
        raise SymgenError(f"vectorize={target!r}: {exc}") from None
    return VectorBuild(emit_simd(ks, prefix=src.prefix, real=real, scalar=src,
                                 units=_unit_count()), chosen)


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
    """The typedef and prototypes for ``ffi.cdef``, from the emitted structure
    (:meth:`symgen.backends.c99.emit.CSource.declarations`)."""
    return src.declarations()


def _python_compile_flags() -> list[str]:
    """Position-independent code and the Python headers (what distutils' ``build_ext`` would
    compile an extension module's objects with)."""
    paths = sysconfig.get_paths()
    includes = dict.fromkeys(p for p in (paths.get("include"), paths.get("platinclude")) if p)
    flags = shlex.split(sysconfig.get_config_var("CCSHARED") or "")
    return flags + [f"-I{p}" for p in includes]


def _python_link_flags() -> list[str]:
    """The link step of an extension module on this platform."""
    if sys.platform == "darwin":
        return ["-bundle", "-undefined", "dynamic_lookup"]
    if os.name == "nt":  # MinGW gcc; links the Python import library
        v = sys.version_info
        return ["-shared", f"-L{Path(sys.base_prefix) / 'libs'}", f"-lpython{v.major}{v.minor}"]
    return ["-shared"]


def _python_flags() -> list[str]:
    """Every flag of an extension module's build: :func:`_python_compile_flags`, then
    :func:`_python_link_flags`."""
    return _python_compile_flags() + _python_link_flags()


def build_jobs() -> int:
    """How many compilers a build runs at once: ``$SYMGEN_BUILD_JOBS``, else the CPUs this
    process may use."""
    text = os.environ.get("SYMGEN_BUILD_JOBS", "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise SymgenError(f"SYMGEN_BUILD_JOBS must be a positive integer, got {text!r}")
        return int(text)
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return max(os.cpu_count() or 1, 1)


#: Translation units a large source is split into even by a serial build: its progress
#: (:mod:`symgen.build.progress`) counts them, at no measurable cost (3.7 s of compiler time
#: for Panda's dynamics and inverse-dynamics derivatives in 4 units as in 1).
MIN_UNITS = 4


def _unit_count() -> int:
    """Translation units to split a source into: two per compiler running at once (the
    largest start first, the small ones fill the gaps; one for a serial build), at least
    :data:`MIN_UNITS`; a small source stays whole (:func:`symgen.backends.c99.emit.partition`)."""
    jobs = build_jobs()
    return max(2 * jobs if jobs > 1 else 1, MIN_UNITS)


def build_key(src: CSource, cc_identity: str, flags: Sequence[str],
              extra: Sequence[str] = ()) -> str:
    """sha256 of everything the compiled module depends on (never of the cache location);
    ``extra``: more of it (the fast-call module's C and numpy's version)."""
    h = hashlib.sha256()
    for part in (src.header, src.source, cc_identity, " ".join(flags), cffi.__version__,
                 sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "",
                 " ".join(_python_flags()), *extra):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _module_file(directory: Path, module: str) -> Path | None:
    for path in directory.glob(f"{module}*"):
        if path.suffix in (".so", ".pyd", ".dylib"):
            return path
    return None


def _compile(src: CSource, module: str, work: Path, flags: Sequence[str],
             fast: str | None = None, vector: VectorBuild | None = None,
             progress: bool | None = False) -> None:
    """Build module ``module`` in ``work`` (which holds the model's .h and .c): cffi writes
    the wrapper C; the compiler (subprocesses, absolute paths, :func:`build_jobs` at once)
    compiles the model's functions (in its translation units, :attr:`CSource.units`), the wrapper,
    ``fast`` (the C of the fast-call module, if any) and the SIMD batch source (``vector``,
    with its target's flags) to objects, and links them into one library. ``progress``: as
    in :func:`compile_kernels`."""
    ffi = cffi.FFI()
    declarations = _declarations(src)
    includes = f'#include "{src.header_name}"'
    cc, pic = _compiler_argv(), _python_compile_flags()
    jobs: list[tuple[list[str], str, Path]] = []
    sizes: list[int] = []  # of each job's source: the largest start first
    libraries: list[str] = []

    def compile_object(source: Path, what: str, extra: Sequence[str] = (),
                       own_flags: Sequence[str] = flags) -> None:
        obj = source.with_suffix(".o")
        jobs.append(([*cc, *own_flags, *pic, f"-I{work}", *extra, "-c", str(source),
                      "-o", str(obj)], what, obj))
        sizes.append(source.stat().st_size)

    if vector is not None:
        from symgen.backends.simd.emit import simd_declarations

        vector.source.write(work)
        declarations += "\n" + simd_declarations(vector.source)
        includes += f'\n#include "{vector.source.header_name}"'
        for j, text in enumerate(vector.source.units or [vector.source.source]):
            unit = work / f"{module}_simd_part{j}.c"
            unit.write_text(text, encoding="ascii")
            compile_object(unit, vector.source.source_name,
                           own_flags=_vector_flags(flags, vector.target))
        libraries = [f"-l{lib}" for lib in vector.target.libraries]
    for j, text in enumerate(src.units or [src.source]):
        unit = work / f"{module}_part{j}.c"
        unit.write_text(text, encoding="ascii")
        compile_object(unit, src.source_name)
    ffi.cdef(declarations)
    wrapper = work / f"{module}.c"
    # cffi's recompile with call_c_compiler=False only writes the wrapper (no chdir, no
    # distutils); ffi.emit_c_code is the same call but prints "generating ..." on stdout.
    recompile(ffi, module, includes, c_file=str(wrapper),
              call_c_compiler=False, uses_ffiplatform=False, compiler_verbose=0)
    compile_object(wrapper, src.source_name)
    if fast is not None:
        fast_c = work / f"{module}_fast.c"
        fast_c.write_text(fast, encoding="ascii")
        compile_object(fast_c, src.source_name, [f"-isystem{np.get_include()}"])
    target = work / f"{module}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    link = ([*cc, *flags, *(str(obj) for _, _, obj in jobs), *pic, *_python_link_flags(),
             *libraries, "-o", str(target)], src.source_name, target)
    _compile_and_link([jobs[i] for i in sorted(range(len(jobs)), key=lambda i: -sizes[i])],
                      link, work, progress)


def _compile_and_link(jobs: Sequence[tuple[list[str], str, Path]],
                      link: tuple[list[str], str, Path], work: Path,
                      progress: bool | None) -> None:
    """Run the compiler commands ``jobs`` (:func:`_run_compilers`), then ``link``, with
    their :class:`~symgen.build.progress.BuildProgress` (``progress``: as in
    :func:`compile_kernels`)."""
    report = BuildProgress(len(jobs), progress)
    try:
        _run_compilers(jobs, work, report)
        report.update(len(jobs), linking=True)
        command, what, product = link
        _run_compiler(command, work, what, product)
    except BaseException:
        report.finish(ok=False)
        raise
    report.finish()


def _run_compilers(jobs: Sequence[tuple[list[str], str, Path]], work: Path,
                   report: BuildProgress) -> None:
    """Run the compiler commands ``jobs`` ((command, what, product)), :func:`build_jobs` at
    a time, telling ``report`` how many are done every :data:`~symgen.build.progress.TICK`
    seconds; the first failure (in job order) raises its :class:`SymgenError`."""
    with ThreadPoolExecutor(max_workers=build_jobs()) as pool:
        futures = [pool.submit(_run_compiler, command, work, what, product)
                   for command, what, product in jobs]
        pending = set(futures)
        while pending:
            report.update(len(futures) - len(pending))
            pending = wait(pending, timeout=TICK, return_when=FIRST_COMPLETED).not_done
        report.update(len(futures))
    for future in futures:
        future.result()


def _vector_flags(flags: Sequence[str], target: Target) -> list[str]:
    """The SIMD object's flags: the build's own (optimisation level, standard, defines),
    then the target's except its default optimisation level and standard, which the build's
    flags set."""
    from symgen.backends.simd.target import BASE_FLAGS

    defaults = {f for f in BASE_FLAGS if f.startswith(("-O", "-std="))}
    return [*flags, *(f for f in target.flags if f not in defaults)]


def _run_compiler(command: list[str], work: Path, what: str, product: Path) -> None:
    """Run one compiler command; a failure raises :class:`SymgenError` with the first
    error line (paths inside the build directory shortened)."""
    try:
        run = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                             errors="replace")
    except OSError as exc:
        raise SymgenError(f"compiling {what} failed: {exc}") from None
    if run.returncode != 0 or not product.is_file():
        text = (run.stderr + run.stdout).replace(f"{work}{os.sep}", "")  # a deleted directory
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        errors = [line for line in lines if "error" in line.lower()]
        detail = (errors or lines or [f"{command[0]} exited with code {run.returncode}"])[0]
        raise SymgenError(f"compiling {what} failed: {detail}")


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


def _build(src: CSource, module: str, root: Path, final: Path, flags: Sequence[str],
           fast: str | None = None, vector: VectorBuild | None = None,
           progress: bool | None = False) -> Path:
    """Build into a fresh directory in ``root`` and rename it to ``final`` (``progress``: as
    in :func:`compile_kernels`)."""
    root.mkdir(parents=True, exist_ok=True)
    clean_stale_builds(root)
    work = Path(tempfile.mkdtemp(dir=root, prefix=f".build-{_host_tag()}-{os.getpid()}-"))
    try:
        src.write(work)
        _compile(src, module, work, flags, fast, vector, progress)
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


def _import(name: str, path: Path, final: Path):
    """Extension module ``name`` (its ``PyInit_<name>``) of the shared library ``path``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except ImportError as exc:
        raise SymgenError(f"cannot load the compiled module {path}: {exc} (delete "
                          f"{final} to rebuild it)") from None
    return mod


def load_modules(src: CSource, flags: Sequence[str] = DEFAULT_FLAGS, real: str | None = None,
                 vector: VectorBuild | None = None, progress: bool | None = False):
    """The compiled cffi module of ``src`` (built, or taken from the cache), and, when
    ``real`` (the build's real type) is given and ``src`` lists its functions, the
    fast-call module of :mod:`symgen.backends.c99.fastcall` from the same library (else None). With
    ``vector``, the module also holds the SIMD batch functions. ``progress``: as in
    :func:`compile_kernels`."""
    fast = real if src.functions else None  # the real type of the fast-call module's C
    extra = [fastcall_source(src, fast, KEY_MODULE), np.__version__] if fast else []
    if vector is not None:
        extra += vector.key_parts()
    cc = compiler_command()
    key = build_key(src, compiler_identity(cc), flags, extra)
    module = f"_symgen_{src.prefix}_{key[:12]}"
    root = cache_dir()
    final = root / key[:32]
    with _key_lock(key):
        try:
            path = _module_file(final, module) if final.is_dir() else None
            if path is None:
                fast_c = fastcall_source(src, fast, f"{module}_fast") if fast else None
                path = _build(src, module, root, final, flags, fast_c, vector, progress)
        except OSError as exc:
            raise _cache_error(root, exc) from None
        mod = _import(module, path, final)
        fast_mod = _import(f"{module}_fast", path, final) if fast else None
    return mod, fast_mod


def load_module(src: CSource, flags: Sequence[str] = DEFAULT_FLAGS):
    """The compiled cffi module of ``src`` (built, or taken from the cache)."""
    return load_modules(src, flags)[0]


def compile_kernels(ks: KernelSet, real: str = "double", prefix: str | None = None,
                    flags: Sequence[str] = DEFAULT_FLAGS, vectorize: str | None = "auto",
                    progress: bool | None = None) -> CompiledKernels:
    """Emit, compile (or take from the cache) and wrap the kernels of ``ks``. Safe to call
    from several threads and processes at once (see the module documentation).

    ``vectorize`` is the CPU the SIMD batch functions are built for (a batch call from numpy
    then computes several states per instruction, :mod:`symgen.backends.simd.emit`):
    ``"auto"`` (the default: this machine's CPU when the compiler can target it, else the
    scalar loop), ``"native"`` (this machine, an error when the compiler cannot target it),
    ``"portable"`` (the compiler's baseline for the architecture) or a ``-march`` name such
    as ``"x86-64-v3"``; None: batches run the scalar loop. A SIMD batch agrees with single
    calls to within a few ulp of sin and cos (glibc's libmvec), else bit for bit.

    ``progress``: lines on stderr while the module compiles (the C files compiled out of the
    total, the elapsed time; one updating line on a terminal): True always, False never,
    None (the default) once the build has taken a few seconds
    (:data:`symgen.build.progress.PROGRESS_AFTER`). A module taken from the cache prints
    nothing."""
    src = emit_c(ks, prefix=prefix, real=real, units=_unit_count())
    vector = None if vectorize is None else vector_build(ks, src, real, vectorize)
    module, fast = load_modules(src, flags, real, vector, progress)
    return CompiledKernels(ks, src, module, real, fast,
                           None if vector is None else vector.source)


__all__ = [
    "DEFAULT_FLAGS",
    "CompiledKernels",
    "DTYPES",
    "KernelFunction",
    "build_jobs",
    "cache_dir",
    "compile_kernels",
    "compiler_command",
    "load_module",
    "load_modules",
    "vector_build",
]



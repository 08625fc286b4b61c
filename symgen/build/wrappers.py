"""numpy-callable compiled kernels: :class:`KernelFunction` (one kernel) and
:class:`CompiledKernels` (a model's kernels), on top of the modules of :mod:`symgen.build.compiler`.

A call whose arguments are already in the kernel's layout (float arrays of the build's type,
C-contiguous, of the single-call shape) takes the fast path of
:mod:`symgen.backends.c99.fastcall`: the kernel is called from C with no conversion and no
copy. Every other call takes the general path below (batches, broadcasting, scalars,
conversion, the errors), with the same results bit for bit.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Sequence

import numpy as np

from symgen.backends.real import REAL_TYPES, real_type
from symgen.errors import SymgenError
from symgen.ir.program import ArraySpec

#: The numpy scalar type of each real type (:mod:`symgen.backends.real`).
DTYPES = {name: np.dtype(t.dtype).type for name, t in REAL_TYPES.items()}


class KernelFunction:
    """One compiled kernel: ``f(q, v, ..., out=None)`` with numpy arrays, one call or a batch.

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
    the kernel, the argument, the expected and the given shape. An input of ``empty`` (one
    the kernel declares but that has no element for this model, such as ``tau`` of a
    natural-coordinate mechanism without a 1-DOF joint: :attr:`KernelSet.empty_inputs`)
    keeps its place among the arguments, defaults to an empty array and, when given, must be
    empty (``(0,)``, or ``(n, 0)`` in a batch); it is not passed to C. Inputs are converted to the
    build's real type; in a float build a finite value beyond the float range raises
    ``ValueError`` (it would become inf), while inf and nan pass through as in C.

    ``out`` (optional; a tuple for a kernel with several outputs) receives the result: a
    writable, aligned, C-contiguous array of the build's real type and of the result's exact
    shape; it is returned. An input sharing memory with ``out`` is read before anything is
    written (as if copied).

    Single calls with C-contiguous arrays of the build's type (and Python floats for size-1
    arguments of a double build) call the kernel straight from C
    (:mod:`symgen.backends.c99.fastcall`), unless an empty input comes before an argument of
    the C function (positional arguments would then be read differently).
    """

    #: Calls go to the fast function of the compiled module (``_fast``), which hands what it
    #: does not take to :meth:`_general`; a property, so that ``f(...)`` reaches C code
    #: without a Python frame in between.
    __call__ = property(operator.attrgetter("_fast"))

    def __init__(self, name: str, inputs: Sequence[ArraySpec], outputs: Sequence[ArraySpec],
                 ffi, lib, c_name: str, real: str, defaults: dict[str, np.ndarray],
                 fast=None, batch_name: str | None = None,
                 empty: Sequence[tuple[int, ArraySpec]] = ()) -> None:
        self.name = name
        #: The arguments of the C function (the program's inputs), and every argument of a
        #: call: those and the ``empty`` inputs at their positions.
        self._c_inputs = tuple(inputs)
        full: list[ArraySpec] = list(inputs)
        for position, spec in sorted(empty, key=lambda e: e[0]):
            full.insert(position, spec)
        self.inputs = tuple(full)
        self._passed = tuple(all(s.name != e.name for _, e in empty) for s in full)
        self.outputs = tuple(outputs)
        self._ffi, self._single = ffi, getattr(lib, c_name)
        #: The C function of a batch: the SIMD batch when built (``batch_name``), else the
        #: scalar loop ``<c_name>_batch``.
        self._batch = getattr(lib, batch_name or c_name + "_batch")
        self._ctype = f"{real_type(real).name}[]"
        self.dtype = DTYPES[real_type(real).name]
        self._defaults = {**defaults, **{spec.name: np.zeros(0) for _, spec in empty}}
        self._takes_out = all(s.name != "out" for s in self.inputs)
        returns = ", ".join(s.name for s in self.outputs)
        self.__doc__ = f"{name}({', '.join(s.name for s in self.inputs)}) -> {returns}"
        self._fast = self._general
        trailing = all(position >= len(self._c_inputs) for position, _ in empty)
        if fast is not None and self._c_inputs and trailing:  # (no inputs: no fast function)
            self._fast = fast.bind(name, self._general, self._fast_defaults())

    def __repr__(self) -> str:
        return f"<compiled kernel {self.__doc__}>"

    @property
    def __signature__(self) -> inspect.Signature:
        """``(q, v, ..., *, out=None)`` (``__call__`` is a property: ``inspect`` needs this)."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        parameters = [inspect.Parameter(s.name, kind, **(
            {"default": self._defaults[s.name]} if s.name in self._defaults else {}))
            for s in self.inputs]
        if self._takes_out:
            parameters.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY,
                                                default=None))
        return inspect.Signature(parameters)

    def _fast_defaults(self) -> tuple[np.ndarray, ...]:
        """The defaults of the trailing arguments, read-only in the build's type (none when
        one cannot be converted: the general path then reports it)."""
        trailing: list[np.ndarray] = []
        for spec in reversed(self._c_inputs):
            if spec.name not in self._defaults:
                break
            with np.errstate(over="raise", invalid="ignore"):
                try:
                    value = np.array(self._defaults[spec.name], dtype=self.dtype, order="C")
                except FloatingPointError:
                    return ()
            if value.shape not in (spec.shape, (spec.size,)):
                return ()
            value.setflags(write=False)
            trailing.insert(0, value)
        return tuple(trailing)

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

    def _general(self, *args, **kwargs):
        """Every call the fast path does not take: the output array, or a tuple of arrays
        for a kernel with several outputs."""
        out = kwargs.pop("out", None) if self._takes_out else None
        arrays = self._arguments(args, kwargs)
        batch = _batch_size(self.name, self.inputs, arrays)
        prepared = [self._prepare(spec, a, batch)
                    for spec, a, passed in zip(self.inputs, arrays, self._passed, strict=True)
                    if passed]
        results = self._results(out, batch)
        if out is not None:  # an input overlapping an output is read first
            prepared = [p.copy() if any(np.may_share_memory(p, r) for r in results) else p
                        for p in prepared]
        if batch == 0:
            return results[0] if len(results) == 1 else tuple(results)
        ptrs = [self._ffi.from_buffer(self._ctype, a) for a in prepared]
        ptrs += [self._ffi.from_buffer(self._ctype, r, require_writable=True) for r in results]
        if batch is None:
            self._single(*ptrs)
        else:
            self._batch(batch, *ptrs)
        return results[0] if len(results) == 1 else tuple(results)

    def _results(self, out, batch: int | None) -> list[np.ndarray]:
        """The output arrays: new ones, or those of ``out`` once checked."""
        shapes = [s.shape if batch is None else (batch, *s.shape) for s in self.outputs]
        if out is None:
            return [np.empty(shape, dtype=self.dtype) for shape in shapes]
        if len(self.outputs) == 1:
            given = [out]
        elif isinstance(out, tuple | list) and len(out) == len(self.outputs):
            given = list(out)
        else:
            names = ", ".join(s.name for s in self.outputs)
            raise TypeError(f"{self.name}: out must be a tuple of {len(self.outputs)} arrays "
                            f"({names}), got {type(out).__name__}")
        for spec, shape, array in zip(self.outputs, shapes, given, strict=True):
            ok = (isinstance(array, np.ndarray) and array.dtype == self.dtype
                  and array.shape == shape and array.flags.c_contiguous
                  and array.flags.aligned and array.flags.writeable)
            if not ok:
                what = (f"{array.dtype} array of shape {array.shape}"
                        + ("" if array.flags.c_contiguous else ", not C-contiguous")
                        + ("" if array.flags.writeable else ", read-only")
                        if isinstance(array, np.ndarray) else type(array).__name__)
                raise ValueError(f"{self.name}: out ({spec.name}) must be a writable "
                                 f"C-contiguous {np.dtype(self.dtype)} array of shape "
                                 f"{shape}, got {what}")
        for i, a in enumerate(given):
            if any(np.may_share_memory(a, b) for b in given[:i]):
                raise ValueError(f"{self.name}: the arrays of out share memory")
        return given

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
            if spec.size == 0:
                expected = (f"be empty (none for this model): shape {one} for one call, "
                            f"{many} for a batch")
            elif spec.size == 1:
                expected = (f"be a scalar or have shape {one} for one call, {many} or (n,) "
                            "for a batch")
            else:
                expected = f"have shape {one} for one call or {many} for a batch"
            raise ValueError(f"{kernel}: {spec.name} must {expected} of n, got shape "
                             f"{a.shape}")
    return batch


class CompiledKernels:
    """The compiled kernels of one model: ``lib.mass_matrix(q)``, ``lib["..."]``.

    ``module`` is the cffi module; ``fast`` (optional) the fast-call module of the same
    kernels (:mod:`symgen.backends.c99.fastcall`)."""

    def __init__(self, ks, src, module, real: str, fast=None, vector_source=None) -> None:
        self.kernel_set = ks
        self.source = src
        self.vector_source = vector_source
        self.real = real
        #: States per SIMD batch iteration (1: batches run the scalar loop).
        self.simd_width = (1 if vector_source is None
                           else int(getattr(module.lib, f"{vector_source.prefix}_simd_width")()))
        vector_batch = {} if vector_source is None else {
            f.program: f.batch_name for f in vector_source.functions}
        # params default to the declared values (KernelSet.input_defaults)
        defaults = {name: np.array(values, dtype=float)
                    for name, values in ks.input_defaults.items()}
        self.functions: dict[str, KernelFunction] = {}
        for name, program in ks.programs.items():
            self.functions[name] = KernelFunction(
                name, program.inputs, program.output_specs, module.ffi, module.lib,
                f"{src.prefix}_{name}", real, defaults, fast, vector_batch.get(name),
                ks.empty_inputs.get(name, ()),
            )
        for name, function in self.functions.items():  # plain attributes: a fast look-up
            if not hasattr(type(self), name) and name not in self.__dict__:
                self.__dict__[name] = function

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


__all__ = ["DTYPES", "CompiledKernels", "KernelFunction"]

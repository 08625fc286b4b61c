"""The sine and cosine of generated C: one argument reduction per angle for both.

A kernel's ``sin(x)`` and ``cos(x)`` print as ``symgen_sin(x)`` and ``symgen_cos(x)``
(``symgen_sinf`` in ``float``: :func:`function_name`), two ``static inline`` wrappers of one
``symgen_sincos`` defined in the generated source itself (:func:`source`; no library, no
state, no allocation). The compiler inlines both wrappers (forced with GCC and Clang) and
merges their identical reductions, so an angle whose sine and cosine
the kernel needs (every revolute joint's) is reduced once, and the polynomials run inline,
overlapping the recursion around them, where a libm call could not.

The method (the C text below reads like it):

1. Cody & Waite additive reduction (W. J. Cody and W. Waite, *Software Manual for the
   Elementary Functions*, Prentice-Hall 1980, ch. 8): the quadrant ``n`` is ``x·2/π`` rounded
   to the nearest integer (adding and subtracting 1.5·2^52, resp. 1.5·2^23 for ``float``,
   which rounds in the current rounding mode without a library call), and
   ``r = x − n·(π/2)`` is formed against π/2 split into three constants: the leading two with
   so few significant bits that ``n·P1`` and ``n·P2`` are exact for ``|x|`` below the type's
   :attr:`Trig.limit`, so the only rounding is the final subtraction's.
2. On ``|r| ≤ π/4``, the minimax polynomials of fdlibm's ``__kernel_sin``/``__kernel_cos``
   (Sun Microsystems 1993; K. C. Ng) for ``double`` and of Cephes' ``sinf``/``cosf``
   (S. L. Moshier, *Methods and Programs for Mathematical Functions*, 1989) for ``float``.
3. The quadrant ``n mod 4`` swaps the two and flips signs: (sin, cos)(x) =
   (s, c), (c, −s), (−s, −c), (−c, s) for ``n ≡ 0, 1, 2, 3``; the swap is a bit-mask
   select and the flips sign-bit exclusive-ors: no branch, since the quadrant of a random
   angle is unpredictable (a branch on it mispredicts half the time).

Two angles at once: ``symgen_sincos2`` runs the same operations in the two lanes of a
GCC/Clang vector (:data:`VECTOR_CONDITION`: SSE2, AArch64), so its results are
``symgen_sincos``'s bit for bit in half the arithmetic; the quadrant's swap and signs act on
the vector's bits, and the range check comes after the polynomials (no branch between them
and their uses), an angle out of range going to libm out of line. The C printer pairs a
program's angles (:func:`angle_pairs`) unless the program is ordered depth-first.

Accuracy, measured against glibc's correctly-rounded-in-practice ``sin``/``cos`` over 2·10^7
arguments in ±100 (a third of them in ±0.1): ``double`` within 1.2e-16 absolute (2 ulp),
``float`` within 6.8e-8 (about 1.1 ulp of 1; glibc's ``sinf`` is within 3.3e-8). Both are
exactly odd and even (sin(−x) = −sin(x) bit for bit), except that sin(−0) is +0. Beyond
:attr:`Trig.limit`, for NaN and infinities, and when the compiler is told it may reassociate
(``__FAST_MATH__``, e.g. ``-Ofast``: the reduction's order is its accuracy), the wrappers call
libm. ``tests/unit/test_c_trig.py`` checks these bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symgen.backends.real import RealType, real_type
from symgen.ir.expr import Call, Expr, Sym

#: How a kernel's trigonometric calls are spelled in C (with the real type's math suffix:
#: :func:`function_name`).
FUNCTIONS = {"sin": "symgen_sin", "cos": "symgen_cos"}


@dataclass(frozen=True)
class Trig:
    """The constants of one real type's ``symgen_sincos``.

    - ``limit``: the reduction is exact (``n·P1``, ``n·P2`` representable) for ``|x|`` below
      it; libm beyond;
    - ``magic``: 1.5·2^(p−1), adding and subtracting it rounds to an integer;
    - ``pio2``: π/2 as P1 + P2 + P3 (Cody & Waite);
    - ``sin_coefficients``: S1… of ``sin r = r + r·z·(S1 + z·S2 + …)``, ``z = r²``;
    - ``cos_coefficients``: C1… of ``cos r = 1 − z/2 + z²·(C1 + z·C2 + …)`` (``1 − z/2``
      summed with its rounding error, as fdlibm does);
    - ``bits``: the unsigned integer of the type's width (the quadrant ``n`` converts through
      ``int32_t``, a single instruction on every target: ``|n|`` < 2^31 below ``limit``);
    - ``sign_shift``: the position of the sign bit in ``bits``.
    """

    limit: str
    magic: str
    pio2: tuple[str, str, str]
    sin_coefficients: tuple[str, ...]
    cos_coefficients: tuple[str, ...]
    bits: str
    sign_shift: int


#: fdlibm's constants for ``double`` (``e_rem_pio2.c``: pio2_1, pio2_2, pio2_2t, 33 + 33 + 53
#: bits; ``k_sin.c`` S1–S6, ``k_cos.c`` C1–C6) and Cephes' for ``float`` (``sinf.c``: DP1–DP3
#: doubled, 8 + 13 + 24 bits; its sine and cosine coefficients).
TRIG = {
    "double": Trig(
        limit="1.0e5", magic="0x1.8p52",
        pio2=("1.57079632673412561417e+00", "6.07710050630396597660e-11",
              "2.02226624879595063154e-21"),
        sin_coefficients=("-1.66666666666666324348e-01", "8.33333333332248946124e-03",
                          "-1.98412698298579493134e-04", "2.75573137070700676789e-06",
                          "-2.50507602534068634195e-08", "1.58969099521155010221e-10"),
        cos_coefficients=("4.16666666666666019037e-02", "-1.38888888888741095749e-03",
                          "2.48015872894767294178e-05", "-2.75573143513906633035e-07",
                          "2.08757232129817482790e-09", "-1.13596475577881948265e-11"),
        bits="uint64_t", sign_shift=63),
    "float": Trig(
        limit="2048.0f", magic="0x1.8p23f",
        pio2=("1.5703125f", "4.837512969970703125e-4f", "7.54978995489188216e-8f"),
        sin_coefficients=("-1.6666654611e-1f", "8.3321608736e-3f", "-1.9515295891e-4f"),
        cos_coefficients=("4.166664568298827e-2f", "-1.388731625493765e-3f",
                          "2.443315711809948e-5f"),
        bits="uint32_t", sign_shift=31),
}


def _polynomial(coefficients: tuple[str, ...], z: str, w: str) -> str:
    """``c0 + c1·z + c2·z² + …`` in Estrin's form with ``w = z²``: the pairs ``c0 + z·c1``,
    ``c2 + z·c3``, … are independent, then Horner in ``w`` over them (a shorter dependency
    chain than Horner in ``z``)."""
    pairs = [f"({a} + {z} * {b})" for a, b in zip(coefficients[::2], coefficients[1::2],
                                                     strict=False)]
    if len(coefficients) % 2:
        pairs.append(coefficients[-1])
    text = pairs[-1]
    for pair in reversed(pairs[:-1]):
        text = f"{pair} + {w} * ({text})"
    return text


def function_name(name: str, real: str | RealType) -> str:
    """The C name of ``sin`` or ``cos`` (:data:`FUNCTIONS`) for the real type ``real``:
    ``symgen_sin``, or ``symgen_sinf`` for ``float``."""
    return FUNCTIONS[name] + real_type(real).math_suffix


def _reduction_and_polynomials(t: Trig, T: str, f: str, indent: str) -> str:
    """The statements computing the quadrant ``n`` and ``sin_r``, ``cos_r`` of ``x`` in type
    ``T`` (a real type, or a vector of it: the same text serves both), steps 1-2 of the
    module documentation, each line indented by ``indent``."""
    one, half = ("1.0f", "0.5f") if f else ("1.0", "0.5")
    p1, p2, p3 = t.pio2
    two_over_pi = "0.636619772f" if f else "6.36619772367581382433e-01"
    text = f"""\
const {T} shifted = x * {two_over_pi} + {t.magic}, n = shifted - {t.magic};
const {T} r = ((x - n * {p1}) - n * {p2}) - n * {p3};
const {T} z = r * r, w = z * z;
const {T} sin_r = r + r * z * ({_polynomial(t.sin_coefficients, "z", "w")});
const {T} half_z = {half} * z, one_half_z = {one} - half_z;
const {T} cos_r = one_half_z + ((({one} - one_half_z) - half_z)
                       + z * z * ({_polynomial(t.cos_coefficients, "z", "w")}));
"""
    return "".join(indent + line + "\n" for line in text.splitlines())


#: The targets whose compilers get the two-lane ``symgen_sincos2`` (GCC and Clang vector
#: extensions on 16-byte vector registers: SSE2, AArch64's Advanced SIMD); elsewhere (the
#: Cortex-M cores, other compilers, ``-ffast-math``) it is two scalar calls.
VECTOR_CONDITION = ("defined(__GNUC__) && !defined(__FAST_MATH__) "
                    "&& (defined(__SSE2__) || defined(__aarch64__))")


@dataclass(frozen=True)
class Angle:
    """An angle whose sine and cosine a program assigns: its argument, the temporaries
    holding them (None: not assigned), the position from which the argument is defined (0
    for an input) and the first position that reads the sine or cosine."""

    argument: Expr
    sin: Sym | None
    cos: Sym | None
    ready: int
    needed: int


@dataclass(frozen=True)
class AnglePair:
    """Two angles evaluated by one ``symgen_sincos2`` before the assignment at ``position``."""

    position: int
    angles: tuple[Angle, Angle]


def angle_pairs(assignments: Sequence[tuple[Sym, Expr]]) -> list[AnglePair]:
    """Angles of ``assignments`` to evaluate two at a time by ``symgen_sincos2``, each pair
    as early as its arguments allow (a compiler does not move the code that reads them above
    the branch of ``symgen_sincos2``: the earlier the pairs, the more the polynomials overlap).
    In the order of their arguments' definitions, each angle pairs with the next if both
    arguments are defined before either's sine or cosine is read; sines and cosines inside
    larger expressions, and repeats, keep their scalar calls."""
    defined = {sym: i for i, (sym, _) in enumerate(assignments)}
    found: dict[Expr, list] = {}
    trig_of: dict[Sym, Expr] = {}
    for sym, e in assignments:
        if isinstance(e, Call) and e.fn in FUNCTIONS:
            angle = found.setdefault(e.args[0], [None, None])
            slot = 0 if e.fn == "sin" else 1
            if angle[slot] is None:
                angle[slot] = sym
                trig_of[sym] = e.args[0]
    needed = dict.fromkeys(found, len(assignments))
    for i, (_, e) in enumerate(assignments):
        for x in e.symbols():
            argument = trig_of.get(x)
            if argument is not None:
                needed[argument] = min(needed[argument], i)
    angles = sorted((Angle(argument, sin, cos,
                           1 + max((defined.get(x, -1) for x in argument.symbols()),
                                   default=-1), needed[argument])
                     for argument, (sin, cos) in found.items()), key=lambda a: a.ready)
    pairs, waiting = [], None
    for angle in angles:
        if waiting is not None and angle.ready <= min(angle.needed, waiting.needed):
            pairs.append(AnglePair(angle.ready, (waiting, angle)))
            waiting = None
        else:
            waiting = angle
    return pairs


def pair_function_name(real: str | RealType) -> str:
    """The C name of the two-angle sine and cosine for the real type ``real``:
    ``symgen_sincos2``, or ``symgen_sincos2f`` for ``float``."""
    return "symgen_sincos2" + real_type(real).math_suffix


def source(real: str | RealType) -> str:
    """The C definitions of ``symgen_sincos``, ``symgen_sin``, ``symgen_cos`` and
    ``symgen_sincos2`` (with the math suffix of the real type ``real``: ``symgen_sincosf``)
    (module docstring: the method and its accuracy). Guarded, so that sources of several
    kernel sets can be compiled as one translation unit; forced inline where the compiler
    allows it (at ``-Os`` GCC would otherwise call ``symgen_sin`` and ``symgen_cos`` apart,
    each reducing the angle)."""
    rt = real_type(real)
    t, f = TRIG[rt.name], rt.math_suffix
    T = rt.name
    sign = t.sign_shift
    inline = "static inline SYMGEN_ALWAYS_INLINE"
    vector = f"symgen_vector2{f}"
    return f"""\
#ifndef SYMGEN_SINCOS_{T.upper()}
#define SYMGEN_SINCOS_{T.upper()}
#include <stdint.h>
#include <string.h>
#ifndef SYMGEN_ALWAYS_INLINE
#if defined(__GNUC__)
#define SYMGEN_ALWAYS_INLINE __attribute__((always_inline))
#else
#define SYMGEN_ALWAYS_INLINE
#endif
#endif

/* `b` where `take_b` is all ones, else `a`, its sign bit then exclusive-or'ed with `sign`:
 * bit operations, no branch (the quadrant of a random angle is unpredictable) */
{inline} {T} symgen_pick{f}({T} a, {T} b, {t.bits} take_b, {t.bits} sign)
{{
    {t.bits} x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x = ((x & ~take_b) | (y & take_b)) ^ sign;
    memcpy(&a, &x, sizeof a);
    return a;
}}

/* sin(x) and cos(x) with one reduction: Cody & Waite's x - n*pi/2 (pi/2 = P1 + P2 + P3),
 * minimax polynomials on |r| <= pi/4, quadrant n mod 4 by swap and sign (symgen.backends.c99
 * .trig). libm for |x| >= {t.limit}, NaN, infinities and under -ffast-math. */
{inline} void symgen_sincos{f}({T} x, {T} *s, {T} *c)
{{
#ifndef __FAST_MATH__
    if (fabs{f}(x) < {t.limit}) {{
{_reduction_and_polynomials(t, T, f, " " * 8)}\
        const uint32_t k = (uint32_t)(int32_t)n; /* |n| < 2^31 below the limit */
        const {t.bits} swap = ({t.bits})0u - ({t.bits})(k & 1u);
        *s = symgen_pick{f}(sin_r, cos_r, swap, ({t.bits})((k >> 1) & 1u) << {sign});
        *c = symgen_pick{f}(cos_r, sin_r, swap, ({t.bits})(((k + 1u) >> 1) & 1u) << {sign});
        return;
    }}
#endif
    *s = sin{f}(x);
    *c = cos{f}(x);
}}

{inline} {T} symgen_sin{f}({T} x)
{{
    {T} s, c;
    symgen_sincos{f}(x, &s, &c);
    return s;
}}

{inline} {T} symgen_cos{f}({T} x)
{{
    {T} s, c;
    symgen_sincos{f}(x, &s, &c);
    return c;
}}

/* symgen_sincos{f} of two angles at once, the same operations in the two lanes of a vector
 * (bit for bit the same results, in half the instructions); libm, out of line, where an
 * angle is out of range */
#if {VECTOR_CONDITION}
typedef {T} {vector} __attribute__((vector_size(2 * sizeof({T}))));
typedef {t.bits} {vector}_bits __attribute__((vector_size(2 * sizeof({T}))));
static void __attribute__((noinline, cold)) symgen_sincos2{f}_apart({T} x0, {T} x1, {T} *s0,
                                                                {T} *c0, {T} *s1, {T} *c1)
{{
    symgen_sincos{f}(x0, s0, c0);
    symgen_sincos{f}(x1, s1, c1);
}}
{inline} void symgen_sincos2{f}({T} x0, {T} x1, {T} *s0, {T} *c0, {T} *s1, {T} *c1)
{{
    const {vector} x = {{x0, x1}};
{_reduction_and_polynomials(t, vector, f, " " * 4)}\
    /* n mod 4 is in the last significand bits of `shifted` (defined for any x: the range
     * check follows, so that no branch splits the polynomials from their uses); the swap
     * and the signs of symgen_pick{f}, on the vector's bits */
    const {vector}_bits k = ({vector}_bits)shifted, none = {{0u, 0u}};
    const {vector}_bits swap = none - (k & 1u), sin_bits = ({vector}_bits)sin_r;
    const {vector}_bits cos_bits = ({vector}_bits)cos_r;
    const {vector} s = ({vector})(((sin_bits & ~swap) | (cos_bits & swap))
                                 ^ (((k >> 1) & 1u) << {sign}));
    const {vector} c = ({vector})(((cos_bits & ~swap) | (sin_bits & swap))
                                 ^ ((((k + 1u) >> 1) & 1u) << {sign}));
    *s0 = s[0];
    *c0 = c[0];
    *s1 = s[1];
    *c1 = c[1];
    if (!(fabs{f}(x0) < {t.limit} && fabs{f}(x1) < {t.limit}))
        symgen_sincos2{f}_apart(x0, x1, s0, c0, s1, c1);
}}
#else
{inline} void symgen_sincos2{f}({T} x0, {T} x1, {T} *s0, {T} *c0, {T} *s1, {T} *c1)
{{
    symgen_sincos{f}(x0, s0, c0);
    symgen_sincos{f}(x1, s1, c1);
}}
#endif
#endif
"""


__all__ = ["FUNCTIONS", "TRIG", "VECTOR_CONDITION", "Angle", "AnglePair", "Trig", "angle_pairs",
           "function_name", "pair_function_name", "source"]

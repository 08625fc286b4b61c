"""The explicit inverse of small symmetric matrices by their adjugate
(:func:`symgen.formulations.dense.adjugate_inverse`), evaluated by the IR interpreter against
numpy's, on random SPD matrices (seeded) of every size it takes, well and badly conditioned.

Bound: a forward-stable inverse has ‖X − A⁻¹‖ ≤ c n κ(A) ε ‖A⁻¹‖ (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed. 2002, §14.1; Cramer's rule for n = 2: §1.10.1);
c = 10 covers the few roundings per entry (a cofactor, the
reciprocal of the determinant, one product).
"""

from __future__ import annotations

import numpy as np
import pytest

from symgen.formulations import dense
from symgen.ir.expr import ZERO, Expr
from symgen.ir.printer import evaluate
from symgen.ir.program import ProgramBuilder

EPS = np.finfo(float).eps


def inverse_of(a: np.ndarray) -> np.ndarray:
    n = len(a)
    b = ProgramBuilder("inverse")
    e = b.input("a", n * (n + 1) // 2)
    lower: list[list[Expr]] = [[ZERO] * (i + 1) for i in range(n)]
    values = []
    for i in range(n):
        for j in range(i + 1):
            lower[i][j] = e[len(values)]
            values.append(a[i, j])
    inv = dense.adjugate_inverse(b, lower)
    b.output("x", n * n, [x for row in inv for x in row])
    return np.asarray(evaluate(b.build(), a=values)["x"]).reshape(n, n)


def spd(n: int, condition: float, rng: np.random.Generator) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (q * np.geomspace(1.0, 1.0 / condition, n)) @ q.T


@pytest.mark.parametrize("n", range(1, dense.ADJUGATE_MAX + 1))
@pytest.mark.parametrize("condition", [1.0, 1e3, 1e8])
def test_adjugate_inverse_is_forward_stable(n, condition):
    rng = np.random.default_rng(100 * n + int(np.log10(condition)))
    for _ in range(20):
        a = spd(n, condition, rng)
        ref = np.linalg.inv(a)
        x = inverse_of(a)
        assert np.allclose(x, x.T, rtol=0, atol=0)  # mirrored, exactly symmetric
        bound = 10 * n * np.linalg.cond(a) * EPS * np.linalg.norm(ref, 2)
        assert np.linalg.norm(x - ref, 2) <= bound


def test_adjugate_inverse_refuses_large_matrices():
    n = dense.ADJUGATE_MAX + 1
    b = ProgramBuilder("inverse")
    e = b.input("a", n * n)
    with pytest.raises(ValueError, match=f"n = {n}"):
        dense.adjugate_inverse(b, [[e[n * i + j] for j in range(n)] for i in range(n)])

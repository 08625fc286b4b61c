"""Generate C for the Jacobians of Pinocchio's RNEA and ABA through casadi_kin_dyn (run in
its venv, like :mod:`casadi_codegen`).

    python casadi_derivatives.py MODEL.urdf OUT_DIR [--floating]

The derivatives are taken in the tangent space, as Pinocchio's analytical derivatives and
symgen's are: with δ ∈ R^nv and q ⊕ δ = ``integrate(q, δ)`` (casadi_kin_dyn's, i.e.
Pinocchio's), ∂f/∂q = ∂f(q ⊕ δ)/∂δ at δ = 0, CasADi's ``jacobian`` of the SX graph followed
by the substitution δ = 0 (which folds the graph's zeros); ∂f/∂v by ``jacobian`` in v.
Writes ``cas_drnea.c`` (inputs q, v, a; outputs dtau_dq, dtau_dv), ``cas_daba.c`` (inputs
q, v, tau; outputs ddq_dq, ddq_dv), both dense nv × nv and column-major, and
``layout.json`` as :mod:`casadi_codegen` does (the joints, sizes and operation counts).
"""

from __future__ import annotations

import json
import time

import casadi_kin_dyn  # first: it loads the casadi library that ``import casadi`` needs

# isort: split
import casadi as ca
from casadi_codegen import CODEGEN_OPTIONS, op_counts, start


def tangent_jacobians(kd: casadi_kin_dyn.CasadiKinDyn, f: ca.Function, name: str,
                      outputs: tuple[str, str]) -> ca.Function:
    """``name(q, v, x) -> (∂f/∂q in the tangent space, ∂f/∂v)`` for ``f(q, v, x)``."""
    nq, nv = kd.nq(), kd.nv()
    q, v, x = ca.SX.sym("q", nq), ca.SX.sym("v", nv), ca.SX.sym("x", nv)
    delta = ca.SX.sym("delta", nv)
    moved = kd.integrate()(q, delta)
    out = f(moved, v, x)
    zero = ca.SX.zeros(nv)
    d_q = ca.substitute(ca.jacobian(out, delta), delta, zero)
    d_v = ca.substitute(ca.jacobian(f(q, v, x), v), delta, zero)
    return ca.Function(name, [q, v, x], [ca.densify(d_q), ca.densify(d_v)],
                       ["q", "v", "x"], list(outputs))


def main() -> None:
    t0 = time.perf_counter()
    args, kd, info = start(__doc__.splitlines()[0])

    def sx(f: ca.Function) -> ca.Function:
        return f if f.is_a("SXFunction") else f.expand()

    for short, method, outputs in (("drnea", kd.rnea, ("dtau_dq", "dtau_dv")),
                                   ("daba", kd.aba, ("ddq_dq", "ddq_dv"))):
        t1 = time.perf_counter()
        f = tangent_jacobians(kd, sx(method()), f"cas_{short}", outputs)
        info["functions"][short] = {
            "name": f.name(),
            "file": f"cas_{short}.c",
            "inputs": [f.name_in(i) for i in range(f.n_in())],
            "outputs": [f.name_out(i) for i in range(f.n_out())],
            "out_shape": list(f.size_out(0)),
            "sz_arg": f.sz_arg(),
            "sz_res": f.sz_res(),
            "sz_iw": f.sz_iw(),
            "sz_w": f.sz_w(),
            "n_instructions": f.n_instructions(),
            "ops": op_counts(f),
        }
        gen = ca.CodeGenerator(f"cas_{short}.c", CODEGEN_OPTIONS)
        gen.add(f)
        gen.generate(f"{args.out}/")
        info["seconds"][short] = time.perf_counter() - t1
    info["seconds"]["total"] = time.perf_counter() - t0
    (args.out / "layout.json").write_text(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()

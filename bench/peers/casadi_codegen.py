"""Generate C for Pinocchio's RNEA, CRBA and ABA through casadi_kin_dyn (run in its venv).

    python casadi_codegen.py MODEL.urdf OUT_DIR [--floating]

Uses only the standard library, casadi and casadi_kin_dyn (Pinocchio 2.6 inside). Writes
``cas_rnea.c``, ``cas_crba.c``, ``cas_aba.c`` (CasADi C of the expanded SX functions, renamed
and with dense outputs) and ``layout.json``: the joints in Pinocchio's order with idx_q/idx_v,
nq, nv, and per function its arguments, output shape, work sizes (sz_arg, sz_res, sz_iw,
sz_w) and operation counts.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from importlib import metadata
from pathlib import Path

import casadi_kin_dyn  # first: it loads the casadi library that ``import casadi`` needs

# isort: split
import casadi as ca

OP_KINDS = ("add", "mul", "div", "sqrt", "trig", "other")
FREE_OPS = {ca.OP_CONST, ca.OP_INPUT, ca.OP_OUTPUT, ca.OP_NEG, ca.OP_ASSIGN, ca.OP_PARAMETER}
KIND_OF = {
    ca.OP_ADD: "add",
    ca.OP_SUB: "add",
    ca.OP_TWICE: "add",
    ca.OP_MUL: "mul",
    ca.OP_SQ: "mul",
    ca.OP_DIV: "div",
    ca.OP_INV: "div",
    ca.OP_SQRT: "sqrt",
    ca.OP_SIN: "trig",
    ca.OP_COS: "trig",
}
CODEGEN_OPTIONS = {"casadi_real": "double", "casadi_int": "long long int"}
#: Pinocchio joint type -> nv, where it differs from nq.
NV_OF_TYPE = {"JointModelFreeFlyer": 6, "JointModelPlanar": 3, "JointModelSpherical": 3}


def op_counts(f: ca.Function) -> dict[str, int]:
    """Operations of an SX function by kind, plus ``total``: add/sub, mul (sq = 1 mul),
    div, sqrt, sin/cos as trig, any other arithmetic as other; constants, inputs, outputs,
    negation and multiplication by ±1 are free."""
    c: Counter = Counter()
    unit: set[int] = set()  # work slots now holding the constant ±1
    for k in range(f.n_instructions()):
        op = f.instruction_id(k)
        out = f.instruction_output(k)
        if op == ca.OP_MUL and any(i in unit for i in f.instruction_input(k)):
            pass  # ±1 * x
        elif op not in FREE_OPS:
            c[KIND_OF.get(op, "other")] += 1
        for slot in out:
            unit.discard(slot)
        if op == ca.OP_CONST and abs(f.instruction_constant(k)) == 1.0:
            unit.update(out)
    counts = {kind: int(c[kind]) for kind in OP_KINDS}
    counts["total"] = sum(counts.values())
    return counts


def renamed(f: ca.Function, name: str) -> ca.Function:
    """``f`` as an SX function called ``name`` with dense outputs."""
    if not f.is_a("SXFunction"):
        f = f.expand()
    args = [ca.SX.sym(f.name_in(i), f.sparsity_in(i)) for i in range(f.n_in())]
    outs = [ca.densify(x) for x in f.call(args)]
    names_in = [f.name_in(i) for i in range(f.n_in())]
    names_out = [f.name_out(i) for i in range(f.n_out())]
    return ca.Function(name, args, outs, names_in, names_out)


def layout(kd: casadi_kin_dyn.CasadiKinDyn) -> list[dict]:
    """Joints with coordinates, in Pinocchio's order (idx_v by accumulation)."""
    joints, iv = [], 0
    for name in kd.joint_names():
        nq = kd.joint_nq(name)
        if nq == 0:  # "universe"
            continue
        kind = kd.joint_type(name)
        nv = NV_OF_TYPE.get(kind, 1 if kind.startswith("JointModelRUB") else nq)
        joints.append(
            {
                "name": name,
                "type": kind,
                "idx_q": kd.joint_iq(name),
                "nq": nq,
                "idx_v": iv,
                "nv": nv,
            }
        )
        iv += nv
    if iv != kd.nv():
        raise RuntimeError(f"velocity layout: {iv} coordinates found, Pinocchio has {kd.nv()}")
    return joints


def start(description: str) -> tuple[argparse.Namespace, casadi_kin_dyn.CasadiKinDyn, dict]:
    """The command line (URDF, output folder, --floating), the casadi_kin_dyn model and the
    layout.json content without its functions (shared with casadi_derivatives.py)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("urdf", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--floating", action="store_true", help="add a free-flyer root joint")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    root = casadi_kin_dyn.CasadiKinDyn.JointType
    kd = casadi_kin_dyn.CasadiKinDyn(
        args.urdf.read_text(), root.FREE_FLYER if args.floating else root.OMIT
    )
    info: dict = {
        "nq": kd.nq(),
        "nv": kd.nv(),
        "joints": layout(kd),
        "versions": {
            "casadi": ca.__version__,
            "pinocchio (casadi route)": metadata.version("pin"),
            "cmeel-casadi-kin-dyn": metadata.version("cmeel-casadi-kin-dyn"),
        },
        "functions": {},
        "seconds": {},
    }
    return args, kd, info


def main() -> None:
    t0 = time.perf_counter()
    args, kd, info = start(__doc__.splitlines()[0])
    for short, method in (("rnea", kd.rnea), ("crba", kd.crba), ("aba", kd.aba)):
        t1 = time.perf_counter()
        original = method()
        f = renamed(original, f"cas_{short}")
        info["functions"][short] = {
            "name": f.name(),
            "file": f"cas_{short}.c",
            "original_class": original.class_name(),
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

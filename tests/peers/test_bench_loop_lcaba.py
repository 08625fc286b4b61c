"""bench/loop_dynamics.py's Pinocchio ``lcaba`` peer and its hook for Pinocchio's generated
``CodeGenConstraintDynamics``, without building any Pinocchio C++ program (minutes):

- lcaba, given the constraint models of ``symgen.peers.pinocchio_constraints`` (a revolute
  loop: two ``CONTACT_3D`` points on its axis, 6 rows for 5 independent ones) and settings
  in the range the benchmark tunes (mu 1e-4, a few proximal iterations), returns the q̈ of
  the benchmark's independent numpy solution at consistent states (Python bindings);
- the lcaba timing program's source is the constraintDynamics one with exactly its edits;
- the code-generation hook compiles a stand-in for CppADCodeGen's C (a ``*_forward_zero``
  that returns its τ input) and reads back q̈ in symgen's layout: the input packing and the
  layout conversions;
- the page renders results without the new peers (the committed results) and with them.
"""

from __future__ import annotations

import copy
import json
import shutil
import sys

import numpy as np
import pytest
from paths import ROOT

pin = pytest.importorskip("pinocchio")
if not hasattr(pin, "lcaba"):
    pytest.skip("Pinocchio without lcaba (Pinocchio 4)", allow_module_level=True)
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import loop_dynamics as ld  # noqa: E402
from symgen.peers.pinocchio import Bridge  # noqa: E402
from symgen.peers.pinocchio_constraints import pin_model_with_loops  # noqa: E402

#: lcaba's q̈ against the numpy solution (the benchmark's TUNED_RTOL, the accuracy it tunes
#: lcaba's settings to reach; measured ≤ 6e-10 with these settings on 20 states).
RTOL = 1e-9


@pytest.mark.parametrize("name", ["five_bar", "four_bar_knee", "delta_robot"])
def test_lcaba_matches_the_numpy_solution(name: str) -> None:
    model = ld.load_model(name)
    states = ld.consistent_states(model, 8)
    expected = ld.reference_accelerations(model, states)
    pm, constraints = pin_model_with_loops(model)
    br = Bridge(model, pm)
    models = pin.StdVec_RigidConstraintModel()
    datas = pin.StdVec_RigidConstraintData()
    for cm in constraints:
        models.append(cm)
        datas.append(cm.createData())
    data = pm.createData()
    pin.computeJointMinimalOrdering(pm, data, models)
    settings = pin.ProximalSettings(0.0, 1e-12, 1e-4, 5)
    a = np.array([br.v_from_pin(pin.lcaba(pm, data, br.q_to_pin(q), br.v_to_pin(v),
                                          br.v_to_pin(tau), models, datas, settings).copy())
                  for q, v, tau in zip(states["q"], states["v"], states["tau"], strict=True)])
    assert settings.iter == 5  # absolute accuracy 0: every iteration runs
    assert ld.worst_error(a, expected) <= RTOL
    assert ld.worst_residual(a, states) <= RTOL


def test_lcaba_driver_is_the_constraint_dynamics_driver_edited() -> None:
    src = ld.LCABA_DRIVER
    assert "pinocchio::lcaba(" in src and "constraintDynamics(" not in src
    assert "computeJointMinimalOrdering(model, data, models)" in src
    assert "initConstraintDynamics" not in src
    with pytest.raises(ValueError, match="not found"):
        ld._edited("nothing to edit", ld.LCABA_EDITS)


STAND_IN = r"""
/* CppADCodeGen's struct LangCAtomicFun is three pointers: passed by value, never used */
struct LangCAtomicFun { void *libModel; void *forward; void *reverse; };
void fake_forward_zero(double const *const *in, double *const *out, struct LangCAtomicFun f) {
    for (int i = 0; i < NV; ++i) out[0][i] = in[0][NQ + NV + i];
    for (int i = 0; i < NC; ++i) out[0][NV + i] = 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_codegen_hook_plumbing(tmp_path) -> None:
    model = ld.load_model("five_bar")
    states = ld.consistent_states(model, 4)
    calls = []

    def sources(model_bin, spec, with_settings=False, log=None):
        calls.append((model_bin.name, spec, with_settings))
        folder = tmp_path / "generated"
        folder.mkdir(exist_ok=True)
        (folder / "fake.c").write_text(f"#define NQ {model.nq}\n#define NV {model.nv}\n"
                                       f"#define NC 6\n" + STAND_IN)
        return folder

    work = tmp_path / "work"
    work.mkdir()
    run = ld.prepare_codegen(model, states, work, sources, "spec text\n")
    assert calls == [("model.bin", "spec text\n", True)]
    out = run(3)
    assert out["rows"] == 6 and out["ns"] > 0
    np.testing.assert_allclose(out["a"], states["tau"], rtol=0, atol=1e-15)


def test_codegen_entry_needs_exactly_one_function(tmp_path) -> None:
    (tmp_path / "a.c").write_text("void cdyn_forward_zero(double const *const *in,\n")
    assert ld.codegen_entry(tmp_path) == "cdyn_forward_zero"
    (tmp_path / "b.c").write_text("void other_forward_zero(double const *const *in,\n")
    with pytest.raises(RuntimeError, match="expected one"):
        ld.codegen_entry(tmp_path)


def test_codegen_peer_reports_a_reason_or_the_function() -> None:
    fn, why = ld.codegen_peer()
    assert (fn is None) == bool(why)


RESULTS = ROOT / "bench" / "results" / "loop_dynamics.json"


@pytest.mark.skipif(not RESULTS.exists(), reason="no committed loop_dynamics results")
def test_page_renders_with_and_without_the_new_peers() -> None:
    old = json.loads(RESULTS.read_text())
    assert "Target" in ld.section(old)
    new = copy.deepcopy(old)
    new["settings"]["target"] = ld.TARGET
    new["unavailable"]["codegen"] = "no module bench.peers.pinocchio_codegen"
    for k, e in enumerate(new["results"]):
        for per_tool in (e["ns"], *(e.get(key, {}) for key in ("accuracy", "reference_error",
                                                                 "residual"))):
            per_tool.pop("codegen", None)  # the results as a run without the codegen peer
        e["ns"]["lcaba"] = e["ns"]["symgen"] * (1.5 if k == 0 else 4.0)
        e["lcaba"] = {"mu": 1e-4, "max_iter": 3, "error": 2e-10, "meets": k != 1,
                      "tried": {"0.0001/3": 2e-10}, "shared_error": 4e-6}
        for key in ("accuracy", "reference_error", "residual"):
            e[key]["lcaba"] = 2e-10
    page = ld.section(new)
    first = new["results"][0]["model"]
    assert f"**The 2× target is missed on {first} (×1.5)**" in page
    assert "not measured: no module bench.peers.pinocchio_codegen" in page
    assert f"does not reach that accuracy on {new['results'][1]['model']}" in page
    new["results"][0]["ns"]["codegen"] = new["results"][0]["ns"]["symgen"] * 1.2
    for key in ("accuracy", "reference_error", "residual"):
        new["results"][0][key]["codegen"] = 1e-12
    assert "(`CodeGenConstraintDynamics`)" in ld.summary(new)

"""``symgen simulate``: a trajectory of a model file from the command line."""

from __future__ import annotations

import sys

import click
import numpy as np

from symgen.apps.cli_help import NO_COUPLINGS_HELP, STRICT_HELP
from symgen.errors import SymgenError
from symgen.io import load
from symgen.io.mjcf_state import keyframe
from symgen.simulation import simulate
from symgen.simulation.simulate import METHODS


def _numbers(text: str | None, option: str, size: int, what: str) -> np.ndarray | None:
    if text is None:
        return None
    try:
        values = np.array([float(x) for x in text.split(",")])
    except ValueError:
        raise SymgenError(f"{option} {text!r}: not a comma-separated list of numbers") from None
    if values.shape != (size,):
        raise SymgenError(f"{option}: {values.size} values, expected {what} = {size}")
    return values


@click.command("simulate")
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("--duration", type=float, required=True, help="Simulated time, s.")
@click.option("--dt", type=float, default=None,
              help="Fixed step, s; default: adaptive steps (closed loops: the generated "
              "Runge-Kutta step in C, by step doubling).")
@click.option("--method", type=click.Choice(METHODS), default="auto", show_default=True,
              help="Integration method (docs/api.md, \"Simulation\"): auto, tree, "
              "projected (adaptive or RK4, Python-driven), loop_rk4 (generated closed-loop "
              "step, adaptive or --dt), loop_trapezoidal and embedded (need --dt), natural (= "
              "natural_rk4: natural coordinates, adaptive or --dt) and natural_trapezoidal "
              "(natural coordinates, fixed step, default 1 ms).")
@click.option("--tolerance", type=float, default=1e-10, show_default=True,
              help="Local error tolerance of the adaptive steps.")
@click.option("--q0", metavar="Q,...", default=None,
              help="Initial configuration (nq comma-separated numbers; default neutral).")
@click.option("--v0", metavar="V,...", default=None,
              help="Initial velocity (nv numbers; default rest).")
@click.option("--keyframe", "key", metavar="NAME", default=None,
              help="Start from the MJCF keyframe NAME.")
@click.option("--tau", metavar="T,...", default=None,
              help="Constant joint forces (nv numbers; default zero).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Save a picture of the joint coordinates, the energy balance and the "
              "constraint drift (needs matplotlib).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None,
              help="Write t, q, v of every recorded step as CSV.")
@click.option("--every", type=click.IntRange(1), default=1, show_default=True,
              help="Record every k-th step.")
@click.option("--floating-base", is_flag=True,
              help="Attach the model's root body to the world by a free joint.")
@click.option("--no-couplings", is_flag=True, help=NO_COUPLINGS_HELP)
@click.option("--strict", is_flag=True, help=STRICT_HELP)
def simulate_command(model_path, duration, dt, method, tolerance, q0, v0, key, tau,
                     plot_path, csv_path, every, floating_base=False, no_couplings=False,
                     strict=False) -> None:
    """Simulate MODEL for --duration seconds (symgen.simulate: open trees by their forward
    dynamics, closed loops by the generated Runge-Kutta step with augmented-Lagrangian
    accelerations and projections onto the constraints; docs/api.md, "Simulation"), and
    print the final state, the largest constraint residuals and the energy balance.
    Progress goes to stderr."""
    model = load(model_path, floating_base=floating_base, couplings=not no_couplings,
                 strict=strict)
    if key is not None:
        if q0 is not None or v0 is not None:
            raise SymgenError("--keyframe and --q0/--v0 are alternatives: give one")
        start_q, start_v = keyframe(model, key)
    else:
        start_q = _numbers(q0, "--q0", model.nq, "nq")
        start_v = _numbers(v0, "--v0", model.nv, "nv")
    forces = _numbers(tau, "--tau", model.nv, "nv")
    print(f"simulating {model.name} for {duration:g} s", file=sys.stderr)
    run = simulate(model, duration, dt, q0=start_q, v0=start_v, tau=forces, method=method,
                   tolerance=tolerance, record_every=every, progress=True)
    click.echo(f"{model.name}: {run.method}; {len(run.t)} recorded states")
    for note in run.notes:
        click.echo(f"  {note}")
    click.echo(f"  final q: {np.array2string(run.q[-1], precision=6, max_line_width=200)}")
    click.echo(f"  final v: {np.array2string(run.v[-1], precision=6, max_line_width=200)}")
    if model.loop_joints:
        click.echo(f"  largest |phi| {run.position_residual.max():.2e}, "
                   f"|phi_q v| {run.velocity_residual.max():.2e}")
    click.echo(f"  energy balance: largest |E - E0 - W| = "
               f"{np.max(np.abs(run.energy_balance)):.2e} J (E0 = {run.energy[0]:.6g} J)")
    if csv_path is not None:
        columns = ["t", *(f"q{i}" for i in range(model.nq)), *(f"v{i}" for i in range(model.nv))]
        data = np.column_stack([run.t, run.q, run.v])
        np.savetxt(csv_path, data, delimiter=",", header=",".join(columns), comments="")
        click.echo(f"wrote {csv_path}")
    if plot_path is not None:
        run.plot(plot_path)
        click.echo(f"wrote {plot_path}")


__all__ = ["simulate_command"]

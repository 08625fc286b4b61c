"""Benchmark mechanisms and their independent high-accuracy references (numpy only).

- Andrews' squeezing mechanism (examples/models/andrews_squeezer.yaml): the equations of the
  benchmark in its seven angles, as published (Hairer & Wanner, *Solving ODEs II*, 2nd ed.
  1996, §VII.7; problem "andrews" of the Test Set for IVP Solvers, Mazzia, Magherini et al.),
  integrated in index-1 form with a projection onto g = 0, Gẏ = 0 after every step;
  :data:`ANDREWS_T_REF`, :data:`ANDREWS_Y_REF`, :data:`ANDREWS_YD_REF`: the test set's
  reference solution (PSIDE, tolerance 1e-14);
- the spinning heavy top (examples/models/spinning_top.yaml): Euler's equations about the
  fixed point with the gravity torque, the attitude as a unit quaternion;
- Bricard's orthogonal 6R linkage (examples/models/bricard.yaml): its Denavit-Hartenberg loop
  closure (:func:`bricard_loop`);
- a slender rod without axial inertia between two joints (:func:`zero_axial_inertia_rod`).

The integrator is Gragg-Bulirsch-Stoer extrapolation with step-size control (Hairer,
Nørsett & Wanner, *Solving ODEs I*, 2nd ed. 1993, §II.9: the explicit midpoint rule, its
Aitken-Neville extrapolation in h², and the fixed-order step-size control), so that the
references need nothing beyond numpy (scipy is not a test dependency; a test cross-checks
with scipy's DOP853 where scipy is installed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from symgen.io.builder import ModelBuilder
from symgen.model import Model

Array = np.ndarray

MODELS = Path(__file__).resolve().parents[1] / "examples" / "models"
ANDREWS_YAML = MODELS / "andrews_squeezer.yaml"
TOP_YAML = MODELS / "spinning_top.yaml"
BRICARD_YAML = MODELS / "bricard.yaml"

# ---------------------------------------------------------------------------------------------
# integrator


@dataclass
class IntegrationStats:
    """Counts of one :func:`extrapolation_integrate` run."""

    accepted: int = 0
    rejected: int = 0
    evaluations: int = 0


def _midpoint(rhs: Callable[[float, Array], Array], t: float, y: Array, f0: Array, h: float,
              n: int) -> Array:
    """The explicit midpoint rule with n (even) substeps over [t, t + h] (HNW I §II.9)."""
    hs = h / n
    z0, z1 = y, y + hs * f0
    for i in range(1, n):
        z0, z1 = z1, z0 + 2 * hs * rhs(t + i * hs, z1)
    return z1


def extrapolation_integrate(
    rhs: Callable[[float, Array], Array], t0: float, y0: Array, t1: float, *,
    rtol: float = 1e-12, atol: float = 1e-12, columns: int = 8, h0: float | None = None,
    after_step: Callable[[float, Array], Array] | None = None,
) -> tuple[Array, IntegrationStats]:
    """y(t1) of y' = rhs(t, y), y(t0) = y0, by GBS extrapolation with the step sequence
    n_j = 2j, j = 1..columns (order 2·columns), and the error estimate T_kk − T_k,k−1 in the
    scaled RMS norm with ``atol + rtol·|y|`` (HNW I §II.9). ``after_step(t, y)``
    may replace an accepted state (a projection onto invariants)."""
    k = columns
    seq = [2 * (j + 1) for j in range(k)]
    t, y = float(t0), np.array(y0, dtype=float)
    h = (float(t1) - t) / 100 if h0 is None else h0
    stats = IntegrationStats()
    while t < t1:
        h = min(h, t1 - t)
        f0 = rhs(t, y)
        stats.evaluations += 1
        table: list[Array] = []
        for j, n in enumerate(seq):
            row = [_midpoint(rhs, t, y, f0, h, n)]
            stats.evaluations += n - 1
            for i in range(1, j + 1):
                ratio = (n / seq[j - i]) ** 2 - 1
                row.append(row[i - 1] + (row[i - 1] - table[i - 1]) / ratio)
            table = row
        new, coarse = table[-1], table[-2]
        scale = atol + rtol * np.maximum(np.abs(y), np.abs(new))
        err = float(np.sqrt(np.mean(((new - coarse) / scale) ** 2)))
        factor = min(4.0, max(0.2, 0.94 * (0.65 / max(err, 1e-300)) ** (1 / (2 * k - 1))))
        if err <= 1.0:
            t = t + h if t + h < t1 else float(t1)
            y = after_step(t, new) if after_step is not None else new
            stats.accepted += 1
        else:
            stats.rejected += 1
        h *= factor
    return y, stats


# ---------------------------------------------------------------------------------------------
# Andrews' squeezing mechanism

#: The benchmark's parameters (SI), with the names of the test set.
ANDREWS = {
    "m1": 0.04325, "m2": 0.00365, "m3": 0.02373, "m4": 0.00706, "m5": 0.07050,
    "m6": 0.00706, "m7": 0.05498,
    "i1": 2.194e-6, "i2": 4.410e-7, "i3": 5.255e-6, "i4": 5.667e-7, "i5": 1.169e-5,
    "i6": 5.667e-7, "i7": 1.912e-5,
    "xa": -0.06934, "ya": -0.00227, "xb": -0.03635, "yb": 0.03273, "xc": 0.014, "yc": 0.072,
    "d": 28e-3, "da": 115e-4, "e": 2e-2, "ea": 1421e-5, "rr": 7e-3, "ra": 92e-5,
    "ss": 35e-3, "sa": 1874e-5, "sb": 1043e-5, "sc": 18e-3, "sd": 2e-2, "ta": 2308e-5,
    "tb": 916e-5, "u": 4e-2, "ua": 1228e-5, "ub": 449e-5, "zf": 2e-2, "zt": 4e-2,
    "fa": 1421e-5, "c0": 4530.0, "l0": 7785e-5, "mom": 0.033,
}

#: The angles y = (β, Θ, γ, Φ, δ, Ω, ε) and the tree joints of the YAML model they belong to.
ANDREWS_JOINTS = ("beta", "theta", "gamma", "phi", "delta", "omega", "epsilon")

#: The consistent initial configuration (at rest) of the test set.
ANDREWS_Y0 = np.array([
    -0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
    0.222668390165885884674473185609, 0.487364979543842550225598953530,
    -0.222668390165885884674473185609, 1.23054744454982119249735015568,
])

#: The test set's consistent initial accelerations and multipliers (its y0(15:27)); with
#: M ÿ + Gᵀλ = f.
ANDREWS_YDD0 = np.array([14222.4439199541138705911625887, -10666.8329399655854029433719415,
                         0.0, 0.0, 0.0, 0.0, 0.0])
ANDREWS_LAMBDA0 = np.array([98.5668703962410896057654982170, -6.12268834425566265503114393122,
                            0.0, 0.0, 0.0, 0.0])

#: The test set's reference solution at t = 0.03 (PSIDE, tolerance 1e-14).
ANDREWS_T_REF = 0.03
ANDREWS_Y_REF = np.array([
    0.1581077119629904e2, -0.1575637105984298e2, 0.4082224013073101e-1,
    -0.5347301163226948, 0.5244099658805304, 0.5347301163226948, 0.1048080741042263e1,
])
ANDREWS_YD_REF = np.array([
    0.1139920302151208e4, -0.1424379294994111e4, 0.1103291221937134e2,
    0.1929337464421385e2, 0.5735699284790808, -0.1929337464421385e2, 0.3231791658026955,
])


def andrews_mass_matrix(y: Array) -> Array:
    """The benchmark's mass matrix M(y) (7×7, symmetric)."""
    p = ANDREWS
    m1, m2, m3, m4, m5, m6, m7 = (p[f"m{k}"] for k in range(1, 8))
    i1, i2, i3, i4, i5, i6, i7 = (p[f"i{k}"] for k in range(1, 8))
    rr, da, e, ea, zt, zf, fa, u = p["rr"], p["da"], p["e"], p["ea"], p["zt"], p["zf"], \
        p["fa"], p["u"]
    cos_t, sin_p, sin_o = np.cos(y[1]), np.sin(y[3]), np.sin(y[5])
    m = np.zeros((7, 7))
    m[0, 0] = m1 * p["ra"] ** 2 + m2 * (rr**2 - 2 * da * rr * cos_t + da**2) + i1 + i2
    m[1, 0] = m2 * (da**2 - da * rr * cos_t) + i2
    m[1, 1] = m2 * da**2 + i2
    m[2, 2] = m3 * (p["sa"] ** 2 + p["sb"] ** 2) + i3
    m[3, 3] = m4 * (e - ea) ** 2 + i4
    m[4, 3] = m4 * ((e - ea) ** 2 + zt * (e - ea) * sin_p) + i4
    m[4, 4] = (m4 * (zt**2 + 2 * zt * (e - ea) * sin_p + (e - ea) ** 2)
               + m5 * (p["ta"] ** 2 + p["tb"] ** 2) + i4 + i5)
    m[5, 5] = m6 * (zf - fa) ** 2 + i6
    m[6, 5] = m6 * ((zf - fa) ** 2 - u * (zf - fa) * sin_o) + i6
    m[6, 6] = (m6 * ((zf - fa) ** 2 - 2 * u * (zf - fa) * sin_o + u**2)
               + m7 * (p["ua"] ** 2 + p["ub"] ** 2) + i6 + i7)
    return np.tril(m) + np.tril(m, -1).T


def andrews_spring_point(y: Array) -> Array:
    """The spring's point D on body 3: B + (sd cos γ + sc sin γ, sd sin γ − sc cos γ)."""
    p, g = ANDREWS, y[2]
    return np.array([p["xb"] + p["sd"] * np.cos(g) + p["sc"] * np.sin(g),
                     p["yb"] + p["sd"] * np.sin(g) - p["sc"] * np.cos(g)])


def andrews_forces(y: Array, yd: Array) -> Array:
    """The benchmark's f(y, ẏ): motor torque, the spring's torque on γ, and the velocity
    terms of the kinetic energy."""
    p = ANDREWS
    m2, m4, m6 = p["m2"], p["m4"], p["m6"]
    rr, da, zt, u = p["rr"], p["da"], p["zt"], p["u"]
    e_ea, zf_fa = p["e"] - p["ea"], p["zf"] - p["fa"]
    b_d, t_d, _, p_d, d_d, o_d, e_d = yd
    sin_t, cos_p, cos_o = np.sin(y[1]), np.cos(y[3]), np.cos(y[5])
    d = andrews_spring_point(y)
    c = np.array([p["xc"], p["yc"]])
    length = float(np.linalg.norm(d - c))
    force = -p["c0"] * (length - p["l0"]) / length * (d - c)
    g = y[2]
    dd_dg = np.array([-p["sd"] * np.sin(g) + p["sc"] * np.cos(g),
                      p["sd"] * np.cos(g) + p["sc"] * np.sin(g)])
    return np.array([
        p["mom"] - m2 * da * rr * t_d * (t_d + 2 * b_d) * sin_t,
        m2 * da * rr * b_d**2 * sin_t,
        float(force @ dd_dg),
        m4 * zt * e_ea * d_d**2 * cos_p,
        -m4 * zt * e_ea * p_d * (p_d + 2 * d_d) * cos_p,
        -m6 * u * zf_fa * e_d**2 * cos_o,
        m6 * u * zf_fa * o_d * (o_d + 2 * e_d) * cos_o,
    ])


def _andrews_arms() -> list[list[tuple[float, tuple[int, ...], float]]]:
    """The loop closures g(y) = 0 as sums of arms L·(cos(w·y + φ), sin(w·y + φ)): per pair
    of rows, (L, indices of y summed in w·y, φ); E from the crank minus E from B, from A
    through G, from A through H (the test set's g, in its order)."""
    p, h = ANDREWS, np.pi / 2
    crank = [(p["rr"], (0,), 0.0), (-p["d"], (0, 1), 0.0)]
    return [
        crank + [(-p["ss"], (2,), -h)],
        crank + [(-p["zt"], (4,), 0.0), (-p["e"], (3, 4), -h)],
        crank + [(-p["u"], (6,), -h), (-p["zf"], (5, 6), 0.0)],
    ]


def _arm_arrays() -> tuple[Array, Array, Array, Array]:
    """The arms of :func:`_andrews_arms` as arrays: lengths, 0/1 weights (arms × 7), phases,
    and the 0/1 matrix (3 pairs × arms) summing each pair's arms."""
    arms = [(pair, *arm) for pair, group in enumerate(_andrews_arms()) for arm in group]
    weights = np.zeros((len(arms), 7))
    pairs = np.zeros((3, len(arms)))
    for k, (pair, _, idx, _) in enumerate(arms):
        weights[k, list(idx)] = 1.0
        pairs[pair, k] = 1.0
    return (np.array([a[1] for a in arms]), weights, np.array([a[3] for a in arms]), pairs)


_LENGTHS, _WEIGHTS, _PHASES, _PAIRS = _arm_arrays()
_ANDREWS_OFFSETS = np.array([ANDREWS["xb"], ANDREWS["yb"], ANDREWS["xa"], ANDREWS["ya"],
                             ANDREWS["xa"], ANDREWS["ya"]])


def andrews_constraints(y: Array, yd: Array | None = None) -> tuple[Array, Array, Array]:
    """g(y) (6), G = ∂g/∂y (6×7) and (d/dt G) ẏ (6; zero without ``yd``): for an arm
    L(cos a, sin a), a = w·y + φ, the Jacobian rows are L(−sin a, cos a) wᵀ and the
    bias −L(cos a, sin a)(w·ẏ)²."""
    angle = _WEIGHTS @ np.asarray(y, float) + _PHASES
    rate2 = np.zeros_like(angle) if yd is None else (_WEIGHTS @ np.asarray(yd, float)) ** 2
    x, s = _LENGTHS * np.cos(angle), _LENGTHS * np.sin(angle)
    g = np.empty(6)
    g[0::2], g[1::2] = _PAIRS @ x, _PAIRS @ s
    jac = np.empty((6, 7))
    jac[0::2], jac[1::2] = _PAIRS @ (-s[:, None] * _WEIGHTS), _PAIRS @ (x[:, None] * _WEIGHTS)
    bias = np.empty(6)
    bias[0::2], bias[1::2] = -_PAIRS @ (x * rate2), -_PAIRS @ (s * rate2)
    return g - _ANDREWS_OFFSETS, jac, bias


def andrews_accelerations(y: Array, yd: Array) -> tuple[Array, Array]:
    """ÿ and λ of the index-1 system [[M, Gᵀ], [G, 0]] [ÿ; λ] = [f; −(d/dt G) ẏ]."""
    _, jac, bias = andrews_constraints(y, yd)
    a = np.zeros((13, 13))
    a[:7, :7] = andrews_mass_matrix(y)
    a[:7, 7:] = jac.T
    a[7:, :7] = jac
    sol = np.linalg.solve(a, np.concatenate([andrews_forces(y, yd), -bias]))
    return sol[:7], sol[7:]


def andrews_project(y: Array, yd: Array, tol: float = 1e-15) -> tuple[Array, Array]:
    """The nearest (least-squares) state with g(y) = 0 and G(y) ẏ = 0 (Gauss-Newton)."""
    y = np.array(y, dtype=float)
    for _ in range(10):
        g, jac, _ = andrews_constraints(y)
        if np.max(np.abs(g)) <= tol:
            break
        y -= jac.T @ np.linalg.solve(jac @ jac.T, g)
    _, jac, _ = andrews_constraints(y)
    yd = yd - jac.T @ np.linalg.solve(jac @ jac.T, jac @ yd)
    return y, yd


def andrews_reference(t_end: float = ANDREWS_T_REF, rtol: float = 1e-12, atol: float = 1e-12,
                      project: bool = True) -> tuple[Array, Array, IntegrationStats]:
    """y(t_end), ẏ(t_end) from the test set's initial state (at rest), by
    :func:`extrapolation_integrate`, projected onto g = 0, Gẏ = 0 after every step unless
    ``project`` is False."""

    def rhs(_t: float, x: Array) -> Array:
        return np.concatenate([x[7:], andrews_accelerations(x[:7], x[7:])[0]])

    def after(_t: float, x: Array) -> Array:
        return np.concatenate(andrews_project(x[:7], x[7:]))

    x, stats = extrapolation_integrate(
        rhs, 0.0, np.concatenate([ANDREWS_Y0, np.zeros(7)]), t_end, rtol=rtol, atol=atol,
        h0=1e-5, after_step=after if project else None)
    return x[:7], x[7:], stats


def andrews_angles(nm, q: Array, near: Array | None = None) -> Array:
    """The benchmark's angles y from natural coordinates q of the YAML model: each tree
    joint's value (``nm.joint_values``, relative to the zero configuration) plus its initial
    angle. Angles are defined modulo 2π: they are returned nearest to ``near`` (default the
    initial configuration)."""
    y = np.array([nm.joint_values[name](q) for name in ANDREWS_JOINTS]) + ANDREWS_Y0
    near = ANDREWS_Y0 if near is None else np.asarray(near, float)
    return y - 2 * np.pi * np.round((y - near) / (2 * np.pi))


def andrews_tree_configuration(model: Model, y: Array) -> Array:
    """The YAML model's tree joint configuration (its joint order) for the angles y."""
    index = {name: k for k, name in enumerate(ANDREWS_JOINTS)}
    return np.array([y[index[name]] - ANDREWS_Y0[index[name]] for name in model.joint_names])


def without_forces_section(path: Path, tmp: Path) -> Path:
    """A copy of a model file without its ``forces:`` section (for readers that do not know
    it); the section must be the file's last."""
    text = path.read_text()
    head = text.split("\nforces:")[0] + "\n"
    out = tmp / path.name
    out.write_text(head)
    return out


# ---------------------------------------------------------------------------------------------
# the spinning heavy top

#: Mass (kg), COM on the body's z axis above the pivot (m), inertia about the COM (kg m²),
#: initial tilt from the vertical (rad, about the world x axis), spin (rad/s), gravity.
TOP = {"mass": 1.0, "height": 0.1, "ixx": 0.005, "izz": 0.008, "tilt": 0.3, "spin": 50.0,
       "g": 9.81}


def top_initial_state() -> tuple[Array, Array]:
    """The YAML top's initial joint state: the spherical joint's quaternion (x, y, z, w) at
    the (tilted) zero configuration and the body-frame angular velocity, a spin about the
    top's axis."""
    return np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.0, 0.0, TOP["spin"]])


def _quat_matrix(q: Array) -> Array:
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _rot_x(angle: float) -> Array:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def top_inertia_about_pivot() -> Array:
    """I_O = I_G + m(|c|²1 − c cᵀ), c the COM in the body frame (parallel axes)."""
    m, h = TOP["mass"], TOP["height"]
    c = np.array([0.0, 0.0, h])
    i_g = np.diag([TOP["ixx"], TOP["ixx"], TOP["izz"]])
    return i_g + m * (c @ c * np.eye(3) - np.outer(c, c))


def top_rotation(quat: Array) -> Array:
    """World rotation of the top for the joint quaternion: Rx(tilt)·R(quat)."""
    return _rot_x(TOP["tilt"]) @ _quat_matrix(quat)


def top_rhs(_t: float, x: Array) -> Array:
    """d/dt (quaternion (x, y, z, w), ω): q̇ = ½ q ⊗ (ω, 0) and Euler's equations about the
    fixed point, I_O ω̇ = −ω × I_O ω + c × Rᵀ m g (body frame)."""
    quat, omega = x[:4], x[4:]
    i_o = top_inertia_about_pivot()
    c = np.array([0.0, 0.0, TOP["height"]])
    gravity = top_rotation(quat).T @ np.array([0.0, 0.0, -TOP["mass"] * TOP["g"]])
    torque = np.cross(c, gravity)
    omega_dot = np.linalg.solve(i_o, torque - np.cross(omega, i_o @ omega))
    v, w = quat[:3], quat[3]
    quat_dot = 0.5 * np.concatenate([w * omega + np.cross(v, omega), [-v @ omega]])
    return np.concatenate([quat_dot, omega_dot])


def top_reference(t_end: float, rtol: float = 1e-12, atol: float = 1e-12
                  ) -> tuple[Array, Array, IntegrationStats]:
    """Joint quaternion and body angular velocity at ``t_end`` from :func:`top_initial_state`
    (the quaternion renormalised after every step)."""
    quat, omega = top_initial_state()

    def normalise(_t: float, x: Array) -> Array:
        return np.concatenate([x[:4] / np.linalg.norm(x[:4]), x[4:]])

    x, stats = extrapolation_integrate(top_rhs, 0.0, np.concatenate([quat, omega]), t_end,
                                       rtol=rtol, atol=atol, h0=1e-3, after_step=normalise)
    return x[:4], x[4:], stats


def top_invariants(quat: Array, omega: Array) -> dict[str, float]:
    """Energy ½ωᵀI_Oω + m g z_G, the vertical angular momentum (R I_O ω)_z about the pivot,
    and the spin ω_z (constant for an axisymmetric top, Euler's third equation)."""
    rot = top_rotation(quat)
    i_o = top_inertia_about_pivot()
    z_g = (rot @ np.array([0.0, 0.0, TOP["height"]]))[2]
    return {
        "energy": 0.5 * omega @ i_o @ omega + TOP["mass"] * TOP["g"] * z_g,
        "vertical_momentum": float((rot @ i_o @ omega)[2]),
        "spin": float(omega[2]),
    }


# ---------------------------------------------------------------------------------------------
# Bricard's orthogonal linkage

#: Link length (m), twists and the zero configuration's joint angles of bricard.yaml.
BRICARD_LENGTH = 0.2
BRICARD_TWISTS = (np.pi / 2, -np.pi / 2) * 3
BRICARD_THETA0 = np.full(6, np.pi / 2)


def bricard_loop(theta: Array) -> Array:
    """The loop transform Π_k Rz(θ_k) Tx(a) Rx(α_k) (Denavit-Hartenberg, k = 1..6): the
    identity exactly when the loop is closed."""
    out = np.eye(4)
    for angle, twist in zip(theta, BRICARD_TWISTS, strict=True):
        step = np.eye(4)
        step[:3, :3] = _rot_z(angle) @ _rot_x(twist)
        step[:3, 3] = _rot_z(angle) @ np.array([BRICARD_LENGTH, 0.0, 0.0])
        out = out @ step
    return out


def _rot_z(angle: float) -> Array:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# ---------------------------------------------------------------------------------------------
# a rod without axial inertia


def zero_axial_inertia_rod(constrained: bool) -> Model:
    """A spatial double pendulum whose first link is a slender rod (0.5 m, 1 kg, along its
    z axis, hanging down) with no inertia about its own axis, followed by a bob (0.5 kg,
    a 0.1 m cube, 0.25 m below). ``constrained``: revolute joints about x (at the ground)
    and y (at the rod's tip), both perpendicular to the rod, so the joints hold the rod's
    spin; otherwise spherical joints at both ends, and the rod can spin about its axis with
    no inertia (the bob turning back against it)."""
    length, mass = 0.5, 1.0
    b = ModelBuilder(f"rod_{'rr' if constrained else 'ss'}", root="ground")
    b.body("rod", mass=mass, com=(0.0, 0.0, -length / 2),
           inertia=(mass * length**2 / 12, mass * length**2 / 12, 0.0))
    side = 0.1
    b.body("bob", mass=0.5, com=(0.0, 0.0, -0.25), inertia=(0.5 * side**2 / 6,) * 3)
    if constrained:
        b.joint("shoulder", "revolute", parent="ground", child="rod", axis=(1.0, 0.0, 0.0))
        b.joint("elbow", "revolute", parent="rod", child="bob", xyz=(0.0, 0.0, -length),
                axis=(0.0, 1.0, 0.0))
    else:
        b.joint("shoulder", "spherical", parent="ground", child="rod")
        b.joint("elbow", "spherical", parent="rod", child="bob", xyz=(0.0, 0.0, -length))
    return b.build()

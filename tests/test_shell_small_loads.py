"""Shell statics at small loads and far from the origin (issue 28): load control converges with
default Newton settings and its small-load limit is the linear solution.

Four runs that stopped with "no equilibrium found beyond load factor 0" while the shell's
bending and drilling strains were formed from absolute positions X + u (round-off eps |X|
whatever the deformation, against Newton tests relative to the load):

* the pinched cylinder on rigid diaphragms (MacNeal & Harder 1985: R = 300, L = 600, h = 3,
  E = 3e6, nu = 0.3; one octant of 16 x 16 cells) under P = 1, and the same model moved rigidly by
  (1e4, 1e4, 1e4) under P = 100;
* the Scordelis-Lo roof (MacNeal & Harder 1985: R = 25, L = 50, 40 degrees either side of the
  crown, h = 0.25, E = 4.32e8, nu = 0, weight 90 per unit area, rigid diaphragms; one quarter of
  16 x 16 cells) under 1e-3 of its weight;
* the slit annular plate (Sze, Liu & Lo 2004, problem 3.3: radii 6 and 10, h = 0.03, E = 21e6,
  nu = 0, one side of the slit clamped, a lifting line force on the other, P_max = 0.8; 6 x 30
  cells) under 1e-6 P_max.

"Equals the linear solution" is checked where round-off, not the physics, decides: the nonlinear
solution is ``u(lam) = lam u_1 + lam^2 u_2 + O(lam^3)`` with u_1 the linear solution of
``K u = f`` (K the tangent at rest), so its direct difference from the linear solution is the
geometric nonlinearity, proportional to the load (measured: 1.2e-6 of |u| for the cylinder at
P = 1, 1.7e-4 for the roof at 1e-3 of its weight, 2.3e-6 for the plate); the Richardson
combination ``2 u(lam) - u(2 lam) / 2 = lam u_1 + O(lam^3)`` removes it and must equal the linear
solution to 1e-6. A model moved by 1e4 must converge in the same iterations to the same state.

References
----------
R.H. MacNeal, R.L. Harder, A proposed standard set of problems to test finite element accuracy,
Finite Elements in Analysis and Design 1 (1985) 3-20.
K.Y. Sze, X.H. Liu, S.H. Lo, Popular benchmark problems for geometric nonlinear analysis of
shells, Finite Elements in Analysis and Design 40 (2004) 1551-1569.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import flexmb as fm
from flexmb.integrators.newton import NewtonLog
from flexmb.io import shell_mesh
from flexmb.validation.shell_cases import fix_symmetry, node_at, octant_model

SHIFT = np.array([1e4, 1e4, 1e4])           # m: the rigid translation of the moved models
LINEAR_TOL = 1e-6                            # relative: the small-load limit against K u = f


def pinched_cylinder(shift: np.ndarray | None = None) -> fm.Model:
    """Octant of the pinched cylinder, 16 x 16 cells; a quarter of P = 1 at the top point
    (0, 0, R); diaphragm at x = L/2 (no displacement in its plane, no rotation about the axis)."""
    radius, half_length = 300.0, 300.0
    model, X = octant_model(radius, half_length, 16, 16, "union-jack", 3e6, 0.3, 3.0)
    for node in shell_mesh.nodes_at(X, x=half_length):
        model.fix(int(node), ["uy", "uz", "rx"])
    model.add_load(node_at(X, (0.0, 0.0, radius), "load point"), "uz", -0.25)
    return _moved(model, shift)


def scordelis_lo_roof(shift: np.ndarray | None = None) -> fm.Model:
    """A quarter of the roof, 16 x 16 cells: the panel (x, R cos t, R sin t), x in [0, L/2],
    t in [0, 40 deg], crown t = 0 on top (+y); symmetry at x = 0 and at the crown (z = 0), rigid
    diaphragm at x = L/2 (u_y = u_z = 0); its weight (90 per unit area) along -y."""
    radius, half_length, thickness = 25.0, 25.0, 0.25
    X, T = shell_mesh.cylinder(radius, half_length, np.radians(40.0), 16, 16, "union-jack", axis="x")
    model = fm.Model(dim=3)
    nodes = model.add_nodes(X)
    model.add_shell(nodes[T], E=4.32e8, nu=0.0, thickness=thickness, rho=90.0 / thickness, name="roof")
    fix_symmetry(model, shell_mesh.nodes_at(X, x=0.0), "x")
    fix_symmetry(model, shell_mesh.nodes_at(X, z=0.0), "z")
    for node in shell_mesh.nodes_at(X, x=half_length):
        model.fix(int(node), ["uy", "uz"])
    model.set_gravity([0.0, -1.0, 0.0])                              # rho h g = 90
    return _moved(model, shift)


def slit_annular_plate(shift: np.ndarray | None = None) -> fm.Model:
    """The plate r in [6, 10] (z = 0), 6 x 30 cells: a rectangle of (r - 6, t) mapped to polar
    coordinates (orientation kept: normals along +z); the slit edge t = 0 clamped, the line force
    P_max = 0.8 (per unit length, along +z) on the edge t = 2 pi."""
    r_in, r_out = 6.0, 10.0
    flat, T = shell_mesh.rectangle(r_out - r_in, 2.0 * np.pi, 6, 30)
    r, t = r_in + flat[:, 0], flat[:, 1]
    model = fm.Model(dim=3)
    nodes = model.add_nodes(np.column_stack([r * np.cos(t), r * np.sin(t), np.zeros(len(r))]))
    model.add_shell(nodes[T], E=21e6, nu=0.0, thickness=0.03, name="plate")
    for node in shell_mesh.nodes_at(flat, y=0.0):
        model.fix(int(node))
    model.add_edge_load(shell_mesh.nodes_at(flat, y=2.0 * np.pi), [0.0, 0.0, 0.8])
    return _moved(model, shift)


def _moved(model: fm.Model, shift: np.ndarray | None) -> fm.Model:
    """The model with every node moved by ``shift`` (m), nothing else changed."""
    if shift is not None:
        model.coordinates = model.coordinates + shift
    return model


def solve(model: fm.Model, lam: float) -> tuple[np.ndarray, NewtonLog]:
    """Load control to lam in one increment with default settings: displacements, Newton log."""
    path = fm.load_control(model, [lam])
    assert path.cutbacks == 0, f"load control needed {path.cutbacks} cut-backs"
    return np.array(path.u[-1]), path.newton_logs[-1]


def linear(model: fm.Model, lam: float) -> np.ndarray:
    """The linear solution K u = lam f with the tangent K at rest (n_dof,)."""
    asm = fm.Assembly(model)
    free = asm.dofs.free
    r, k_data, _ = asm.static_residual(np.zeros(asm.n_dof), lam)
    u = np.zeros(asm.n_dof)
    u[free] = spla.spsolve(asm.free_matrix(k_data).tocsc(), -r[free])
    return u


RUNS: dict[str, tuple[Callable[..., fm.Model], float]] = {
    "pinched cylinder, P = 1": (pinched_cylinder, 1.0),
    "pinched cylinder moved by 1e4, P = 100": (lambda: pinched_cylinder(SHIFT), 100.0),
    "Scordelis-Lo roof, 1e-3 of its weight": (scordelis_lo_roof, 1e-3),
    "slit annular plate, 1e-6 P_max": (slit_annular_plate, 1e-6),
}


@pytest.mark.parametrize("run", list(RUNS))
def test_small_load_converges_by_default_to_the_linear_solution(run):
    build, lam = RUNS[run]
    u, log = solve(build(), lam)
    u_twice, _ = solve(build(), 2.0 * lam)
    u_lin = linear(build(), lam)
    size = np.linalg.norm(u_lin)
    # the small-load limit: the second-order part removed by Richardson extrapolation
    limit = np.linalg.norm(2.0 * u - 0.5 * u_twice - u_lin) / size
    assert limit < LINEAR_TOL, f"{run}: the small-load limit misses the linear solution by {limit:.2e} (relative)"
    # what is left is the geometric nonlinearity, second order in the load (not a round-off floor)
    ratio = np.linalg.norm(u_twice - 2.0 * u_lin) / np.linalg.norm(u - u_lin)
    assert abs(ratio - 4.0) < 0.04, f"{run}: |u - u_lin| grows {ratio:.4f}-fold when the load doubles, not 4-fold"
    # nearly linear: Newton converges quadratically, in a few iterations, to equilibrium within 1e-6 of the load
    assert log.iterations <= 4, f"{run}: {log.iterations} Newton iterations for a nearly linear problem"
    assert log.relative_residuals()[-1] < 1e-6, f"{run}: converged at |r|/F = {log.relative_residuals()[-1]:.2e}"


@pytest.mark.parametrize("build, lam", [(pinched_cylinder, 1.0), (pinched_cylinder, 100.0),
                                        (scordelis_lo_roof, 1e-3), (slit_annular_plate, 1e-6)],
                         ids=["cylinder P=1", "cylinder P=100", "roof", "annular plate"])
def test_model_moved_by_1e4_converges_alike(build, lam):
    u, log = solve(build(), lam)
    u_moved, log_moved = solve(build(SHIFT), lam)
    assert log_moved.iterations == log.iterations, \
        f"moved by 1e4: {log_moved.iterations} Newton iterations, {log.iterations} at the origin"
    diff = np.linalg.norm(u_moved - u) / np.linalg.norm(u)
    # the moved mesh is the original rounded to eps 1e4: a relative change of its geometry below 1e-11
    assert diff < 1e-9, f"moved by 1e4: the displacements differ by {diff:.2e} (relative)"

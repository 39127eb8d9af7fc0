"""Shared pieces of the shell validation cases (``validation/shell_*.py``).

The statics cases rebuild benchmarks of Sze, Liu & Lo (2004) with the co-rotational triangle
:class:`~flexmb.elements.shell3.Shell3`: the cantilever strips of their problems 3.1 and 3.2 and
the one-octant cylinder models of problems 3.5 and 3.6. What they share is here:

* :func:`strip` - a flat strip [0, L] x [0, b] in the x-y plane, clamped at x = 0;
* :func:`cylinder_octant` - one eighth of a cylinder about the x axis, x in [0, L/2] with the
  mid-plane at x = 0, theta in [0, pi/2] from +y to +z (points (x, R cos theta, R sin theta));
* :func:`fix_symmetry` - the conditions of a plane of symmetry normal to a global axis;
* :func:`edge_weights` - the share of an edge load each node of a straight edge carries;
* :func:`node_at` - the node at a given point;
* :func:`response_at_levels` - the response a load-controlled test would see, read off an
  arc-length path that may snap back;
* :func:`path_figure` - load-displacement curves against tabulated reference points;
* :func:`snap_through_study` - arc length to P_max, checks at tabulated load levels, figure.

References
----------
K.Y. Sze, X.H. Liu, S.H. Lo, Popular benchmark problems for geometric nonlinear analysis of
shells, Finite Elements in Analysis and Design 40 (2004) 1551-1569.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

import flexmb as fm
from flexmb.io import shell_mesh
from flexmb.validation.report import CaseReport, Check

#: DOFs a plane of symmetry normal to each global axis fixes: the normal translation and the
#: rotations about the two in-plane axes (a mirror image keeps only rotations about the normal)
SYMMETRY_DOFS = {"x": ("ux", "ry", "rz"), "y": ("uy", "rx", "rz"), "z": ("uz", "rx", "ry")}


@dataclass
class Strip:
    """A clamped strip: the model, its root (x = 0) and tip (x = L) nodes, ordered along y."""

    model: fm.Model
    root: np.ndarray
    tip: np.ndarray


def strip(length: float, width: float, n_long: int, n_wide: int, E: float, nu: float, thickness: float,
          pattern: str = "right") -> Strip:
    """A flat strip [0, length] x [0, width] (z = 0) of n_long x n_wide cells cut into triangles
    (``pattern`` as in :func:`flexmb.io.shell_mesh.rectangle`), clamped at x = 0."""
    X, T = shell_mesh.rectangle(length, width, n_long, n_wide, pattern)
    model = fm.Model(dim=3)
    nodes = model.add_nodes(X)
    model.add_shell(nodes[T], E=E, nu=nu, thickness=thickness, name="strip")
    root = shell_mesh.nodes_at(X, x=0.0)
    tip = shell_mesh.nodes_at(X, x=length)
    for node in root:
        model.fix(int(node))
    return Strip(model, root, tip)


def cylinder_octant(radius: float, half_length: float, n_circ: int, n_axial: int,
                    pattern: str = "right") -> tuple[np.ndarray, np.ndarray]:
    """One eighth of a cylinder about the x axis: x in [0, half_length], theta in [0, pi/2];
    node (x, theta) at (x, R cos theta, R sin theta), so theta = 0 is the generator in the
    plane z = 0 and theta = pi/2 the one in the plane y = 0. Returns (coordinates, triangles)
    with n_circ x n_axial cells (see :func:`flexmb.io.shell_mesh.cylinder`)."""
    return shell_mesh.cylinder(radius, half_length, 0.5 * np.pi, n_circ, n_axial, pattern, axis="x")


def fix_symmetry(model: fm.Model, nodes: Sequence[int], normal: str) -> None:
    """Conditions of a plane of symmetry normal to the global axis ``normal`` ("x", "y", "z") on
    ``nodes``: no translation along the normal, no rotation about the in-plane axes. The
    rotation DOFs of a shell node are the components of its rotation vector in global axes, so
    a node whose in-plane components stay zero turns about the normal only."""
    for node in nodes:
        model.fix(int(node), list(SYMMETRY_DOFS[normal]))


def octant_model(radius: float, half_length: float, n_circ: int, n_axial: int, pattern: str, E: float,
                 nu: float, thickness: float) -> tuple[fm.Model, np.ndarray]:
    """The shell model of a cylinder octant (:func:`cylinder_octant`, group ``"cylinder"``) with its
    three planes of symmetry held (:func:`fix_symmetry`: the middle section x = 0 and the planes
    z = 0 and y = 0); returns the model and the node coordinates. The end x = half_length is left
    to the case."""
    X, T = cylinder_octant(radius, half_length, n_circ, n_axial, pattern)
    model = fm.Model(dim=3)
    nodes = model.add_nodes(X)
    model.add_shell(nodes[T], E=E, nu=nu, thickness=thickness, name="cylinder")
    for normal, at in (("x", {"x": 0.0}), ("z", {"z": 0.0}), ("y", {"y": 0.0})):
        fix_symmetry(model, shell_mesh.nodes_at(X, **at), normal)
    return model, X


def edge_weights(coordinates: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """(n,) shares (sum 1) of a load spread uniformly along the straight edge through ``nodes``
    (given in order along the edge): each node carries half of each segment it ends
    (the consistent load of linear edge interpolation)."""
    X = np.asarray(coordinates)[np.asarray(nodes)]                    # (n, 3)
    segment = np.linalg.norm(np.diff(X, axis=0), axis=1)              # (n - 1,)
    weights = np.zeros(len(X))
    weights[:-1] += 0.5 * segment
    weights[1:] += 0.5 * segment
    return weights / segment.sum()


def node_at(coordinates: np.ndarray, point: Sequence[float], name: str) -> int:
    """The node at ``point`` (to 1e-9 of the mesh size); ValueError naming ``name`` if none is."""
    X = np.asarray(coordinates, dtype=float)
    distance = np.linalg.norm(X - np.asarray(point, dtype=float), axis=1)
    k = int(np.argmin(distance))
    if distance[k] > 1e-9 * max(float(np.ptp(X, axis=0).max()), 1.0):
        raise ValueError(f"{name}: no node at {list(point)} (nearest is node {k} at {X[k].tolist()})")
    return k


def response_at_levels(load_factors: np.ndarray, values: np.ndarray, levels: Sequence[float]) -> np.ndarray:
    """Values (n_levels, n_values) at each load level as a load-controlled test meets them.

    ``load_factors`` (n_points,) and ``values`` (n_points, n_values) follow an arc-length path
    from the unloaded state (not included). Under load control the structure follows the path
    until the load first exceeds a level; past a limit point it snaps to the branch where the
    load rises beyond the limit again. So the response at a level is taken where the path first
    crosses it upwards: linearly interpolated in the load factor between the two path points
    around that crossing (the unloaded state, 0 at lam = 0, comes before the first point). NaN
    where the path never reaches a level.
    """
    lam = np.concatenate([[0.0], np.asarray(load_factors, dtype=float)])               # (n + 1,)
    v = np.vstack([np.zeros((1, np.shape(values)[1])), np.asarray(values, dtype=float)])  # (n + 1, m)
    out = np.full((len(levels), v.shape[1]), np.nan)
    for i, level in enumerate(levels):
        above = np.flatnonzero(lam[1:] >= level)
        if above.size == 0:
            continue
        k = int(above[0]) + 1                                          # first point at or past the level
        s = (level - lam[k - 1]) / (lam[k] - lam[k - 1])
        out[i] = v[k - 1] + s * (v[k] - v[k - 1])
    return out


def path_figure(title: str, load_factors: np.ndarray, curves: dict[str, np.ndarray],
                reference_levels: np.ndarray, reference: dict[str, np.ndarray], checked_levels: Sequence[float],
                xlabel: str = "displacement", ylabel: str = "P / P_max"):
    """Load factor against each displacement ``curves[name]`` (n_points,) along the path, with the
    tabulated ``reference[name]`` (n_table,) at ``reference_levels`` as markers; the checked
    levels are drawn filled."""
    from flexmb.viz.plots import panels

    fig, (ax,) = panels(1, title, width=6.5, height=4.5)
    lam = np.concatenate([[0.0], load_factors])
    checked = np.isin(np.round(reference_levels, 6), np.round(np.asarray(checked_levels), 6))
    for name, curve in curves.items():
        line, = ax.plot(np.concatenate([[0.0], curve]), lam, "-", lw=1.2, label=f"{name} flexmb")
        ref = reference[name]
        ax.plot(ref[~checked], reference_levels[~checked], "o", ms=4, mfc="none", color=line.get_color())
        ax.plot(ref[checked], reference_levels[checked], "o", ms=6, color=line.get_color(),
                label=f"{name} reference (filled: checked)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def snap_through_study(case: str, asm: fm.Assembly, points: dict[str, tuple[int, str, float]], increment: float,
                       table: np.ndarray, checked_levels: Sequence[float], tolerance: float, source: str,
                       title: str, limit_point: bool = True, n_steps: int = 400,
                       wider: dict[tuple[float, str], float] | None = None) -> CaseReport:
    """Trace a proportionally loaded model by arc length and compare with a table.

    ``points`` names the reported displacements: name -> (node, DOF, sign), the sign making
    them read as the table does; ``table`` (n_levels, 1 + n_points) holds the load factor and
    the reference values of the points in the order of ``points``. The path is traced until the
    load factor passes the highest checked level; each value at a checked level (first upward
    crossing, :func:`response_at_levels`) is checked within ``tolerance`` relative, or within
    ``wider[(level, name)]`` where a case documents why its target cannot be met there. With
    ``limit_point`` the path must pass at least one limit point (a maximum of the load factor)
    before the highest level. The figure shows the paths against the whole table.
    """
    top = max(checked_levels)
    path = fm.arc_length(asm, increment, n_steps=n_steps, max_load_factor=top)
    lams = np.array(path.load_factors)                                             # (n_points,)
    index = [asm.dofs.index(node, dof) for node, dof, _ in points.values()]
    sign = np.array([s for _, _, s in points.values()])
    values = np.array([u[index] for u in path.u]) * sign                          # (n_points, n_names)
    at_levels = response_at_levels(lams, values, checked_levels)
    names = list(points)

    report = CaseReport(case, n_dof=asm.n_dof, n_steps=len(lams))
    errors = []
    for i, level in enumerate(checked_levels):
        row = table[np.isclose(table[:, 0], level)][0]
        for j, name in enumerate(names):
            rtol = (wider or {}).get((level, name), tolerance)
            check = report.add(Check.close(f"P/P_max={level}: {name}", at_levels[i, j], row[1 + j], rtol, source))
            errors.append(check.relative_error)
    maxima = np.flatnonzero((lams[1:-1] > lams[:-2]) & (lams[1:-1] >= lams[2:])) + 1   # limit points on the path
    if limit_point:
        report.add(Check.at_least(f"limit points passed before P/P_max={top}", maxima.size, 1,
                                  f"{source}: snap-through"))
    report.info.update({
        "arc_length": increment,
        "largest_relative_error": float(np.nanmax(errors)),
        "limit_load_factors": lams[maxima].tolist(),
        "reached_load_factor": float(lams[-1]),
        "corrector_iterations": [log.iterations for log in path.newton_logs],
        "cutbacks": path.cutbacks,
    })
    shown = table[:, 0] <= top + 1e-12
    report.figure = path_figure(title, lams, dict(zip(names, values.T)), table[shown, 0],
                                dict(zip(names, table[shown, 1:].T)), checked_levels)
    return report

"""Roll-up of a cantilever into a full circle by an end moment, with the spatial beam (Beam3D).

The 3D counterpart of ``roll-up-2d``: a straight cantilever of length L, clamped at its root, is
loaded by an end moment M = lam 2 pi EI / L about one principal axis of its section. Exact
solution (inextensible Euler-Bernoulli elastica): a circular arc of radius EI/M in the plane
normal to the moment; at lam = 1 the beam closes into a full circle, the tip returns to the root
and its rotation is 2 pi (the identity). To exercise the frame handling, the beam lies along a
skew direction with its section axes not aligned with the global axes, and the section has
EI_y = 1e3 N m^2, EI_z = 3e3 N m^2; the run is repeated for bending about y and about z.

Checked with 20 elements (load control, the second-order strains on): at lam = 1 the tip is
within 1e-3 L of the root (the issue's criterion) and the tip rotation matrix is the identity;
at lam = 1/4, 1/2, 3/4 the tip lies within 1e-5 L of the exact arc's tip (the second-order
strains make the chord polygon inscribed in the exact circle); the deformation
stays in the bending plane.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.rotations import exp_map
from flexmb.validation import CaseReport, Check, print_report

CASE = "roll-up-3d"
TITLE = "Cantilever rolled up into a circle by an end moment, about each principal axis (Beam3D)"
SOURCE = "exact circular arc, rho = EI/M"

LENGTH = 1.0                     # m
EI_Y, EI_Z = 1.0e3, 3.0e3        # N m^2
GJ = 8.0e2                       # N m^2
EA = 1.0e7                       # N
N_ELEMENTS = 20
CHECK_LEVELS = (0.25, 0.5, 0.75)
AXIS = np.array([2.0, 1.0, 2.0]) / 3.0               # beam direction (unit)
Y_HINT = np.array([-1.0, 2.0, 0.0]) / np.sqrt(5.0)   # section y axis (normal to AXIS)


def frame() -> np.ndarray:
    """Section frame E (3, 3): columns e_x (beam axis), e_y, e_z."""
    return np.column_stack([AXIS, Y_HINT, np.cross(AXIS, Y_HINT)])


def build(bending_axis: str, n_elements: int = N_ELEMENTS) -> tuple[fm.Assembly, int]:
    """Cantilever bent about the section's ``"y"`` or ``"z"`` axis; returns the assembly and tip node."""
    model = fm.Model(dim=3)
    s = np.linspace(0.0, LENGTH, n_elements + 1)
    nodes = model.add_nodes(s[:, None] * AXIS[None, :])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=EA, GJ=GJ, EI_y=EI_Y, EI_z=EI_Z, y_axis=Y_HINT)
    model.fix(nodes[0])
    EI = EI_Y if bending_axis == "y" else EI_Z
    moment = 2.0 * np.pi * EI / LENGTH * frame()[:, 1 if bending_axis == "y" else 2]
    for k, dof in enumerate(("rx", "ry", "rz")):
        model.add_load(nodes[-1], dof, float(moment[k]))            # dead moment, scaled by lam
    return fm.Assembly(model), int(nodes[-1])


def exact_tip(lam: float, bending_axis: str) -> np.ndarray:
    """Exact tip position (3,) at load factor lam > 0."""
    E = frame()
    phi = 2.0 * np.pi * lam                                         # L / rho
    rho = LENGTH / phi
    # a positive moment about e_y turns e_x towards -e_z; about e_z towards +e_y
    normal = -E[:, 2] if bending_axis == "y" else E[:, 1]
    return rho * np.sin(phi) * E[:, 0] + rho * (1.0 - np.cos(phi)) * normal


def run(quick: bool = False) -> CaseReport:
    n_inc = 20 if quick else 40
    report = CaseReport(CASE)
    paths = {}
    for axis in ("y", "z"):
        asm, tip = build(axis)
        path = fm.load_control(asm, n_inc)
        lams = np.array(path.load_factors)
        ix = asm.dofs.index(tip, "ux")
        tip_x = np.array([LENGTH * AXIS + u[ix:ix + 3] for u in path.u])      # (n_steps, 3)
        paths[axis] = (asm, path, lams)
        for lam in CHECK_LEVELS:
            k = int(np.argmin(np.abs(lams - lam)))
            err = np.linalg.norm(tip_x[k] - exact_tip(lam, axis)) / LENGTH
            report.add(Check.at_most(f"about {axis}, lam={lam}: |tip - exact arc tip| / L", err, 1e-5, SOURCE))
        report.add(Check.at_most(f"about {axis}, lam=1: |tip - root| / L", np.linalg.norm(tip_x[-1]) / LENGTH,
                                 1e-3, "exact: closed circle"))
        R_tip = exp_map(path.u[-1][ix + 3:ix + 6])
        report.add(Check.at_most(f"about {axis}, lam=1: |R_tip - I| (rotation 2 pi)",
                                 np.abs(R_tip - np.eye(3)).max(), 1e-6, "exact: theta = M L / EI = 2 pi"))
        out_of_plane = frame()[:, 1 if axis == "y" else 2]                      # the moment axis
        x_all = np.array([asm.positions(u) for u in path.u])
        report.add(Check.at_most(f"about {axis}: largest out-of-plane displacement / L",
                                 np.abs(x_all @ out_of_plane).max() / LENGTH, 1e-9, "exact: planar bending"))
        report.info[f"newton_iterations_{axis}"] = [log.iterations for log in path.newton_logs]
        report.info[f"cutbacks_{axis}"] = path.cutbacks
        report.n_dof = asm.n_dof
        report.n_steps = len(lams)
    report.figure = _figure(paths)
    return report


def _figure(paths: dict):
    from flexmb.viz.plots import panels

    fig, axes = panels(2, f"3D roll-up, {N_ELEMENTS} Beam3D elements, beam along {np.round(AXIS, 3)}")
    E = frame()
    for ax, axis in zip(axes, ("y", "z")):
        asm, path, lams = paths[axis]
        normal = -E[:, 2] if axis == "y" else E[:, 1]
        for lam in CHECK_LEVELS + (1.0,):
            k = int(np.argmin(np.abs(lams - lam)))
            x = asm.positions(path.u[k])
            line, = ax.plot(x @ E[:, 0], x @ normal, "o-", ms=3, label=f"lam = {lam}")
            s = np.linspace(0.0, LENGTH, 200)
            rho = LENGTH / (2.0 * np.pi * lam)
            ax.plot(rho * np.sin(s / rho), rho * (1.0 - np.cos(s / rho)), "--", color=line.get_color(), lw=1)
        ax.set_aspect("equal")
        ax.set_xlabel("along the beam axis (m)")
        ax.set_ylabel("in the bending plane (m)")
        ax.set_title(f"moment about the section {axis} axis", fontsize=10)
        ax.legend(fontsize=8, title="flexmb (dots), exact (dashed)")
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()

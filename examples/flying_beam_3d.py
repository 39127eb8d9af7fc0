"""A free-flying 3D beam that spins, is struck, and tumbles: an animation and its invariants
=========================================================================================

A steel strip (L = 1 m, 40 mm x 10 mm, E = 210 GPa, G = 81 GPa, rho = 7800 kg/m^3), 20 Beam3D
elements, starts as a rigid body moving at V = (1, 0.5, 0) m/s and spinning at W = (4, 0, 6)
rad/s. During the first bending period T1 (18.75 ms) an end force along the global z axis,
F(t) = F0 sin^2(pi t / T1) with F0 = 200 N, sets it vibrating. Afterwards it flies free: the
energy-conserving mid-point scheme keeps total energy and angular momentum constant (printed),
while the strip bends, twists and turns.

Writes, in the output folder: ``flying_beam.h5`` (result file), ``flying_beam.png`` (the last
step coloured by the weak-axis bending moment My1) and ``flying_beam.gif`` (the animation).
The same pictures come from the command line:

    python examples/flying_beam_3d.py [--quick] [--out DIR]
    flexmb render example-output/flying_beam.h5 --color My1 --out flying_beam.png
    flexmb render example-output/flying_beam.h5 --color My1 --out flying_beam.gif --every 2
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import flexmb as fm

LENGTH = 1.0                        # m
WIDTH, THICKNESS = 0.04, 0.01       # m, along the section's y and z axes
RHO, E, G = 7800.0, 2.1e11, 8.1e10  # kg/m^3, Pa, Pa
N_ELEMENTS = 20
V0 = np.array([1.0, 0.5, 0.0])      # m/s
W0 = np.array([4.0, 0.0, 6.0])      # rad/s
F0 = 200.0                          # N
AREA = WIDTH * THICKNESS
I_Y, I_Z = WIDTH * THICKNESS**3 / 12.0, THICKNESS * WIDTH**3 / 12.0
J_T = WIDTH * THICKNESS**3 / 3.0 * (1.0 - 0.63 * THICKNESS / WIDTH)
T1 = 2.0 * np.pi / (4.7300**2 * np.sqrt(E * I_Y / (RHO * AREA * LENGTH**4)))   # s, free-free bending


def build() -> tuple[fm.Assembly, np.ndarray]:
    """The strip along x with its end load; returns the assembly and the rigid initial velocity."""
    model = fm.Model(dim=3)
    x = np.linspace(0.0, LENGTH, N_ELEMENTS + 1)
    nodes = model.add_nodes(np.c_[x, np.zeros_like(x), np.zeros_like(x)])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=E * AREA, GJ=G * J_T, EI_y=E * I_Y, EI_z=E * I_Z,
                     rho_A=RHO * AREA, rho_I=RHO * np.array([I_Y + I_Z, I_Y, I_Z]), y_axis=(0.0, 1.0, 0.0),
                     mass="consistent", name="strip").set_section_shape("box", WIDTH, THICKNESS)
    model.add_load(nodes[-1], "uz", lambda t: F0 * np.sin(np.pi * t / T1) ** 2 if t < T1 else 0.0)
    asm = fm.Assembly(model)
    v0 = np.zeros(asm.n_dof)
    centre = model.coordinates.mean(axis=0)
    v0[asm.dofs.translations()] = V0 + np.cross(W0, model.coordinates - centre)
    v0[asm.rotation_dofs] = W0
    return asm, v0


def main(quick: bool = False, out_dir: str | Path = "example-output") -> dict[str, float]:
    """Run and write the files; returns the energy and angular-momentum errors of the free flight."""
    from flexmb.viz import scene

    out = Path(out_dir)
    asm, v0 = build()
    periods = 3 if quick else 24
    # overwrite=True: the example re-writes its own output file on every run
    history = fm.integrate(asm, T1 / 10, periods * T1, v0=v0, save_to=out / "flying_beam.h5", overwrite=True)
    free = np.array(history.t) > T1                     # after the load
    E = history.total[free]
    L = np.array(history.angular_momentum)[free]
    errors = {"energy_error": float(np.abs(E - E[0]).max() / history.kinetic[0]),
              "momentum_error": float(np.linalg.norm(L - L[0], axis=1).max() / np.linalg.norm(L[0]))}
    print(f"free flight over {periods - 1} T1: |E - E0| / K0 = {errors['energy_error']:.1e}, "
          f"|L - L0| / |L0| = {errors['momentum_error']:.1e}")
    scene.render(history, out / "flying_beam.png", color="My1", window_size=(1200, 800))
    scene.animate(history, out / "flying_beam.gif", every=1 if quick else 2, fps=15, color="My1",
                  window_size=(640, 480))
    return errors


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (as in the tests)")
    parser.add_argument("--out", default="example-output", help="output folder (default: %(default)s)")
    args = parser.parse_args()
    print(main(args.quick, args.out))

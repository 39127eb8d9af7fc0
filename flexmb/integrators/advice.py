"""What a failed time step says: the likely causes the run can see, and flexmb's remedies.

:func:`diagnose` is called by :func:`~flexmb.integrators.time_stepping.integrate` when a step fails
(Newton after every cut-back, a branch change, or an error-controlled step below dt_min). It looks
at three causes, each with the model item it concerns:

* an inconsistent start: line elements (bars, beams) whose ends separate or approach along their
  chord at t0. Such a start puts energy into the axial modes (the least-kinetic-energy start of
  joints that stretch a flexible coupler); the force amplitude it excites is about
  ``|dv . e| sqrt(EA rho_A) / 2`` (N), the impedance of the bar times the relative axial speed;
* undamped modes above 1 / dt: the highest axial frequency of each line group,
  ``omega_max = 2 sqrt(EA / rho_A) / l_min`` (rad/s, the highest mode of a free bar element),
  with omega_max dt > 2 in a scheme without numerical dissipation and no damping on the group;
* a drive too fast for the step: a driven joint or prescribed rotation turning by more than
  FAST_DRIVE rad per step, or a node of the model turning that fast at the last complete state.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from flexmb.assembly import Assembly
from flexmb.elements.base import ElementGroup
from flexmb.integrators.schemes import State

#: schemes without numerical dissipation: they keep the energy of unresolved modes
UNDAMPED_SCHEMES = ("mid-point", "composed-mid-point", "newmark")
#: omega_max dt above this: the mode is not resolved by the step
UNRESOLVED = 2.0
#: relative axial speed at t0, as a fraction of the start's speed scale, above which the start is inconsistent
AXIAL_START = 1e-6
#: rotation per step (rad) above which a drive is too fast for the step
FAST_DRIVE = 0.3

RIGID_START = ("start from a consistent state with rigid-body velocities of the flexible parts: "
               "u0, v0 = fm.consistent_initial_state(asm) (rigid start)")
DAMPING = ("damp the modes above 1 / dt: Rayleigh stiffness damping (beta) on the group, or "
           "scheme='generalized-alpha' / 'energy-decaying' with rho_inf < 1")
ADAPTIVE = "let flexmb choose the step: integrate(asm, t_end=..., dt=None, rtol=1e-3)"


def diagnose(asm: Assembly, scheme: str, start: State, state: State, dt: float) -> str:
    """Text naming the likely causes of a failed step of dt (s) from ``state`` in a run that began
    at ``start``, each with its remedy, and the remedies flexmb offers."""
    causes = [*_start_causes(asm, start), *_frequency_causes(asm, scheme, dt), *_drive_causes(asm, state, dt)]
    lines = ["likely causes the run can see:" if causes else "no likely cause found in the start, the element "
             "frequencies or the drives; the motion needs a smaller step here"]
    lines += [f"  - {c}" for c in causes]
    lines.append(f"remedies: reduce dt; {ADAPTIVE}; {RIGID_START}; {DAMPING}")
    return "\n".join(lines)


def _line_groups(asm: Assembly) -> Iterator[tuple[ElementGroup, np.ndarray]]:
    """(group, reference lengths (n_el,), m) of the bar and beam groups that have mass (EA, rho_A > 0)."""
    X = asm.model.coordinates
    for g in asm.groups:
        if getattr(g, "EA", None) is None or getattr(g, "rho_A", None) is None or g.connectivity.shape[1] != 2:
            continue
        if not np.any(g.rho_A > 0.0):
            continue                                    # massless bars carry no axial vibration
        yield g, np.linalg.norm(X[g.connectivity[:, 1]] - X[g.connectivity[:, 0]], axis=1)


def _start_causes(asm: Assembly, start: State) -> list[str]:
    """Line elements stretched or compressed at a rate at t0."""
    tr = asm.dofs.translations()                                           # (n_nodes, dim)
    speed = float(np.abs(start.v[tr.ravel()]).max(initial=0.0)) or 1.0
    out = []
    for g, _ in _line_groups(asm):
        x = asm.model.coordinates + start.u[tr]                            # (n_nodes, dim)
        a, b = g.connectivity[:, 0], g.connectivity[:, 1]
        chord = x[b] - x[a]
        e = chord / np.linalg.norm(chord, axis=1)[:, None]
        rate = np.abs(np.einsum("ed,ed->e", start.v[tr[b]] - start.v[tr[a]], e))   # (n_el,), m/s
        rate = np.where(g.rho_A > 0.0, rate, 0.0)                          # massless elements excite nothing
        k = int(np.argmax(rate))
        if rate[k] > AXIAL_START * speed:
            force = rate[k] * np.sqrt(g.EA[k] * g.rho_A[k]) / 2.0
            out.append(f"inconsistent start: element {k} of group {g.name!r} stretches at {rate[k]:.3g} m/s at "
                       f"t0 (nodes {a[k]}-{b[k]}), which excites its axial modes with forces of about {force:.3g} N; "
                       + RIGID_START)
    return out


def _frequency_causes(asm: Assembly, scheme: str, dt: float) -> list[str]:
    """Undamped line groups whose highest axial frequency the step does not resolve."""
    if scheme not in UNDAMPED_SCHEMES:
        return []
    out = []
    for g, length in _line_groups(asm):
        if g.damped:
            continue
        # massless elements have no axial vibration
        omega = 2.0 * np.sqrt(g.EA / np.where(g.rho_A > 0.0, g.rho_A, np.inf)) / length   # (n_el,), rad/s
        k = int(np.argmax(omega))
        if omega[k] * dt > UNRESOLVED:
            out.append(f"undamped high-frequency axial modes: group {g.name!r} reaches {omega[k]:.3g} rad/s "
                       f"(element {k}), omega dt = {omega[k] * dt:.3g} at dt = {dt:.3g} s in the {scheme} scheme, "
                       f"which keeps their energy; {DAMPING}")
    return out


def _drive_causes(asm: Assembly, state: State, dt: float, h: float = 1e-6) -> list[str]:
    """Revolute drives (their angle's rate by a central difference of step h, s), prescribed rotations
    and node rotations turning more than FAST_DRIVE rad per step of dt (s)."""
    out = []
    t = state.t
    cs = asm.constraints
    for joint in (cs.joints if cs is not None else []):
        if joint.drive is None or joint.kind != "revolute":
            continue                                    # a prismatic drive sets a length, not an angle
        rate = abs(joint.drive(t + h) - joint.drive(t - h)) / (2.0 * h)
        if rate * dt > FAST_DRIVE:
            out.append(f"drive too fast for the step: joint {joint.name!r} turns {rate * dt:.3g} rad per step "
                       f"({rate:.3g} rad/s at t = {t:.6g} s, dt = {dt:.3g} s); reduce dt or {ADAPTIVE}")
    rot = np.setdiff1d(np.arange(asm.n_dof), asm.dofs.translations().ravel())
    presc = np.intersect1d(asm.dofs.prescribed, rot)
    if presc.size:
        rates = np.zeros(asm.n_dof)
        rates[asm.dofs.prescribed] = asm.prescribed_velocities(t)
        k = int(presc[np.argmax(np.abs(rates[presc]))])
        if abs(rates[k]) * dt > FAST_DRIVE:
            out.append(f"drive too fast for the step: prescribed {asm.dofs.label(k)} turns {abs(rates[k]) * dt:.3g} "
                       f"rad per step ({abs(rates[k]):.3g} rad/s at t = {t:.6g} s); reduce dt or {ADAPTIVE}")
    free_rot = np.intersect1d(asm.dofs.free, rot)
    if not out and free_rot.size:
        k = int(free_rot[np.argmax(np.abs(state.v[free_rot]))])
        if abs(state.v[k]) * dt > FAST_DRIVE:
            out.append(f"fast rotation: {asm.dofs.label(k)} turns {abs(state.v[k]) * dt:.3g} rad per step at "
                       f"t = {t:.6g} s; reduce dt or {ADAPTIVE}")
    return out

"""What damps a model, in words, for the model layout of results (``flexmb info`` lists it).

:func:`damping_notes` describes every element group that exerts velocity-dependent forces:
Rayleigh damping (alpha M + beta K), dampers (the ``c`` of springs-dampers, joint spring-dampers,
bushings), modal damping of modal bodies, and other damped groups (user forces of the velocities).
"""
from __future__ import annotations

from typing import Any

import numpy as np


def damping_notes(model: Any) -> dict[str, str]:
    """Group name -> description of its damping, for the damped groups of ``model``
    (:class:`~flexmb.model.Model`), in group order; {} for an undamped model."""
    notes = {}
    for g in model.groups:
        parts = []
        if g.rayleigh is not None:
            parts.append(f"Rayleigh alpha = {g.rayleigh.alpha:.4g} 1/s, beta = {g.rayleigh.beta:.4g} s")
        modal = getattr(g, "modal_damping", None)
        if modal is not None:                                  # 2 zeta_k omega_k, 1/s
            ratios = np.asarray(modal) / (2.0 * np.asarray(g.data.omega))
            parts.append("modal damping ratios " + ", ".join(f"{z:.4g}" for z in np.ravel(ratios)))
        c = np.ravel(getattr(g, "c", np.zeros(0)))
        if np.any(c):
            span = f"{c[c != 0].min():.4g}" + (f" .. {c[c != 0].max():.4g}" if np.ptp(c[c != 0]) else "")
            parts.append(f"dampers c = {span} on {np.count_nonzero(c)} of {g.n_elements} element(s)")
        if g.damped and not parts:
            parts.append("velocity-dependent forces")
        if parts:
            notes[g.name] = f"{type(g).__name__}: " + "; ".join(parts)
    return notes

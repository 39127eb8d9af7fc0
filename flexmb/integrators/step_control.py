"""Error-controlled time steps: a local error estimate of the step and the controller that sizes the next.

``integrate(model, t_end=..., dt=None, rtol=...)`` (:func:`flexmb.integrators.time_stepping.integrate`)
takes steps whose estimated local error, relative to the motion of the step, stays below ``rtol``.

Error estimate (step doubling, Richardson; Hairer, Norsett & Wanner 1993, sec. II.4): each pair of
steps h, h is also taken as one step of 2h, with the scheme itself. For a scheme of order p the
local errors are C (2h)^(p+1) and 2 C h^(p+1), so the error of the two steps of h, which the run
keeps, is

    e_i = max(|u_2h - u_h,h|_i, 2h |v_2h - v_h,h|_i) / (2^p - 1)                           (1)

per free DOF i (the velocity difference times the pair's length weighs an error in velocity as
the displacement it makes over the pair). It works for every scheme (mid-point p = 2, composed
mid-point p = 4, Newmark and generalized-alpha p = 2, the energy-decaying schemes taken as p = 1,
their order in the strain rate), and it measures the error the scheme makes, not a bound from the
motion's derivatives: motion that a drive or a prescribed DOF fixes costs nothing. (Milne's
estimate, dt^3 / 12 times the third derivative from the change of the steps' mean accelerations,
costs no solve, but on the spin-up it was governed by the rigid rotation that the prescribed hub
fixes, and the error it left did not fall steadily with rtol.) It costs three solves per pair.

Error norm: the largest scaled error over the free DOFs,

    err = max_i w_i e_i / (rtol (MOTION_FLOOR L + max_j w_j |u_h,h - u_n|_j)),                (2)

w_i = 1 at translations and L (the model's characteristic length, m) at rotations and the other
DOFs, so that a rotation of 1 rad weighs as a translation of L. Relative to the pair's own motion,
err is the relative error of the step: for a body turning at omega, the mid-point scheme's
(omega h)^2 / 12 per step, which sets the error of a deflection that the rotation drives (the
spin-up, ``validation/spin_up_adaptive.py``). MOTION_FLOOR L keeps a model that hardly moves from
being held to round-off. The scale is absolute, not relative to each |u_i|: an axial mode far above
1 / dt that carries round-off energy (amplitude ~1e-16 L) changes the two paths by about that
amplitude, far below the scale, so it cannot drive the step to zero; a mode carrying real energy
is resolved, as it must be for an error below rtol (or damped: Rayleigh damping, a dissipative
scheme). The estimate is local: the errors of an oscillation accumulate in its phase (an
oscillator over 3 periods, mid-point: 4.9 % of the amplitude at rtol 1e-3, 1.1 % at 1e-4).

Against fixed steps (mid-point, measured 2026-11-28/29): the run takes fewer steps than a fixed
run at the smallest step it needed (spin-up: 1076 steps against 20 s / dt_min = 2318 at rtol 1e-3,
3146 against 4840 at 1e-4; the four-bar below: 5122 against 8359 at 1e-4, 20220 against 29700 at
1e-5), but per step it is as accurate as a fixed step, not more, on the two flexible models of the
issue, so the best fixed step, if known, takes about as many:

- Simo's spin-up (``validation/spin_up_adaptive.py``, 16 elements, 20 s): rtol 1e-3 takes 1076 steps
  (extreme tip deflection 0.36 % off; largest deflection error over the run 5.5e-3 of the largest
  deflection), rtol 1e-4 3146 steps (0.007 %; 1.9e-4). Fixed steps: 320 (0.82 %; 2.2e-2), 400
  (0.52 %; 1.4e-2), 800 (0.12 %; 3.4e-3), 1000 (0.076 %; 2.2e-3), 3146 (1.9e-4). The extreme
  (t = 6.8 s) needs fewer fixed steps because nothing after it is checked; the run's errors after it
  are real: steps of 0.05 s (0.1 s) after t = 7 s, with 0.025 s before, leave 2.5e-2 (1.2e-1) of the
  largest deflection over 7-15 s, where the deflection falls to 3e-3 m, against 3.4e-3 with 0.025 s.
- A four-bar with a flexible coupler (8 Beam2D, crank at 1 rev/s, rigid start, 0.5 s; error of the
  coupler's mid-span deflection, largest 4.4e-5 m, against a Richardson-extrapolated fixed-step
  reference): rtol 1e-4: 5122 steps, 5.1 % of the largest deflection; 1e-5: 20220 steps, 0.81 %.
  Fixed: 5000 steps 4.7 %, 10000 1.6 %, 12500 1.2 %, 16000 0.76 %, 20000 0.80 % (below 1 % the
  errors stop falling as dt^2: the reference is good to a few 0.1 %). The coupler's bending
  vibration lasts the whole run, so the steps stay nearly uniform. (2) weighs the error against
  the motion, of which the deflection is a small part (4.4e-5 m against the crank's radius of
  0.1 m): rtol 1e-3 (772 steps) leaves an error as large as the deflection.

Norms tried on the same runs and not taken: (a) the deformation energy of the difference (|du|_K
over the largest strain energy): spin-up, rtol 1e-3: 5966 steps, extreme 0.028 % off; (b) a split
of the difference per element into a rigid motion and the deformation, the latter relative to the
largest element deformation (so that rigid motion a drive fixes costs nothing): spin-up, rtol 1e-3:
3514 steps, 2.2e-4 over the run (as many fixed steps: 1.4e-4); four-bar, rtol 1e-2: 6582
steps, 3.2 %; 1e-3: 21800 steps, 0.79 %. (b) ties rtol more closely to the deflection's error on the
four-bar, but neither is more accurate per step than a fixed step: both still put most steps after
the spin-up's extreme, where the hub-driven deflection's local errors are largest, and (b) leaves
the rigid motion of a free flexible body unchecked.

Controller (Hairer, Norsett & Wanner 1993, sec. II.4): a pair with err > 1 is rejected and
retaken, and the next pair is ``2h (SAFETY / err)^(1/(p+1))``, its change bounded by [MAX_SHRINK,
MAX_GROWTH] and by [dt_min, dt_max].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmb.assembly import Assembly
from flexmb.integrators.schemes import State

#: the next step is this fraction of the step that would just meet rtol
SAFETY = 0.8
#: a step grows by at most this factor ...
MAX_GROWTH = 2.0
#: ... and shrinks by at most this one (and halves at least after a cut-back)
MAX_SHRINK = 0.2
#: order p of each scheme's local error O(dt^(p+1)) in (1); the energy-decaying schemes are first
#: order in the strain rate
ORDER = {"mid-point": 2, "composed-mid-point": 4, "newmark": 2, "generalized-alpha": 2,
         "energy-decaying": 1, "energy-decaying-velocity": 1}
#: default first step, dt_min and dt_max as fractions of the run's span t_end - t0
FIRST_STEP = 1e-3
MIN_STEP = 1e-10
MAX_STEP = 0.1
#: the error scale of a step that hardly moves, as a fraction of the model size L (see (2))
MOTION_FLOOR = 1e-2


@dataclass
class StepControl:
    """Step sizes of an error-controlled run (all in s): ``rtol`` is the tolerance of the error norm
    (2), ``dt_min`` and ``dt_max`` bound the steps, ``order`` is the scheme's p in (1)."""

    rtol: float
    dt_min: float
    dt_max: float
    order: int = 2

    def next_step(self, dt: float, err: float, cut_back: bool = False) -> float:
        """The step after a step of dt (s) with error norm err (accepted or rejected): the step
        that would meet rtol with SAFETY, within [MAX_SHRINK, MAX_GROWTH] dt and [dt_min, dt_max];
        at most dt / 2 after a step that Newton completed only by cut-back."""
        factor = MAX_GROWTH if err == 0.0 else SAFETY * err ** (-1.0 / (self.order + 1))
        factor = min(MAX_GROWTH, max(MAX_SHRINK, factor))
        if cut_back:
            factor = min(factor, 0.5)
        return min(self.dt_max, max(self.dt_min, factor * dt))


def error_norm(asm: Assembly, rtol: float, order: int, start: State, whole: State, halves: State,
               dt: float) -> tuple[float, int]:
    """Error norm (2) of the estimate (1) for a step of dt (s) from ``start``, taken whole and as
    two halves, and the DOF where it is largest."""
    free = asm.dofs.free
    if not free.size:
        return 0.0, 0
    length = asm.model.characteristic_length
    weight = np.full(asm.n_dof, length)
    weight[asm.dofs.translations().ravel()] = 1.0
    weight = weight[free]                                                                  # (n_free,)
    apart = np.maximum(np.abs(whole.u[free] - halves.u[free]), dt * np.abs(whole.v[free] - halves.v[free]))
    motion = float(np.max(weight * np.abs(halves.u[free] - start.u[free])))              # m
    scaled = weight * apart / ((2.0**order - 1.0) * rtol * (MOTION_FLOOR * length + motion))   # (n_free,)
    k = int(np.argmax(scaled))
    return float(scaled[k]), int(free[k])

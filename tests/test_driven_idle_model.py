"""A driven joint moves a model that starts at rest under no force (issue 14 review).

With every force zero the residual's force scale is zero; the constraint rows were weighed
with it, so Newton stopped at iteration 0 and the drive was silently ignored. The idle
model's scale is now the inertia force of moving its size within a step."""
import numpy as np
import pytest

import flexmb as fm


def drive(t: float) -> float:
    return 0.5 * t**2


@pytest.mark.parametrize("scheme", ["mid-point", "newmark"])
@pytest.mark.parametrize("dim", [2, 3])
def test_driven_revolute_turns_a_body_at_rest(dim: int, scheme: str) -> None:
    m = fm.Model(dim=dim)
    position = [1.0, 0.0] + [0.0] * (dim - 2)
    inertia = 0.1 if dim == 2 else [0.1, 0.2, 0.3]
    b = m.add_rigid_body(position, mass=2.0, inertia=inertia)
    extra = {"axis": [0.0, 0.0, 1.0]} if dim == 3 else {}
    m.add_joint("revolute", None, b, at=[0.0] * dim, drive=drive, **extra)
    h = fm.integrate(fm.Assembly(m), 0.01, 1.0, scheme=scheme, progress=False)
    x = h.positions()[-1][b.node]
    angle = np.arctan2(x[1], x[0])
    assert angle == pytest.approx(drive(1.0), abs=1e-8)
    assert min(h.newton_iterations[1:]) >= 1


def test_a_model_at_rest_with_a_constant_drive_stays_at_rest() -> None:
    m = fm.Model(dim=3)
    b = m.add_rigid_body([1.0, 0.0, 0.0], mass=2.0, inertia=[0.1, 0.2, 0.3])
    m.add_joint("revolute", None, b, at=[0.0, 0.0, 0.0], axis=[0.0, 0.0, 1.0], drive=lambda t: 0.0)
    h = fm.integrate(fm.Assembly(m), 0.01, 0.1, progress=False)
    assert np.abs(np.asarray(h.u)).max() == 0.0

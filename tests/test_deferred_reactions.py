"""A recorded step of a run with joints keeps the values of the joints' time functions and computes
the constraint residual and the joint reactions from the stored state when first read, as it does a
modal body's outputs and strain energy (flexmb.results.time_history, ``Deferred``): the values a run
written to a file computes at each step, also when the drive or the modal body's data change after
the run."""
import numpy as np

import flexmb as fm
from flexmb.elements.floating_frame import ModalBody
from flexmb.multibody.constraints import ConstraintSystem
from models import cantilever_body_3d

DT, T_END = 0.01, 3.0       # more steps than the constraints keep values of their time functions for
JOINT_SERIES = ("constraint_residual", "joint_forces", "joint_moments")
#: the hub's angular acceleration / 2 (rad/s^2), in a dict so that a test can change the drive after a run
HUB = {"rate": 0.5}


def hub_angle(t: float) -> float:
    """The hub's angle (rad) at t (s)."""
    return HUB["rate"] * t * t


def spun_blade() -> fm.Assembly:
    """A 3D modal body (3 modes of a 1 m cantilever) on a revolute joint about z at its frame node,
    driven through :func:`hub_angle`, with a rigid body hung from it by a spherical joint (a second
    joint); no weight, so that its steps run in the compiled spatial step loop."""
    m = fm.Model(dim=3)
    body = m.add_modal_body(cantilever_body_3d(4, 3), name="blade")
    frame = int(body.connectivity[0, 0])
    m.add_joint("revolute", None, frame, axis=(0.0, 0.0, 1.0), drive=hub_angle, name="hub")
    tip = m.add_rigid_body([1.2, 0.0, -0.1], 0.1, [2e-4, 2e-4, 3e-4], name="tip")
    m.add_joint("spherical", frame, tip, at=[1.0, 0.0, 0.0], name="tip joint")
    return fm.Assembly(m)


def assert_close(x, y, what: str) -> None:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    scale = np.abs(y).max(initial=0.0) + 1e-300
    assert x.shape == y.shape and np.abs(x - y).max(initial=0.0) <= 1e-13 * scale, what


def test_reactions_and_modal_outputs_are_computed_when_read(monkeypatch):
    calls = {"reactions": 0, "modal": 0}
    reactions, outputs = ConstraintSystem.recorded_reactions, ModalBody.outputs_and_strain_energy

    def counted_reactions(self, *args):
        calls["reactions"] += 1
        return reactions(self, *args)

    def counted_outputs(self, X, u):
        calls["modal"] += 1
        return outputs(self, X, u)
    monkeypatch.setattr(ConstraintSystem, "recorded_reactions", counted_reactions)
    monkeypatch.setattr(ModalBody, "outputs_and_strain_energy", counted_outputs)
    h = fm.integrate(spun_blade(), DT, T_END, progress=False)
    assert calls == {"reactions": 0, "modal": 0}, f"recording evaluated {calls} during the run"
    forces = h.joint_forces                                 # the first read computes every step, once
    assert calls["reactions"] == h.n_steps and forces.shape == (h.n_steps, 2, 3)
    strain = h.strain
    assert calls["modal"] == h.n_steps and strain.max() > 0.0    # the blade bends
    h.joint_moments, h.constraint_residual, h.element("blade", "q1")
    assert calls == {"reactions": h.n_steps, "modal": h.n_steps}  # nothing computed twice


def test_values_read_later_equal_those_written_at_each_step(tmp_path, monkeypatch):
    written = fm.integrate(spun_blade(), DT, T_END, progress=False, save_to=tmp_path / "run.h5")
    asm = spun_blade()
    kept = fm.integrate(asm, DT, T_END, progress=False)
    monkeypatch.setitem(HUB, "rate", 2.0)                 # the drive and the blade's data change after the run
    blade = asm.groups[0]
    assert isinstance(blade, ModalBody)
    blade.data.modal_stiffness *= 3.0
    for joint in ("hub", "tip joint"):
        assert np.abs(kept.joint_reaction(joint)[0]).max() > 1e-2, f"joint {joint!r} carries no load"
    assert kept.constraint_residual.max() < 1e-8           # the joints hold
    for name in ("kinetic", "strain", "angular_momentum") + JOINT_SERIES:
        assert_close(getattr(kept, name), getattr(written, name), name)
    for k in range(1, 4):
        for name in (f"q{k}", f"Q{k}"):
            assert_close(kept.element("blade", name), written.element("blade", name), name)
    loaded = fm.load_result(tmp_path / "run.h5")
    for name in JOINT_SERIES:
        assert_close(getattr(loaded, name), getattr(written, name), name)

"""Buckling and natural modes: :class:`ModeShapes`, one "step" per mode."""
from __future__ import annotations

import numpy as np

from flexmb.checks import methods_keywords_listed
from flexmb.io.records import ModelLayout
from flexmb.results.base import Result


@methods_keywords_listed
class ModeShapes(Result):
    """Buckling or vibration modes as a result, one "step" per mode, for plots and files.

    ``values`` are the modes' values, named by ``meta["what"]``: critical load factors of
    buckling modes (:func:`~flexmb.analysis.buckling.linear_buckling`, "critical load factor") or
    frequencies in Hz of natural modes (:func:`~flexmb.analysis.modes.natural_modes`,
    "frequency (Hz)"); ``u`` the mode shapes (n_dof,) scaled to a largest translation of 1,
    ``reference`` the state the modes are taken about.
    """

    kind = "modes"
    parameter_name = "mode value"
    SERIES = ("values", "u", "reactions")
    #: largest mode translation drawn or exported by default, as a fraction of the model size
    DRAWN_FRACTION = 0.1

    def __init__(self, layout: ModelLayout | None = None, reference: np.ndarray | None = None,
                 what: str = "critical load factor") -> None:
        super().__init__(layout, what=what)
        self.reference = reference
        self.elements = [{} for _ in self.elements]          # a mode has no section forces
        self.sensor_values = {}                                # nor sensor histories

    def drawn_scale(self) -> float:
        """Default size (m) of the largest mode translation in pictures and exported files."""
        return self.DRAWN_FRACTION * self._layout().characteristic_length

    @classmethod
    def from_modes(cls, layout: ModelLayout, values: np.ndarray, modes: np.ndarray,
                   reference: np.ndarray, what: str) -> "ModeShapes":
        """Modes (n, n_dof) with their eigenvalues (n,) about the state ``reference`` (n_dof,)."""
        result = cls(layout, np.asarray(reference, dtype=float), what)
        trans = layout.translations().ravel()
        for value, mode in zip(values, modes):
            size = np.linalg.norm(mode[trans].reshape(-1, layout.dim), axis=1).max(initial=0.0)
            size = size if size > 0 else np.abs(mode).max(initial=1.0)
            result._append({"values": float(value), "u": mode / size, "reactions": np.zeros_like(mode)}, None)
        return result

    def shape_state(self, k: int, scale: float) -> np.ndarray:
        """DOF vector (n_dof,) of the reference state moved by ``scale`` times mode k; spatial
        rotations are composed, ``R = exp(scale hat(phi)) R_ref``."""
        layout = self._layout()
        ref = np.zeros(layout.n_dof) if self.reference is None else self.reference
        u = ref + scale * np.asarray(self.u[k])
        if layout.dim == 3 and layout.rotation_nodes.size:
            from flexmb.rotations import compose

            rot = layout.rotations()
            u[rot] = compose(scale * np.asarray(self.u[k])[rot], ref[rot])
        return u

    def _derived_series(self) -> dict[str, np.ndarray]:
        return {"values": self.parameter}

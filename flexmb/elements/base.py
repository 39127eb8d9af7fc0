"""What every element group offers the assembly and the time integrators.

An element group holds the connectivity and section properties of ``n_el`` elements of one
type. Its kernels are stateless and batched: they take the reference nodal coordinates
``X`` (n_el, n_nodes, dim) and element DOF vectors ``u`` (n_el, ndof_el) and return arrays over
all elements at once. They never see global DOF numbers (only :mod:`flexmb.assembly` does).
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from flexmb.checks import ModelError, float_array


def median(values: np.ndarray) -> float:
    """The median of values (n,), as ``np.median`` gives it (the mean of the two middle values of
    an even count), in a sort: numpy's median costs 20-40 us of every run's start (a drawn section)."""
    ordered = np.sort(np.ravel(values))
    half = ordered.size // 2
    return float(ordered[half] if ordered.size % 2 else 0.5 * (ordered[half - 1] + ordered[half]))


class ElementGroup(ABC):
    """Base class of batched element groups."""

    #: True if the element uses rotational DOFs at its nodes.
    has_rotations: bool = False

    def __init__(self, connectivity: np.ndarray, dim: int, name: str) -> None:
        if not isinstance(name, str):              # results, files and pictures look groups up by name
            raise ModelError(f"element group name must be a string, got {name!r} ({type(name).__name__})")
        try:
            conn = np.asarray(connectivity)
        except ValueError:                                    # ragged nested lists
            raise ModelError(f"element group {name!r}: connectivity must be an integer array of shape "
                             f"(n_el, {self.n_nodes}), got {connectivity!r}") from None
        if conn.size == 0 and conn.ndim < 2:                  # [] or a (0, n_nodes) array typed by hand
            raise ModelError(f"element group {name!r}: connectivity is empty ({connectivity!r}); a group needs at "
                             f"least one element, a row of {self.n_nodes} node indices")
        if conn.ndim == 1:
            conn = conn[None, :]
        if conn.ndim != 2 or conn.shape[1] != self.n_nodes or not np.issubdtype(conn.dtype, np.integer):
            raise ModelError(f"element group {name!r}: connectivity must be an integer array of shape "
                             f"(n_el, {self.n_nodes}) (node indices), got {conn.dtype} {conn.shape}")
        self.connectivity = conn.astype(np.int64)
        self.dim = dim
        self.name = name
        self.section_shape: dict[str, float | str] | None = None

    n_nodes: int = 2
    #: DOFs of each element that belong to no node (a modal body's modal coordinates), numbered by
    #: the DOF map after all nodal DOFs and appended to the element DOF vector after the nodal ones
    n_internal_dofs: int = 0

    @property
    def n_elements(self) -> int:
        return len(self.connectivity)

    @property
    def dofs_per_node(self) -> int:
        return self.dim + ((1 if self.dim == 2 else 3) if self.has_rotations else 0)

    @property
    def ndof(self) -> int:
        """DOFs per element: the nodal ones, then the internal ones."""
        return self.n_nodes * self.dofs_per_node + self.n_internal_dofs

    @staticmethod
    def _broadcast(value: float | np.ndarray, n_el: int, label: str) -> np.ndarray:
        """A float array (n_el,) from a scalar or one value per element, else ModelError."""
        try:
            return np.broadcast_to(float_array(value, label), (n_el,)).copy()
        except ValueError as exc:
            if isinstance(exc, ModelError):
                raise
            raise ModelError(f"{label} must be a scalar or have one value per element "
                             f"({n_el}), got shape {np.shape(value)}") from None

    @staticmethod
    def _per_element(value: float | np.ndarray, n_el: int, what: str, name: str,
                     positive: bool = True, allow_inf: bool = False) -> np.ndarray:
        """A section property (n_el,) from a scalar or one value per element, each finite (or
        +inf with ``allow_inf``) and positive (or non-negative), else ModelError naming the element."""
        label = f"element group {name!r}: {what}"
        arr = ElementGroup._broadcast(value, n_el, label)
        finite = (arr == np.inf) | np.isfinite(arr) if allow_inf else np.isfinite(arr)
        bad = np.flatnonzero(~finite | ((arr <= 0) if positive else (arr < 0)))
        if bad.size:
            sign = "positive" if positive else "non-negative"
            sign += " (or inf)" if allow_inf else " and finite"
            raise ModelError(f"{label} of element {int(bad[0])} is {arr[bad[0]]}, must be {sign}")
        return arr

    # ------------------------------------------------------------ drawing
    def set_section_shape(self, shape: str, width: float | None = None, height: float | None = None,
                          radius: float | None = None) -> "ElementGroup":
        """Cross-section drawn by :mod:`flexmb.viz` (no effect on the mechanics); returns the group.

        ``"box"`` with ``width`` (along the section's y axis) and ``height`` (along z), or
        ``"tube"`` with ``radius``, in m.
        """
        if shape == "box" and width is not None and height is not None and width > 0 and height > 0:
            self.section_shape = {"shape": "box", "width": float(width), "height": float(height)}
        elif shape == "tube" and radius is not None and radius > 0:
            self.section_shape = {"shape": "tube", "radius": float(radius)}
        else:
            raise ModelError(f"element group {self.name!r}: section shape needs 'box' with positive width and height "
                             f"or 'tube' with a positive radius, got {shape!r}, width={width}, "
                             f"height={height}, radius={radius}")
        return self

    def drawn_section(self, X: np.ndarray, length: float) -> dict[str, float | str]:
        """The drawn cross-section: the one set by :meth:`set_section_shape`, else the element's
        default for a model of size ``length`` (m)."""
        return dict(self.section_shape) if self.section_shape else self._default_section(X, length)

    def _default_section(self, X: np.ndarray, length: float) -> dict[str, float | str]:
        return {"shape": "tube", "radius": 0.01 * length}

    # -------------------------------------------------------- outputs
    #: units of the element outputs, by name
    output_units: dict[str, str] = {}

    @abstractmethod
    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Section forces and strains per element, name -> (n_el,), units in ``output_units``."""

    # -------------------------------------------------------- static kernels
    @abstractmethod
    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Internal force q (n_el, ndof_el), N and N m."""

    @abstractmethod
    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Internal force (n_el, ndof_el) and tangent K_t = dq/du (n_el, ndof_el, ndof_el)."""

    def tangent_stiffness(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Tangent stiffness, material plus geometric (n_el, ndof_el, ndof_el).

        For spatial rotations the derivative is with respect to spins (see :mod:`flexmb.rotations`)."""
        return self.force_and_tangent(X, u)[1]

    @abstractmethod
    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Stresses conjugate to the element's generalized strains (n_el, n_s)."""

    @abstractmethod
    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """The part of the tangent at u that is linear in given stresses (n_el, n_s): (n_el, ne, ne).

        With the element's own stresses it is the geometric stiffness; linear buckling uses it
        with the stresses of a reference load.
        """

    @abstractmethod
    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Strain energy (n_el,), J."""

    def outputs_and_strain_energy(self, X: np.ndarray, u: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """:meth:`element_outputs` and :meth:`strain_energy` at once (what a time step records);
        elements whose two come from one section state compute it once."""
        return self.element_outputs(X, u), self.strain_energy(X, u)

    @abstractmethod
    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Co-rotational axial strain (l - l0)/l0 (n_el,)."""

    def configuration_mass(self, X: np.ndarray):
        """Kernels of a configuration-dependent mass (see :mod:`flexmb.elements.hermite_mass2d`),
        or None when all of the element's mass is in :meth:`mass_matrix`."""
        return None

    @abstractmethod
    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        """Constant mass matrix (n_el, ndof_el, ndof_el), kg and kg m^2."""

    # ------------------------------------------------- mid-point kernels
    @abstractmethod
    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """Energy-conserving mid-point internal force (n_el, ndof_el).

        Satisfies ``mid_point_force(X, u0, u1) . (u1 - u0) = Phi(u1) - Phi(u0)`` exactly.
        """

    @abstractmethod
    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        """Mid-point force and its (non-symmetric) derivative with respect to ``u1``."""

    #: whether the group's forces depend on the time (user forces): then it has an attribute ``time``
    #: that :meth:`flexmb.assembly.Assembly.set_time` sets before the kernels are called
    time_dependent: bool = False
    #: whether the group's forces are applied loads that statics scales by the load factor (constant
    #: body loads): then it has an attribute ``load_factor`` that :meth:`Assembly.set_time` sets
    #: (the load factor in statics, 1 otherwise)
    proportional_load: bool = False

    # ---------------------------------------- damping (velocity-dependent forces)
    #: Rayleigh damping of the group (:class:`~flexmb.elements.rayleigh.RayleighDamping`), set by
    #: :meth:`flexmb.model.Model.set_rayleigh_damping`; None: undamped
    rayleigh = None

    @property
    def damped(self) -> bool:
        """Whether the group exerts velocity-dependent (damping) forces: then the schemes call
        :meth:`mid_point_damping` or :meth:`damping_force` and book their work as dissipated."""
        return self.rayleigh is not None

    def mid_point_damping(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, dt: float, tangent: bool
                          ) -> tuple[np.ndarray, np.ndarray | None]:
        """Damping force over a mid-point step from u0 to u1 of length dt (s), (n_el, ndof_el), with
        the velocity (u1 - u0) / dt (the step's increment d / dt at 3D rotations); ``q_d . d`` is the
        energy it dissipates over the step (J, >= 0). With ``tangent`` also dq_d/dd (n_el, ne, ne).
        Element groups: their Rayleigh damping."""
        return self.rayleigh.mid_point_force(self, X, u0, u1, dt, tangent)

    def damping_force(self, X: np.ndarray, u: np.ndarray, v: np.ndarray, dv_du: float, tangent: bool
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        """Damping force at the state (u, v) (n_el, ndof_el) and, with ``tangent``, its derivative
        along a scheme whose velocity moves as dv = dv_du du (n_el, ne, ne)."""
        return self.rayleigh.end_point_force(self, X, u, v, dv_du, tangent)

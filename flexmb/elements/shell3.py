"""Co-rotational flat triangular shell with generalized strains (after Besseling; Meijaard 1993).

Element DOFs ``[x_1 (3), theta_1 (3), x_2 (3), theta_2 (3), x_3 (3), theta_3 (3)]``: nodal
displacements and spins, exactly as the nodes of :class:`~flexmb.elements.beam3d.Beam3D` (nodal
rotation ``R_i = exp(hat(psi_i))``, reference ``R_i = I``), so shells and spatial beams share nodes.

Idea: any linear flat triangle (here the membrane + DKT triangle of
:func:`flexmb.elements.shell_linear.linear_stiffness`, ``K`` (18, 18), null space = the six rigid
modes) becomes a large-rotation element by writing its energy in twelve rotation-invariant
generalized strains ``e``, each a bilinear form of current vectors, as Meijaard and Besseling do
for the beam. Reference frame ``E = [E1, E2, E3]`` and local coordinates from
:func:`~flexmb.elements.shell_linear.local_frames`; current positions ``x_i = X_i + u_i``, edge
vectors ``l_ij = x_j - x_i = L_ij + (u_j - u_i)`` (reference ``L_ij = X_j - X_i``). The twelve
invariants (all zero in the reference configuration):

* membrane metric (3): ``g_k = (l_ij . l_ij - L_ij . L_ij) / 2`` for the edges (1,2), (2,3), (3,1);
  the Green strain of the flat triangle is linear in them;
* bending (6): ``b_ij = n_i . l_ij`` for each node i and both its neighbours j, with the nodal
  normal director ``n_i = R_i E3`` (the tilt of the nodal normal against the edge chord, as the
  beam's ``l . e_z^p``);
* drilling (3): ``c_i = (R_i L_ij) . l_ik - (R_i L_ik) . l_ij`` at each node i with its next and
  previous neighbours j, k: the in-plane rotation of the node against the mean rotation of its
  two edges (linearised ``c_i = 4 A (theta_z,i - omega_i)``; blind to symmetric in-plane strain).
  This replaces the single-edge measure ``m_i . l_ij`` (``m_i = R_i (E3 x L_ij)/|L_ij|``): that one
  picks up ``|L| (1 - cos phi) sin 2 beta / 2`` when an element bends by phi about an axis at an
  angle beta to the edge, which the membrane-sized drilling stiffness turns into spurious
  in-plane forces of relative size ``(L/h)^2 phi^2`` (1 % error in the tip rotation of a strip
  bent to 1 rad with 8 x 1 cells); the two-edge measure is exactly zero for cylindrical bending
  of edges whose projections on the bending direction are equal or opposite and second order
  in phi otherwise.

Evaluation without a round-off floor: each strain is computed as its change from the reference
state, ``g = du . (2 L + du) / 2`` and, per term ``d . l`` of a director ``d = R_i D`` (D = E3, L_ij
or L_ik), ``(R_i - I) D . L + d . du`` with ``du = u_j - u_i`` and ``R_i - I`` summed from its
Rodrigues terms; the reference values ``D . L`` (zero in exact arithmetic) are never formed. Their
round-off is therefore eps times the deformation: zero at rest and under a rigid translation, and
the same wherever the model lies. Edges from absolute positions ``(X_j + u_j) - (X_i + u_i)`` carry
eps |X| whatever the deformation, which for the pinched cylinder (|X| = 300) under P = 1 put a floor
of 4e-5 of the load under the internal force, and 3e-3 with the model moved by 1e4.

Angle map (as Beam3D, so that a uniformly bent element stays accurate at finite rotation):
``eh = |L_ij| asin(b / |l_ij|)`` for b, with the CURRENT edge length ``|l_ij| = sqrt(|L_ij|^2 + 2 g)``
(g the metric strain of that edge), so that ``b / |l_ij|`` is the sine of the angle between the
normal and the chord and a bending stress gives no force along the chord (with ``|L_ij|`` instead,
as first specified, a uniformly bent strip carries a spurious chord force ``~ M theta / L`` that does
not vanish with the mesh: 0.2 % error in the tip rotation at a full circle); ``eh = 4 A asin(c / (4 A))``
for c (A the reference area; ``c = 4 A sin(angle)`` for a nodal rotation about the normal); the
sines clipped below 1 as in Beam3D; ``eh = g`` for the metric. ``Ah = deh/de`` is diagonal plus one
entry per bending strain (its edge's g).

Energy ``Phi = eh . S eh / 2`` with the constant strain stiffness ``S = Z^T K_glob Z`` (n_el, 12, 12):
``B`` (12, 18) is the derivative of e at the reference state with respect to ``[du_i, dtheta_i]``
(global axes, spins), ``Z`` (18, 12) its pseudo-inverse (taken of B made dimensionless with the
element size, :func:`flexmb.compiled.shell3.strain_stiffness`; any right inverse ``B Z = I`` would
do), ``K_glob = T^T K T`` with ``T`` the block diagonal of ``E^T`` (global to local DOFs). Because
``null(B)`` = rigid modes = ``null(K)``, ``B^T S B = K_glob`` exactly: the small-strain tangent at the
reference state IS the linear triangle. ``rank(B) = 12`` is checked for every element.

Internal force ``q = G^T s~`` with ``G = de/dq`` and ``s~ = dPhi/de = Ah^T S eh``; tangent
``K_t = G^T (Ah^T S Ah + sum_k sigma_k d2eh_k/de2) G + sum_k s~_k dG_k/dq``, ``sigma = S eh`` the
generalized stresses. The last term is the geometric stiffness; it is non-symmetric away from
equilibrium because spins do not commute, and it is not symmetrised.

Energy-conserving mid-point force (Gonzalez 1996; Simo & Tarnow 1992; as Beam3D). With the step
increment ``d = [x1_i - x0_i, w_i]``, w_i the Cayley parameters of ``R1_i R0_i^T`` (so that
``n1 - n0 = w x n_m`` exactly), every strain ``a . b`` has the exact increment
``a_m . db + b_m . da`` with the step-averaged vectors ``a_m = (a0 + a1)/2``; this gives rows ``G_m``
with ``G_m d = e1 - e0`` exactly. The stresses are the average of the energy gradient along the
straight strain path, ``s* = int_0^1 s~(e0 + t (e1 - e0)) dt`` (four-point Gauss plus, where its
error exceeds round-off, the correction along ``e1 - e0`` Beam3D uses), so
``q_m . d = s* . (e1 - e0) = Phi1 - Phi0`` to round-off; each row is a self-equilibrated force
system about the mid-point positions, so linear and angular momentum are conserved. The tangent
is taken with respect to d (non-symmetric).

Stress resultants in the element's co-rotated local axes: membrane forces ``N = h D (Bm T Z eh)``
(N/m) and bending moments ``M = h^3/12 D (Bk T Z eh)`` (N m/m), with the centroid operators
``Bm, Bk`` of :func:`~flexmb.elements.shell_linear.centroid_operators` (their sign conventions).

Mass: translational, ``lumped`` (``rho h A / 3`` per node) or ``consistent`` (linear interpolation,
``rho h A / 12 (1 + delta_ij)`` per direction); the through-thickness rotary inertia at the nodes
(:meth:`Shell3.rotary_inertia`) is handled by the integrators as for the beam's nodes.

Evaluation: the kernels are the compiled loops of :mod:`flexmb.compiled.shell3` (numba, imported on
first use); this docstring is their specification and the tests check them against finite
differences and the exact invariants above. The reference data (frames, S, output maps) are
computed once per set of reference coordinates (:meth:`Shell3.reference`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements import shell_linear
from flexmb.elements.base import ElementGroup

_compiled = None                  # flexmb.compiled.shell3, imported on first use (it imports numba)


def _kernels():
    """The compiled kernels module (importing numba on the first call only)."""
    global _compiled
    if _compiled is None:
        from flexmb.compiled import shell3
        _compiled = shell3
    return _compiled


N_STRAINS = 12
_NO_STRESSES = np.zeros((0, N_STRAINS))      # stresses argument of the kernels: the element's own
# the strain tables of flexmb.compiled.shell3 (repeated here so that building S does not import
# numba; a test checks that they agree): metric strains k = 0..2 on the edges (_EDGE_I, _EDGE_J);
# director terms sign * (R_i D_i^slot) . (x_j - x_i) adding to strain _T_STRAIN
_EDGE_I, _EDGE_J = np.array([0, 1, 2]), np.array([1, 2, 0])
_T_STRAIN = np.array([3, 4, 5, 6, 7, 8, 9, 9, 10, 10, 11, 11])
_T_NODE = np.array([0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2])
_T_END = np.array([1, 2, 2, 0, 0, 1, 2, 1, 0, 2, 1, 0])
_T_SLOT = np.array([0, 0, 0, 0, 0, 0, 1, 2, 1, 2, 1, 2])
_T_SIGN = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
_RANK_TOLERANCE = 1e-12           # smallest Cholesky pivot of the scaled B B^T relative to its largest diagonal


@dataclass(frozen=True)
class ShellReference:
    """What the kernels need of the reference configuration, computed once per X.

    X (n_el, 3, 3) the reference nodes these data belong to; frames (n_el, 3, 3) columns E1 E2 E3;
    xy (n_el, 3, 2) local nodal coordinates (m); area (n_el,) (m^2); directors (n_el, 3, 3, 3)
    reference E3, L_ij, L_ik at each node i (slots 0, 1, 2); angle_length (n_el, 12) |L_ij| and
    4 A of the angle map (1 for the metric strains, unused); S (n_el, 12, 12) the strain stiffness
    (N/m^3 for the metric and drilling strains, N/m for bending); Z (n_el, 18, 12) the right inverse of
    B = de/dq at the reference behind S (kept for the stress outputs).
    """
    X: np.ndarray
    frames: np.ndarray
    xy: np.ndarray
    area: np.ndarray
    directors: np.ndarray
    angle_length: np.ndarray
    S: np.ndarray
    Z: np.ndarray


def _block_rotation(frames: np.ndarray) -> np.ndarray:
    """T (n_el, 18, 18): block diagonal of E^T, local DOFs = T global DOFs."""
    T = np.zeros((frames.shape[0], 18, 18))
    Et = frames.transpose(0, 2, 1)
    for k in range(6):
        T[:, 3 * k:3 * k + 3, 3 * k:3 * k + 3] = Et
    return T


class Shell3(ElementGroup):
    """Co-rotational three-node flat shell: membrane (``"opt"`` ANDES or ``"cst"``) + DKT bending,
    large rotations through generalized strains (see the module docstring).

    Parameters
    ----------
    connectivity : (n_el, 3) node indices, counter-clockwise about the side the normal E3 points to.
    E : Young's modulus (Pa), nu : Poisson's ratio (-1 < nu < 0.5), thickness : h (m), rho : density
        (kg/m^3); scalars or one value per element.
    membrane : ``"opt"`` or ``"cst"`` (:func:`~flexmb.elements.shell_linear.membrane_stiffness`).
    mass : ``"lumped"`` or ``"consistent"`` translational mass.
    local_stiffness : optional (n_el, 18, 18) linear triangle in local axes to use instead of
        membrane + DKT (symmetric, null space the six rigid modes); for testing the co-rotational
        machinery with any linear triangle. The stress outputs still use membrane + DKT operators.
    """

    has_rotations = True
    n_nodes = 3

    def __init__(self, connectivity: np.ndarray, E: float | np.ndarray, nu: float | np.ndarray,
                 thickness: float | np.ndarray, rho: float | np.ndarray = 0.0, membrane: str = "opt",
                 mass: str = "lumped", name: str = "shell", *,
                 local_stiffness: np.ndarray | None = None) -> None:
        super().__init__(connectivity, 3, name)
        n = self.n_elements
        self.E = self._per_element(E, n, "Young's modulus E", name)
        self.nu = self._poisson_ratio(nu, n, name)
        self.thickness = self._per_element(thickness, n, "thickness", name)
        self.rho = self._per_element(rho, n, "density rho", name, positive=False)
        if membrane not in ("opt", "cst"):
            raise ModelError(f"element group {name!r}: membrane must be 'opt' or 'cst', got {membrane!r}")
        if mass not in ("lumped", "consistent"):
            raise ModelError(f"element group {name!r}: mass must be 'lumped' or 'consistent', got {mass!r}")
        self.membrane, self.mass = membrane, mass
        if local_stiffness is not None:
            local_stiffness = np.asarray(local_stiffness, dtype=float)
            if local_stiffness.shape != (n, 18, 18) or not np.all(np.isfinite(local_stiffness)):
                raise ModelError(f"element group {name!r}: local_stiffness must be a finite array of shape "
                                 f"({n}, 18, 18), got {local_stiffness.shape}")
        self.local_stiffness = local_stiffness
        self._reference: ShellReference | None = None
        self._output_maps: tuple[np.ndarray, np.ndarray] | None = None

    @staticmethod
    def _poisson_ratio(nu: float | np.ndarray, n: int, name: str) -> np.ndarray:
        """Poisson's ratios (n,) from a scalar or one per element, each in (-1, 0.5)."""
        label = f"element group {name!r}: Poisson's ratio nu"
        values = ElementGroup._broadcast(nu, n, label)
        bad = np.flatnonzero(~((values > -1.0) & (values < 0.5)))
        if bad.size:
            raise ModelError(f"{label} of element {int(bad[0])} is {values[bad[0]]}, must be in (-1, 0.5)")
        return values

    # ------------------------------------------------------------ reference state
    def reference(self, X: np.ndarray) -> ShellReference:
        """Frames, strain stiffness S and the rest of :class:`ShellReference` for the reference
        nodes X (n_el, 3, 3), computed on the first call and again only if X changes.

        Raises ModelError naming the group and element for a zero-area triangle or a rank-deficient
        strain Jacobian B."""
        ref = self._reference
        if ref is not None and (ref.X is X or (ref.X.shape == np.shape(X) and np.array_equal(ref.X, X))):
            return ref
        X = np.array(X, dtype=float)
        if X.shape != (self.n_elements, 3, 3):
            raise ModelError(f"element group {self.name!r}: reference nodes must have shape "
                             f"({self.n_elements}, 3, 3), got {X.shape}")
        frames, xy, area = shell_linear.local_frames(X, group=self.name)
        n = self.n_elements
        directors = np.empty((n, 3, 3, 3))                               # slots: E3, L_ij, L_ik
        angle_length = np.ones((n, N_STRAINS))
        for i in range(3):
            directors[:, i, 0] = frames[:, :, 2]
            directors[:, i, 1] = X[:, (i + 1) % 3] - X[:, i]
            directors[:, i, 2] = X[:, (i + 2) % 3] - X[:, i]
        for k, i, j in zip(_T_STRAIN[:6], _T_NODE[:6], _T_END[:6]):     # bending: |L_ij| asin(b / |l_ij|)
            angle_length[:, k] = np.linalg.norm(X[:, j] - X[:, i], axis=1)
        angle_length[:, 9:12] = 4.0 * area[:, None]                      # drilling: c = 4 A sin(angle)
        K_local = (shell_linear.linear_stiffness(xy, self.E, self.nu, self.thickness, self.membrane,
                                                 group=self.name)
                   if self.local_stiffness is None else self.local_stiffness)
        directors = np.ascontiguousarray(directors)
        Z, S, bad = _kernels().strain_stiffness(X, directors, np.ascontiguousarray(K_local),
                                                np.ascontiguousarray(frames), np.sqrt(area), _RANK_TOLERANCE)
        if bad >= 0:
            raise ModelError(f"element group {self.name!r}, element {bad}: the strain Jacobian B has rank < 12")
        self._reference = ShellReference(X, frames, xy, area, directors, angle_length, S, Z)
        self._output_maps = None
        self._kept_start = None
        return self._reference

    def _args(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ref = self.reference(X)
        return ref.directors, ref.angle_length, ref.S

    # ---------------------------------------------------------- static kernels
    def _static(self, X: np.ndarray, u: np.ndarray, tangent: bool,
                stresses: np.ndarray = _NO_STRESSES) -> tuple[np.ndarray, np.ndarray]:
        X = np.asarray(X, dtype=float)
        return _kernels().force_and_tangent(X, np.ascontiguousarray(u, dtype=float), *self._args(X), tangent,
                                            stresses)

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Internal force q (n_el, 18), N and N m."""
        return self._static(X, u, False)[0]

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Internal force (n_el, 18) and tangent dq/d(u, spins) (n_el, 18, 18), not symmetrised."""
        return self._static(X, u, True)

    def _strain_state(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Energy (n_el,), angle strains eh (n_el, 12), generalized stresses S eh (n_el, 12); the
        state packed for a mid-point step starting from u is kept (:meth:`_start_state`)."""
        X = np.asarray(X, dtype=float)
        u = np.ascontiguousarray(u, dtype=float)
        phi, eh, sigma, start = _kernels().strain_state(X, u, *self._args(X))
        self._kept_start = (u.copy(), start)
        return phi, eh, sigma

    def _start_state(self, X: np.ndarray, u0: np.ndarray) -> np.ndarray:
        """The start state u0 (n_el, 18) of a mid-point step packed as its force kernel reads it
        (n_el, N_START): kept from the last :meth:`_strain_state` when that was of u0 (a time step
        records its end state, the next step's start) and for the step's later iterations, else
        computed. Equal u0 gives equal bits, so the force does not depend on what was kept. The
        group holds u0 and its packed state (67 + 18 numbers per element) for it; ``_kept_`` values
        are not saved in model files."""
        kept = self.__dict__.get("_kept_start")
        if kept is None or not np.array_equal(kept[0], u0):
            self._strain_state(X, u0)
            kept = self._kept_start
        return kept[1]

    def strains(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Generalized strains after the angle map, eh (n_el, 12): g (3, m^2), b (6, m), c (3, m^2)."""
        return self._strain_state(X, u)[1]

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Strain energy Phi (n_el,), J."""
        return self._strain_state(X, u)[0]

    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """sigma = S eh (n_el, 12), conjugate to eh: N/m for the metric and drilling strains, N for bending."""
        return self._strain_state(X, u)[2]

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """Part of the tangent linear in given generalized stresses sigma (n_el, 12): (n_el, 18, 18)."""
        stresses = np.ascontiguousarray(stresses, dtype=float)
        if stresses.shape != (self.n_elements, N_STRAINS):
            raise ModelError(f"element group {self.name!r}: stresses must have shape "
                             f"({self.n_elements}, {N_STRAINS}), got {stresses.shape}")
        return self._static(X, u, True, stresses)[1]

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Mean membrane strain (e_xx + e_yy)/2 at the centroid (n_el,), the shell's counterpart of
        a bar's axial strain."""
        strain, _ = self._centroid_strains(X, u)
        return 0.5 * (strain[:, 0] + strain[:, 1])

    # -------------------------------------------------------- outputs
    output_units = {"membrane_forces": "N/m", "bending_moments": "N m/m"}

    def _centroid_strains(self, X: np.ndarray, u: np.ndarray, eh: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray]:
        """Membrane strains [e_xx, e_yy, gamma_xy] and curvatures [k_xx, k_yy, 2 k_xy] at the
        centroid (n_el, 3) each, in co-rotated local axes: Bm T Z eh, Bk T Z eh (``eh``: the
        strains at u when known)."""
        ref = self.reference(X)
        if self._output_maps is None:
            Bm, Bk = shell_linear.centroid_operators(ref.xy, self.membrane, group=self.name)
            TZ = _block_rotation(ref.frames) @ ref.Z                       # (n_el, 18, 12)
            self._output_maps = (Bm @ TZ, Bk @ TZ)
        eh = self.strains(X, u) if eh is None else eh
        membrane_map, bending_map = self._output_maps
        return np.einsum("eij,ej->ei", membrane_map, eh), np.einsum("eij,ej->ei", bending_map, eh)

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """``membrane_forces`` [N_xx, N_yy, N_xy] = h D e (N/m) and ``bending_moments``
        [M_xx, M_yy, M_xy] = h^3/12 D k (N m/m) at the centroid, (n_el, 3) each, in the element's
        co-rotated local axes (E1, E2 turned with the element)."""
        return self._outputs(X, u, None)

    def outputs_and_strain_energy(self, X: np.ndarray, u: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        energy, eh = self._strain_state(X, u)[:2]
        return self._outputs(X, u, eh), energy

    def _outputs(self, X: np.ndarray, u: np.ndarray, eh: np.ndarray | None) -> dict[str, np.ndarray]:
        strain, curvature = self._centroid_strains(X, u, eh)
        D = shell_linear.plane_stress_matrix(self.E, self.nu, group=self.name)  # (n_el, 3, 3)
        h = self.thickness[:, None]
        return {"membrane_forces": h * np.einsum("eij,ej->ei", D, strain),
                "bending_moments": h ** 3 / 12.0 * np.einsum("eij,ej->ei", D, curvature)}

    # -------------------------------------------------------- mass
    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        """Translational mass (n_el, 18, 18) in global axes, zero on the rotations (see
        :meth:`rotary_inertia`): lumped rho h A / 3 per node, or consistent rho h A / 12 (1 + delta_ij)."""
        area = self.reference(X).area
        m = self.rho * self.thickness * area                              # (n_el,) element mass
        pattern = np.eye(3) / 3.0 if self.mass == "lumped" else (np.ones((3, 3)) + np.eye(3)) / 12.0
        trans = np.array([0, 1, 2, 6, 7, 8, 12, 13, 14])
        Me = np.zeros((self.n_elements, 18, 18))
        Me[:, trans[:, None], trans[None, :]] = m[:, None, None] * np.kron(pattern, np.eye(3))[None]
        return Me

    def rotary_inertia(self, X: np.ndarray) -> np.ndarray:
        """Nodal rotary inertia tensors in global reference axes (n_el, 3, 3, 3), kg m^2:
        ``E J_local E^T`` with J_local of :func:`~flexmb.elements.shell_linear.nodal_rotary_inertia`."""
        ref = self.reference(X)
        J_local = shell_linear.nodal_rotary_inertia(ref.area, self.rho, self.thickness)   # (n_el, 3, 3)
        J = ref.frames @ J_local @ ref.frames.transpose(0, 2, 1)
        return np.repeat(J[:, None], 3, axis=1)

    # ------------------------------------------------------- mid-point kernels
    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """Energy-conserving mid-point force (n_el, 18): q_m . d = Phi(u1) - Phi(u0) to round-off."""
        return self._mid_point(X, u0, u1, False)[0]

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        """Mid-point force (n_el, 18) and its derivative (n_el, 18, 18) w.r.t. the step increment
        ``d = [x1_i - x0_i, w_i]`` (w Cayley parameters of R1_i R0_i^T, each below a half turn)."""
        return self._mid_point(X, u0, u1, True)

    def _mid_point(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray, tangent: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
        X = np.asarray(X, dtype=float)
        kernels = _kernels()
        args = self._args(X)                    # first: a new X drops the start state kept for the old one
        u0 = np.ascontiguousarray(u0, dtype=float)
        # the force alone reads the start state shared by a step's iterations; the tangent
        # recomputes it with the start rotations it needs
        start = np.zeros((0, kernels.N_START)) if tangent else self._start_state(X, u0)
        return kernels.mid_point_force_and_tangent(X, u0, np.ascontiguousarray(u1, dtype=float), *args, tangent,
                                                   start)

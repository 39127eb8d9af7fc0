"""Isotropic linear elastic solids: 4- and 10-node tetrahedra, 8- and 20-node hexahedra, 6- and
15-node wedges (small strain).

Element DOFs: the nodal displacements ``[ux, uy, uz]`` node after node (3 n_nodes per element,
nodes in the VTK order of :mod:`flexmb.elements.solid_shapes`); solid nodes carry translations
only, like those of a 3D truss, and share them with trusses, beams and shells.

Strains are the small (linearised) strains, Voigt order with engineering shears,

    eps = [e_xx, e_yy, e_zz, gamma_yz, gamma_xz, gamma_xy] = B u,

the stresses ``sigma = D eps`` with the isotropic D of :func:`elasticity_matrix`. The element is
linear: internal force ``q = K u``, strain energy ``u . K u / 2``, tangent K at any u. Large
rotations are NOT represented (a rigid rotation by a finite angle strains the element by terms
of second order in the angle): use the solids for small displacements, linear statics, natural
modes, linear buckling and component mode synthesis, or inside a modal (floating-frame) body.

Quadrature (full integration, rules of :mod:`flexmb.elements.solid_shapes`):

==========  ==========================================  ==========================================
kind        stiffness (B^T D B det J)                   consistent mass (rho N^T N det J)
==========  ==========================================  ==========================================
tet4        centroid, 1 point (exact)                   4-point degree-2 rule (exact)
tet10       4-point degree-2 rule (exact, straight       conical product 4^3 points, degree 5
            sides)                                      (exact, straight sides)
hex8        2 x 2 x 2 Gauss (exact on parallelepipeds)  3 x 3 x 3 Gauss (exact for any hex8)
hex20       3 x 3 x 3 Gauss (exact on parallelepipeds)  3 x 3 x 3 Gauss (exact on parallelepipeds)
wedge6      3-point triangle x 2 Gauss (exact on affine  9-point triangle x 3 Gauss, degree 4 (exact
            wedges)                                     for any wedge6)
wedge15     9-point triangle x 3 Gauss, degree 4        9-point triangle x 3 Gauss, degree 4
            (exact on affine wedges)                    (exact on affine wedges)
==========  ==========================================  ==========================================

The hex20 is fully integrated only: the reduced 2 x 2 x 2 rule leaves a single element six
zero-energy modes besides the six rigid ones (measured), and meshio reads Abaqus C3D20R as C3D20
anyway. An affine wedge is one whose map from the reference cell is affine (congruent parallel
ends, parallel upright edges).

The stresses ``generalized_stresses`` hands to linear buckling are those at the stiffness points;
:meth:`Solid.geometric_stiffness` integrates ``dN_a/dx_i sigma_ij dN_b/dx_j I_3`` over the same
points.
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import ModelError
from flexmb.elements.base import ElementGroup
from flexmb.elements.solid_shapes import KIND_OF_NODES, NODES, quadrature, shape_functions

#: polynomial degree of the stiffness and mass rules of each kind (see the module docstring)
STIFFNESS_DEGREE = {"tet4": 0, "tet10": 2, "hex8": 2, "hex20": 4, "wedge6": 2, "wedge15": 4}
MASS_DEGREE = {"tet4": 2, "tet10": 4, "hex8": 4, "hex20": 4, "wedge6": 4, "wedge15": 4}
#: Voigt index pairs (i, j) of the six stress and strain components
VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))


def elasticity_matrix(E: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """Isotropic elasticity matrix (n_el, 6, 6) in Pa for the Voigt strains of the module docstring,
    from Young's modulus E (n_el,) in Pa and Poisson's ratio nu (n_el,):
    ``D = lambda m m^T + mu diag(2, 2, 2, 1, 1, 1)``, m = [1, 1, 1, 0, 0, 0]."""
    lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))                         # (n_el,) Lame's lambda, Pa
    mu = E / (2.0 * (1.0 + nu))                                            # (n_el,) shear modulus, Pa
    D = np.zeros((E.size, 6, 6))
    D[:, :3, :3] = lam[:, None, None]
    D[:, [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]] += mu[:, None] * np.array([2.0, 2.0, 2.0, 1.0, 1.0, 1.0])
    return D


def strain_operator(G: np.ndarray) -> np.ndarray:
    """The Voigt strain-displacement matrix B (..., 6, 3 n_nodes) from the shape-function gradients
    G = dN_a/dx_i (..., n_nodes, 3), 1/m."""
    n_nodes = G.shape[-2]
    B = np.zeros(G.shape[:-2] + (6, 3 * n_nodes))
    for row, (i, j) in enumerate(VOIGT):
        B[..., row, i::3] += G[..., j]
        if i != j:
            B[..., row, j::3] += G[..., i]
    return B


def von_mises(sigma: np.ndarray) -> np.ndarray:
    """von Mises stress (...,) of Voigt stresses (..., 6), Pa."""
    s = sigma
    return np.sqrt(0.5 * ((s[..., 0] - s[..., 1]) ** 2 + (s[..., 1] - s[..., 2]) ** 2 + (s[..., 2] - s[..., 0]) ** 2)
                   + 3.0 * (s[..., 3] ** 2 + s[..., 4] ** 2 + s[..., 5] ** 2))


class Solid(ElementGroup):
    """Group of isotropic linear elastic solid elements of one kind (see the module docstring).

    Parameters
    ----------
    connectivity : (n_el, n_nodes) node indices, VTK order (wedges: meshio's, module docstring of
        :mod:`~flexmb.elements.solid_shapes`); n_nodes 4, 10, 8, 20, 6 or 15.
    E : Young's modulus (Pa), scalar or (n_el,).
    nu : Poisson's ratio, scalar or (n_el,), -1 < nu < 0.5.
    rho : density (kg/m^3), scalar or (n_el,); default 0 (massless).
    kind : ``"tet4"``, ``"tet10"``, ``"hex8"``, ``"hex20"``, ``"wedge6"`` or ``"wedge15"``; default
        from the number of nodes per cell.
    name : the group's name.

    An inverted or degenerate element (det J <= 0 at a quadrature point) is a ModelError naming
    the group and the element, raised by every kernel given its reference positions (and by
    :meth:`flexmb.model.Model.add_solid` when the group is added).
    """

    has_rotations = False

    def __init__(self, connectivity: np.ndarray, E: float | np.ndarray, nu: float | np.ndarray,
                 rho: float | np.ndarray = 0.0, kind: str | None = None, name: str = "solid") -> None:
        if kind is None:
            try:
                n_nodes = np.atleast_2d(np.asarray(connectivity)).shape[-1]
            except ValueError:                                        # ragged nested lists
                n_nodes = "a varying number of nodes"
            if n_nodes not in KIND_OF_NODES:
                known = [f"{n} ({k})" for k, n in NODES.items()]
                raise ModelError(f"element group {name!r}: a solid cell has {', '.join(known[:-1])} or {known[-1]} "
                                 f"nodes, the connectivity has {n_nodes} per cell")
            kind = KIND_OF_NODES[n_nodes]
        if kind not in NODES:
            raise ModelError(f"element group {name!r}: solid kind must be one of {sorted(NODES)}, got {kind!r}")
        self.kind = kind
        self.n_nodes = NODES[kind]
        super().__init__(connectivity, 3, name)
        n = self.n_elements
        self.E = self._per_element(E, n, "Young's modulus E (Pa)", name)
        self.nu = self._broadcast(nu, n, f"element group {name!r}: Poisson's ratio nu")
        bad = np.flatnonzero(~((self.nu > -1.0) & (self.nu < 0.5)))
        if bad.size:
            raise ModelError(f"element group {name!r}: Poisson's ratio nu of element {int(bad[0])} is "
                             f"{self.nu[bad[0]]}, must lie in (-1, 0.5)")
        self.rho = self._per_element(rho, n, "density rho (kg/m^3)", name, positive=False)
        self.D = elasticity_matrix(self.E, self.nu)                        # (n_el, 6, 6), Pa
        self._stiffness_rule = quadrature(kind, STIFFNESS_DEGREE[kind])
        self._mass_rule = quadrature(kind, MASS_DEGREE[kind])

    # ------------------------------------------------------------ geometry
    def _gradients(self, X: np.ndarray, rule: tuple[np.ndarray, np.ndarray]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Shape functions N (n_q, n_nodes), gradients G = dN/dx (n_el, n_q, n_nodes, 3) in 1/m and
        the weights times det J (n_el, n_q) in m^3 at the points of ``rule``; ModelError if det J
        <= 0 at a point."""
        points, weights = rule
        N, dN = shape_functions(self.kind, points)                         # (n_q, nn), (n_q, nn, 3)
        J = np.einsum("eni,qnk->eqik", X, dN)                              # (n_el, n_q, 3, 3) dx_i/dxi_k
        det = np.linalg.det(J)                                             # (n_el, n_q)
        # relative to the element's size so that the test does not depend on units
        size = np.ptp(X, axis=1).max(axis=1)                               # (n_el,) m
        scale = np.maximum(size, np.finfo(float).tiny) ** 3                # (n_el,) m^3
        bad = ~(det > 1e-12 * scale[:, None])
        if np.any(bad):
            element = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ModelError(f"solid group {self.name!r}, element {element} ({self.kind}, nodes "
                             f"{self.connectivity[element].tolist()}): det J = {det[element].min():.3g} m^3 <= 0 "
                             f"at a quadrature point (inverted, degenerate or wrongly numbered element; "
                             f"{int(bad.any(axis=1).sum())} such element(s))")
        G = np.einsum("qnk,eqki->eqni", dN, np.linalg.inv(J))              # (n_el, n_q, nn, 3)
        return N, G, weights[None, :] * det

    def check_geometry(self, X: np.ndarray) -> None:
        """ModelError if an element of reference positions X (n_el, n_nodes, 3) is inverted or
        degenerate (det J <= 0 at a stiffness or mass quadrature point)."""
        self._gradients(X, self._stiffness_rule)
        self._gradients(X, self._mass_rule)

    def volumes(self, X: np.ndarray) -> np.ndarray:
        """Element volumes (n_el,), m^3."""
        return self._gradients(X, self._mass_rule)[2].sum(axis=1)

    # -------------------------------------------------------- stiffness
    def stiffness_matrix(self, X: np.ndarray) -> np.ndarray:
        """K = sum_q w_q det J_q B_q^T D B_q (n_el, 3 nn, 3 nn), N/m (a new array)."""
        return self._stiffness(X).copy()

    def _stiffness(self, X: np.ndarray) -> np.ndarray:
        """:meth:`stiffness_matrix`, kept for the last reference positions and elasticity matrices
        it was computed for (the element is linear: K depends on nothing else), so the kernels of
        a run do not recompute it (a 13 000-element tet10 group: 0.2 s a call); read-only. The
        group holds one K more in memory for it."""
        kept = self.__dict__.get("_kept_stiffness")
        if kept is not None and kept[0].shape == X.shape and np.array_equal(kept[0], X) \
                and np.array_equal(kept[1], self.D):
            return kept[2]
        _, G, wdet = self._gradients(X, self._stiffness_rule)
        B = strain_operator(G)                                             # (n_el, n_q, 6, 3nn)
        DB = self.D[:, None] @ B                                           # (n_el, n_q, 6, 3nn)
        K = np.einsum("eq,eqsa,eqsb->eab", wdet, B, DB)
        K.flags.writeable = False
        self._kept_stiffness = (X.copy(), self.D.copy(), K)
        return K

    def point_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Voigt stresses [s_xx, s_yy, s_zz, s_yz, s_xz, s_xy] at the stiffness quadrature points
        (n_el, n_q, 6), Pa."""
        _, G, _ = self._gradients(X, self._stiffness_rule)
        eps = strain_operator(G) @ u[:, None, :, None]                     # (n_el, n_q, 6, 1)
        return (self.D[:, None] @ eps)[..., 0]

    def internal_force(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """q = K u (n_el, 3 nn), N."""
        return np.einsum("eab,eb->ea", self._stiffness(X), u)

    def force_and_tangent(self, X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """K u (n_el, 3 nn) and K (n_el, 3 nn, 3 nn): the element is linear."""
        K = self._stiffness(X)
        return np.einsum("eab,eb->ea", K, u), K.copy()

    def strain_energy(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """u . K u / 2 (n_el,), J."""
        return 0.5 * np.einsum("ea,eab,eb->e", u, self._stiffness(X), u)

    def mid_point_force(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """K (u0 + u1) / 2: its work on u1 - u0 is the exact change of the quadratic energy."""
        return self.internal_force(X, 0.5 * (u0 + u1))

    def mid_point_force_and_tangent(self, X: np.ndarray, u0: np.ndarray, u1: np.ndarray
                                    ) -> tuple[np.ndarray, np.ndarray]:
        K = self._stiffness(X)
        return np.einsum("eab,eb->ea", K, 0.5 * (u0 + u1)), 0.5 * K

    # ---------------------------------------------------- buckling, outputs
    def generalized_stresses(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The Voigt stresses at the stiffness points, flattened point after point (n_el, 6 n_q), Pa."""
        return self.point_stresses(X, u).reshape(len(u), -1)

    def geometric_stiffness(self, X: np.ndarray, u: np.ndarray, stresses: np.ndarray) -> np.ndarray:
        """sum_q w_q det J_q (G_q sigma_q G_q^T) (x) I_3 (n_el, 3 nn, 3 nn), N/m, for stresses
        (n_el, 6 n_q) as :meth:`generalized_stresses` gives them (Pa)."""
        _, G, wdet = self._gradients(X, self._stiffness_rule)
        s = stresses.reshape(len(X), -1, 6)                                # (n_el, n_q, 6)
        sigma = s[..., [[0, 5, 4], [5, 1, 3], [4, 3, 2]]]                  # (n_el, n_q, 3, 3)
        H = np.einsum("eq,eqai,eqij,eqbj->eab", wdet, G, sigma, G)         # (n_el, nn, nn)
        return np.kron(H, np.eye(3)[None])

    output_units = {"s_xx": "Pa", "s_yy": "Pa", "s_zz": "Pa", "s_yz": "Pa", "s_xz": "Pa", "s_xy": "Pa",
                    "von_mises": "Pa", "von_mises_max": "Pa", "volumetric_strain": "-"}

    def element_outputs(self, X: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        """Per element (n_el,) each: the volume-mean stress components ``s_xx`` ... ``s_xy`` and
        their von Mises stress ``von_mises``, the largest von Mises stress at a stiffness point
        ``von_mises_max`` (Pa), and the mean ``volumetric_strain`` (-). The stresses at the points
        themselves: :meth:`point_stresses`."""
        _, G, wdet = self._gradients(X, self._stiffness_rule)
        eps = (strain_operator(G) @ u[:, None, :, None])[..., 0]           # (n_el, n_q, 6)
        sigma = (self.D[:, None] @ eps[..., None])[..., 0]                 # (n_el, n_q, 6)
        volume = wdet.sum(axis=1)                                          # (n_el,)
        mean = np.einsum("eq,eqs->es", wdet, sigma) / volume[:, None]      # (n_el, 6)
        out = {name: mean[:, k] for k, name in enumerate(("s_xx", "s_yy", "s_zz", "s_yz", "s_xz", "s_xy"))}
        out["von_mises"] = von_mises(mean)
        out["von_mises_max"] = von_mises(sigma).max(axis=1)
        out["volumetric_strain"] = np.einsum("eq,eq->e", wdet, eps[..., :3].sum(axis=2)) / volume
        return out

    def axial_strain(self, X: np.ndarray, u: np.ndarray) -> np.ndarray:
        """A solid has no axis: the volume-mean volumetric strain e_xx + e_yy + e_zz (n_el,)."""
        return self.element_outputs(X, u)["volumetric_strain"]

    # --------------------------------------------------------------- mass
    def mass_matrix(self, X: np.ndarray) -> np.ndarray:
        """Consistent mass sum_q w_q det J_q rho N_q^T N_q (x) I_3 (n_el, 3 nn, 3 nn), kg."""
        N, _, wdet = self._gradients(X, self._mass_rule)
        m = np.einsum("e,eq,qa,qb->eab", self.rho, wdet, N, N)             # (n_el, nn, nn)
        return np.kron(m, np.eye(3)[None])

"""The linear flat triangle in its own local frame: OPT/ANDES membrane with drilling + DKT plate.

This is the small-strain element that :class:`flexmb.elements.shell3.Shell3` carries along in
its co-rotated frame. Everything here is numpy batched over elements (arrays ``(n_el, ...)``)
and evaluated once when a group is built; there is no per-element Python loop.

Local frame (the agreed convention of the shell): with the reference nodal positions X_1, X_2,
X_3 of a triangle in connectivity order,

    E1 = (X2 - X1) / |X2 - X1|,   E3 = (X2 - X1) x (X3 - X1) / |...|,   E2 = E3 x E1,

and the local coordinates ``xy`` of node i are the projections of ``X_i - X_1`` on E1, E2 (node 1
at the origin, node 2 on the x axis, node 3 above it: counter-clockwise, area > 0).

Local DOFs per node, node-major (6 per node, 18 per element):

    [u, v, w, theta_x, theta_y, theta_z]

u, v, w the displacement components along E1, E2, E3 and theta the local components of the
nodal ROTATION VECTOR (right-hand rule). For a Kirchhoff plate the normal rotates with the slope,
so ``theta_x = dw/dy`` and ``theta_y = -dw/dx``; ``theta_z`` is the drilling rotation, which a
continuum would equal to the in-plane rotation ``(dv/dx - du/dy)/2``.

Strains and stress resultants (constant thickness h through the element):

- membrane strains ``e = [e_xx, e_yy, gamma_xy]`` (engineering shear), forces ``N = h D e``;
- curvatures ``k = [k_xx, k_yy, 2 k_xy] = [-w_xx, -w_yy, -2 w_xy]``: the sign is chosen so that
  the strain at the height z above the mid-surface (along +E3) is ``e + z k``; moments
  ``M = (h^3/12) D k`` are then ``M = int sigma z dz`` (positive M_xx stretches the +E3 face);
- D the plane-stress matrix of :func:`plane_stress_matrix`.

Membrane: ``kind="opt"`` is Felippa's optimal ANDES triangle with drilling freedoms (C. A.
Felippa, "A study of optimal membrane triangles with drilling freedoms", CMAME 192 (2003)
2125-2168): basic stiffness from the force-lumping matrix with alpha_b = 3/2 (eq. 22) plus the
higher-order stiffness on the hierarchical (deviatoric) corner rotations with beta_0 =
max((1 - 4 nu^2)/2, 0.01) and (beta_1 ... beta_9) = (1, 2, 1, 0, 1, -1, -1, -1, -2) (eqs. 29-32).
It passes the patch test, and the nodal values of the exact pure in-plane bending field of a
rectangular mesh unit give exactly the exact energy at any aspect ratio (the optimality that
fixes the betas), so slender cantilevers converge from a one-element-deep mesh on.
``kind="cst"`` is the constant strain triangle plus a drilling stabilisation (see
:func:`membrane_stiffness`); it is much too stiff in in-plane bending.

Plate: DKT, the discrete Kirchhoff triangle of Batoz, Bathe & Ho (IJNME 15 (1980) 1771-1812).
The slopes ``beta = (beta_x, beta_y) = (-w_x, -w_y) = (theta_y, -theta_x)`` are interpolated
quadratically over the six corner and mid-side points; at the mid-sides the tangential slope is
that of the cubic w along the side (Kirchhoff imposed on the side, the paper's eq. for beta_s)
and the normal slope is the mean of the corner values. The curvatures ``k = [beta_x,x,
beta_y,y, beta_x,y + beta_y,x]`` are linear, so the three mid-side points (degree 2) integrate
the energy exactly.
"""
from __future__ import annotations

import numpy as np

from flexmb.checks import ModelError

#: Felippa (2003): alpha_b of the basic stiffness of the optimal (OPT) membrane triangle
OPT_ALPHA_B = 1.5
#: Felippa (2003), section 5: the nine higher-order parameters beta_1 ... beta_9 of the OPT instance
OPT_BETAS = np.array([1.0, 2.0, 1.0, 0.0, 1.0, -1.0, -1.0, -1.0, -2.0])
#: factor c of the drilling penalty c E h A of the "cst" membrane (see membrane_stiffness)
CST_DRILLING_FACTOR = 1.0e-3

#: local DOF positions in the 18-vector of the membrane [u, v, theta_z] and the plate
#: [w, theta_x, theta_y] DOFs, node-major
MEMBRANE_DOFS = np.array([0, 1, 5, 6, 7, 11, 12, 13, 17])
BENDING_DOFS = np.array([2, 3, 4, 8, 9, 10, 14, 15, 16])

# area coordinates of the three mid-side points (degree-2 rule, weights 1/3 each)
_MIDSIDE_POINTS = np.array([[0.0, 0.5, 0.5], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0]])
# DKT sides in the order of the mid-side nodes 4, 5, 6 of the quadratic triangle: (i, j)
_SIDES = np.array([[1, 2], [2, 0], [0, 1]])


def local_frames(X: np.ndarray, *, group: str = "shell") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Element-local reference frames, local nodal coordinates and areas of flat triangles.

    Parameters
    ----------
    X : (n_el, 3, 3) reference positions of nodes 1, 2, 3 of each triangle (rows: nodes).
    group : the element group's name, for the error message.

    Returns
    -------
    E : (n_el, 3, 3) columns E1, E2, E3 (see the module docstring).
    xy : (n_el, 3, 2) local coordinates of the nodes (node 1 at 0, node 2 on the x axis).
    area : (n_el,) areas.

    A zero-area triangle (coincident or collinear nodes) is a :class:`ModelError` naming the
    group and the element.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 3 or X.shape[1:] != (3, 3):
        raise ModelError(f"shell group {group!r}: reference positions must have shape (n_el, 3, 3), "
                         f"got {X.shape}")
    side12 = X[:, 1] - X[:, 0]                                         # (n_el, 3)
    side13 = X[:, 2] - X[:, 0]                                         # (n_el, 3)
    normal = np.cross(side12, side13)                                  # (n_el, 3), |.| = 2 A
    twice_area = np.linalg.norm(normal, axis=1)                        # (n_el,)
    length12 = np.linalg.norm(side12, axis=1)                          # (n_el,)
    # relative to the element size, so that the test is independent of units
    scale = np.maximum(length12, np.linalg.norm(side13, axis=1)) ** 2
    degenerate = ~(twice_area > 1e-12 * scale)
    if np.any(degenerate):
        bad = int(np.flatnonzero(degenerate)[0])
        raise ModelError(f"shell group {group!r}, element {bad}: the triangle has zero area "
                         f"(coincident or collinear nodes; {int(degenerate.sum())} such element(s))")
    e1 = side12 / length12[:, None]                                    # (n_el, 3)
    e3 = normal / twice_area[:, None]                                  # (n_el, 3)
    e2 = np.cross(e3, e1)                                              # (n_el, 3)
    E = np.stack([e1, e2, e3], axis=2)                                 # (n_el, 3, 3) columns
    xy = np.einsum("eni,eia->ena", X - X[:, :1], E[:, :, :2])          # (n_el, 3, 2)
    return E, xy, 0.5 * twice_area


def _per_element(value, n_el: int, what: str, group: str) -> np.ndarray:
    """A scalar or (n_el,) property as an (n_el,) float array."""
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return np.full(n_el, float(array))
    if array.shape != (n_el,):
        raise ModelError(f"shell group {group!r}: {what} must be a scalar or have shape ({n_el},), "
                         f"got {array.shape}")
    return array


def _check_positive(values: np.ndarray, what: str, group: str) -> None:
    bad = ~(values > 0.0) | ~np.isfinite(values)
    if np.any(bad):
        element = int(np.flatnonzero(bad)[0])
        raise ModelError(f"shell group {group!r}, element {element}: {what} must be positive and "
                         f"finite, got {float(values[element]):g}")


def plane_stress_matrix(E, nu, *, group: str = "shell") -> np.ndarray:
    """Isotropic plane-stress elasticity matrix for ``[s_xx, s_yy, s_xy] = D [e_xx, e_yy, gamma_xy]``.

    ``D = E/(1 - nu^2) [[1, nu, 0], [nu, 1, 0], [0, 0, (1 - nu)/2]]``.

    Parameters
    ----------
    E : Young's modulus, scalar or (n_el,) [Pa].
    nu : Poisson's ratio, scalar or (n_el,), -1 < nu < 1/2.

    Returns
    -------
    D : (n_el, 3, 3) [Pa]; n_el = 1 when both are scalars.
    """
    E_arr, nu_arr = np.broadcast_arrays(np.atleast_1d(np.asarray(E, dtype=float)),
                                        np.atleast_1d(np.asarray(nu, dtype=float)))
    if E_arr.ndim != 1:
        raise ModelError(f"shell group {group!r}: E and nu must be scalars or 1-D per-element arrays")
    _check_positive(E_arr, "Young's modulus E", group)
    bad = ~((nu_arr > -1.0) & (nu_arr < 0.5))
    if np.any(bad):
        element = int(np.flatnonzero(bad)[0])
        raise ModelError(f"shell group {group!r}, element {element}: Poisson's ratio nu = "
                         f"{float(nu_arr[element]):g} is outside (-1, 0.5)")
    factor = E_arr / (1.0 - nu_arr ** 2)                               # (n_el,)
    D = np.zeros((E_arr.size, 3, 3))
    D[:, 0, 0] = D[:, 1, 1] = factor
    D[:, 0, 1] = D[:, 1, 0] = factor * nu_arr
    D[:, 2, 2] = factor * (1.0 - nu_arr) / 2.0
    return D


def _congruence(B: np.ndarray, D: np.ndarray) -> np.ndarray:
    """(..., n, n) B^T D B of (..., m, n) B and (..., m, m) D (batched matmul, faster than einsum)."""
    return np.swapaxes(B, -1, -2) @ (D @ B)


def _side_projections(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x_ij = x_i - x_j, y_ij likewise, indexed [i, j] (0-based), and the areas."""
    x = xy[:, :, 0]                                                    # (n_el, 3)
    y = xy[:, :, 1]                                                    # (n_el, 3)
    x_ij = x[:, :, None] - x[:, None, :]                               # (n_el, 3, 3)
    y_ij = y[:, :, None] - y[:, None, :]                               # (n_el, 3, 3)
    area = 0.5 * (x_ij[:, 1, 0] * y_ij[:, 2, 0] - x_ij[:, 2, 0] * y_ij[:, 1, 0])
    return x_ij, y_ij, area


def _material(xy: np.ndarray, E, nu, h, group: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n_el, 3, 3) D, (n_el,) h and (n_el,) nu for a batch of n_el elements."""
    n_el = xy.shape[0]
    E_el = _per_element(E, n_el, "Young's modulus E", group)
    nu_el = _per_element(nu, n_el, "Poisson's ratio nu", group)
    h_el = _per_element(h, n_el, "thickness", group)
    _check_positive(h_el, "thickness", group)
    return plane_stress_matrix(E_el, nu_el, group=group), h_el, nu_el


def _cst_strain_operator(xy: np.ndarray) -> np.ndarray:
    """(n_el, 3, 9) CST strains [e_xx, e_yy, gamma_xy] from [u_i, v_i, theta_z_i] (theta_z unused)."""
    x_ij, y_ij, area = _side_projections(xy)
    # dL_i/dx = y_jk / 2A, dL_i/dy = x_kj / 2A for (i, j, k) cyclic
    dLdx = np.stack([y_ij[:, 1, 2], y_ij[:, 2, 0], y_ij[:, 0, 1]], axis=1) / (2 * area[:, None])
    dLdy = np.stack([x_ij[:, 2, 1], x_ij[:, 0, 2], x_ij[:, 1, 0]], axis=1) / (2 * area[:, None])
    B = np.zeros((xy.shape[0], 3, 9))
    B[:, 0, 0::3] = dLdx
    B[:, 1, 1::3] = dLdy
    B[:, 2, 0::3] = dLdy
    B[:, 2, 1::3] = dLdx
    return B


def _hierarchical_rotations(xy: np.ndarray) -> np.ndarray:
    """(n_el, 3, 9) T_theta_u: theta~_i = theta_z_i - theta_0 (Felippa 2003, eq. 16).

    theta_0 = (dv/dx - du/dy)/2 is the in-plane rotation of the CST displacement field.
    """
    B = _cst_strain_operator(xy)                                       # (n_el, 3, 9)
    mean_rotation = np.zeros((xy.shape[0], 9))
    mean_rotation[:, 1::3] = 0.5 * B[:, 0, 0::3]                       # dv/dx: the dL/dx row
    mean_rotation[:, 0::3] = -0.5 * B[:, 1, 1::3]                      # -du/dy: the dL/dy row
    T = -np.repeat(mean_rotation[:, None, :], 3, axis=1)               # (n_el, 3, 9)
    T[:, [0, 1, 2], [2, 5, 8]] += 1.0
    return T


def _opt_basic_strain_operator(xy: np.ndarray) -> np.ndarray:
    """(n_el, 3, 9) B = L^T / V of the OPT basic stiffness, alpha_b = 3/2 (Felippa 2003, eq. 22).

    The mean strain over the element of the Allman-type displacement field whose mid-side normal
    displacements are raised by alpha_b l (theta_j - theta_i) / 8 (drilling contribution).
    """
    x_ij, y_ij, area = _side_projections(xy)
    B = _cst_strain_operator(xy)
    alpha = OPT_ALPHA_B
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        # drilling column of node i, (i, j, k) cyclic; for node 1: alpha_b/6 [y23 (y13 - y21),
        # x32 (x31 - x12), 2 (x31 y13 - x12 y21)] / 2A
        column = 3 * i + 2
        B[:, 0, column] = alpha / 6 * y_ij[:, j, k] * (y_ij[:, i, k] - y_ij[:, j, i])
        B[:, 1, column] = alpha / 6 * x_ij[:, k, j] * (x_ij[:, k, i] - x_ij[:, i, j])
        B[:, 2, column] = alpha / 3 * (x_ij[:, k, i] * y_ij[:, i, k] - x_ij[:, i, j] * y_ij[:, j, i])
        B[:, :, column] /= 2 * area[:, None]
    return B


def _opt_higher_order_stiffness(xy: np.ndarray, D: np.ndarray, h: np.ndarray,
                                nu: np.ndarray) -> np.ndarray:
    """(n_el, 9, 9) higher-order stiffness K_h of OPT (Felippa 2003, eqs. 11-12, 29-32).

    The natural (side-direction) strains at corner c are ``Q_c theta~`` with the hierarchical
    rotations theta~; interpolated linearly they have zero mean (Q_1 + Q_2 + Q_3 = 0), so K_h
    is energy-orthogonal to the basic stiffness. Integrated exactly with the mid-side points
    (Q_4, Q_5, Q_6 the mid-side averages):
    ``K_h = (3/4) beta_0 h A T^T (sum_m Q_m^T T_e^T D T_e Q_m) T``.
    """
    x_ij, y_ij, area = _side_projections(xy)
    length_sq = np.stack([x_ij[:, 1, 0] ** 2 + y_ij[:, 1, 0] ** 2,    # l_21^2
                          x_ij[:, 2, 1] ** 2 + y_ij[:, 2, 1] ** 2,    # l_32^2
                          x_ij[:, 0, 2] ** 2 + y_ij[:, 0, 2] ** 2],   # l_13^2
                         axis=1)                                       # (n_el, 3)
    # T_e: Cartesian strains [e_xx, e_yy, gamma_xy] from the natural strains along sides 21, 32, 13
    Te = np.empty((xy.shape[0], 3, 3))
    for column, (i, j, k) in enumerate(((1, 2, 0), (2, 0, 1), (0, 1, 2))):
        # columns: natural strains along sides 21, 32, 13 (opposite node j); side 21: [y23 y13, x23 x13,
        # y23 x31 + x32 y13] l21^2 / 4A^2
        Te[:, 0, column] = y_ij[:, i, j] * y_ij[:, k, j] * length_sq[:, column]
        Te[:, 1, column] = x_ij[:, i, j] * x_ij[:, k, j] * length_sq[:, column]
        Te[:, 2, column] = (y_ij[:, i, j] * x_ij[:, j, k] + x_ij[:, j, i] * y_ij[:, k, j]) \
            * length_sq[:, column]
    Te /= (4 * area ** 2)[:, None, None]
    b = OPT_BETAS
    patterns = (np.array([[b[0], b[1], b[2]], [b[3], b[4], b[5]], [b[6], b[7], b[8]]]),
                np.array([[b[8], b[6], b[7]], [b[2], b[0], b[1]], [b[5], b[3], b[4]]]),
                np.array([[b[4], b[5], b[3]], [b[7], b[8], b[6]], [b[1], b[2], b[0]]]))
    row_scale = (2 * area[:, None] / 3) / length_sq                    # (n_el, 3)
    Q = [pattern[None, :, :] * row_scale[:, :, None] for pattern in patterns]  # 3 x (n_el, 3, 3)
    D_natural = _congruence(Te, D)                                     # (n_el, 3, 3)
    K_theta = np.zeros((xy.shape[0], 3, 3))
    for Q_mid in (0.5 * (Q[0] + Q[1]), 0.5 * (Q[1] + Q[2]), 0.5 * (Q[2] + Q[0])):
        K_theta += _congruence(Q_mid, D_natural)
    beta0 = np.maximum(0.5 * (1.0 - 4.0 * nu ** 2), 0.01)             # (n_el,)
    T = _hierarchical_rotations(xy)                                    # (n_el, 3, 9)
    return (0.75 * beta0 * h * area)[:, None, None] * _congruence(T, K_theta)


def membrane_stiffness(xy: np.ndarray, E, nu, h, kind: str = "opt", *,
                       group: str = "shell") -> np.ndarray:
    """Membrane stiffness on the local DOFs ``[u_i, v_i, theta_z_i]``, i = 1..3.

    Parameters
    ----------
    xy : (n_el, 3, 2) local nodal coordinates (:func:`local_frames`) [m].
    E, nu, h : Young's modulus [Pa], Poisson's ratio, thickness [m]; scalars or (n_el,).
    kind : ``"opt"`` Felippa's optimal ANDES membrane with drilling freedoms (see the module
        docstring); ``"cst"`` the constant strain triangle ``h A B^T D B`` plus the drilling
        penalty ``c E h A sum_i (theta_z_i - theta_0)^2 / 2`` with theta_0 = (dv/dx - du/dy)/2
        the element's in-plane rotation and c = :data:`CST_DRILLING_FACTOR` = 1e-3. The penalty
        only removes the three zero-energy drilling modes. Why 1e-3: where the drilling rotations
        follow a smooth field, theta_z - theta_0 is of the order of the element's strains, so the
        penalty adds about c = 0.1 % to the membrane strain energy ~ E h A e^2 (no noticeable
        stiffening), while the drilling rows keep a stiffness 1e-3 of the membrane ones, far
        from round-off (a ratio of 1e3 costs three digits of the solve's accuracy at most).

    Returns
    -------
    (n_el, 9, 9) symmetric, rank 6 (null space: two translations and the in-plane rigid
    rotation with theta_z equal to it); SI units N/m, N and N m for translation-translation,
    translation-rotation and rotation-rotation entries.
    """
    D, h_el, nu_el = _material(xy, E, nu, h, group)
    _, _, area = _side_projections(xy)
    if kind == "opt":
        B = _opt_basic_strain_operator(xy)                             # (n_el, 3, 9)
        K = (h_el * area)[:, None, None] * _congruence(B, D)
        return K + _opt_higher_order_stiffness(xy, D, h_el, nu_el)
    if kind == "cst":
        B = _cst_strain_operator(xy)
        K = (h_el * area)[:, None, None] * _congruence(B, D)
        T = _hierarchical_rotations(xy)
        E_el = _per_element(E, xy.shape[0], "Young's modulus E", group)
        penalty = CST_DRILLING_FACTOR * E_el * h_el * area             # (n_el,)
        return K + penalty[:, None, None] * (np.swapaxes(T, 1, 2) @ T)
    raise ModelError(f"shell group {group!r}: membrane kind {kind!r} is not one of 'opt', 'cst'")


def _quadratic_shape_gradients(xy: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(n_el, n_points, 6, 2) x-y gradients of the six-node quadratic triangle's shape functions.

    N_1..3 = L_i (2 L_i - 1) at the corners, N_4 = 4 L_2 L_3, N_5 = 4 L_3 L_1, N_6 = 4 L_1 L_2
    at the mid-sides; ``points`` (n_points, 3) area coordinates.
    """
    x_ij, y_ij, area = _side_projections(xy)
    dLdx = np.stack([y_ij[:, 1, 2], y_ij[:, 2, 0], y_ij[:, 0, 1]], axis=1) / (2 * area[:, None])
    dLdy = np.stack([x_ij[:, 2, 1], x_ij[:, 0, 2], x_ij[:, 1, 0]], axis=1) / (2 * area[:, None])
    dLdX = np.stack([dLdx, dLdy], axis=2)                              # (n_el, 3, 2)
    n_points = points.shape[0]
    dNdL = np.zeros((n_points, 6, 3))
    for c in range(3):
        dNdL[:, c, c] = 4 * points[:, c] - 1
    for m, (i, j) in enumerate(_SIDES):
        dNdL[:, 3 + m, i] = 4 * points[:, j]
        dNdL[:, 3 + m, j] = 4 * points[:, i]
    return np.einsum("qal,eld->eqad", dNdL, dLdX)                      # (n_el, n_points, 6, 2)


def _dkt_slope_map(xy: np.ndarray) -> np.ndarray:
    """(n_el, 6, 2, 9) slopes beta = (-w_x, -w_y) at the 6 DKT points from [w_i, theta_x_i, theta_y_i].

    Corners: beta = (theta_y, -theta_x). Mid-side k of side i -> j (unit tangent s, length l):
    the tangential slope is that of the cubic w along the side, ``beta_s,k = -3 (w_j - w_i)/(2 l)
    - (beta_s,i + beta_s,j)/4``, the normal slope the mean ``(beta_n,i + beta_n,j)/2``; together
    ``beta_k = -3 (w_j - w_i)/(2 l) s + (I/2 - 3 s s^T/4)(beta_i + beta_j)``.
    """
    n_el = xy.shape[0]
    corner = np.zeros((2, 3))                                          # beta from (w, th_x, th_y)
    corner[0, 2] = 1.0
    corner[1, 1] = -1.0
    slope_map = np.zeros((n_el, 6, 2, 9))
    for c in range(3):
        slope_map[:, c, :, 3 * c:3 * c + 3] = corner
    for m, (i, j) in enumerate(_SIDES):
        side = xy[:, j] - xy[:, i]                                     # (n_el, 2)
        length = np.linalg.norm(side, axis=1)                          # (n_el,)
        s = side / length[:, None]                                     # (n_el, 2)
        w_coefficient = (-1.5 / length)[:, None] * s                   # (n_el, 2)
        slope_map[:, 3 + m, :, 3 * j] += w_coefficient
        slope_map[:, 3 + m, :, 3 * i] -= w_coefficient
        averaging = 0.5 * np.eye(2) - 0.75 * np.einsum("ea,eb->eab", s, s)  # (n_el, 2, 2)
        for node in (i, j):
            slope_map[:, 3 + m, :, 3 * node:3 * node + 3] += averaging @ corner
    return slope_map


def _dkt_curvature_operator(xy: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(n_el, n_points, 3, 9) curvatures [k_xx, k_yy, 2 k_xy] from [w_i, theta_x_i, theta_y_i]."""
    grad = _quadratic_shape_gradients(xy, points)                      # (n_el, q, 6, 2)
    slopes = _dkt_slope_map(xy)                                        # (n_el, 6, 2, 9)
    Bk = np.empty((xy.shape[0], points.shape[0], 3, 9))
    d_dx, d_dy = grad[..., 0], grad[..., 1]                            # (n_el, q, 6)
    beta_x, beta_y = slopes[:, :, 0], slopes[:, :, 1]                  # (n_el, 6, 9)
    Bk[:, :, 0] = d_dx @ beta_x                                        # beta_x,x
    Bk[:, :, 1] = d_dy @ beta_y                                        # beta_y,y
    Bk[:, :, 2] = d_dy @ beta_x + d_dx @ beta_y                        # beta_x,y + beta_y,x
    return Bk


def bending_stiffness(xy: np.ndarray, E, nu, h, *, group: str = "shell") -> np.ndarray:
    """DKT plate stiffness on the local DOFs ``[w_i, theta_x_i, theta_y_i]``, i = 1..3.

    ``K = sum_q (A/3) Bk_q^T (h^3/12) D Bk_q`` over the three mid-side points (exact: the
    curvatures are linear). theta_x, theta_y are rotation-vector components (theta_x = w_y,
    theta_y = -w_x), not the DKT beta of Batoz et al.

    Returns
    -------
    (n_el, 9, 9) symmetric, rank 6 (null space: w translation and the rotations about x and y
    with consistent w and theta); units as for :func:`membrane_stiffness`.
    """
    D, h_el, _ = _material(xy, E, nu, h, group)
    _, _, area = _side_projections(xy)
    Bk = _dkt_curvature_operator(xy, _MIDSIDE_POINTS)                  # (n_el, 3, 3, 9)
    weight = area * h_el ** 3 / 36.0                                   # (A/3) (h^3/12)
    return weight[:, None, None] * _congruence(Bk, D[:, None]).sum(axis=1)


def linear_stiffness(xy: np.ndarray, E, nu, h, membrane: str = "opt", *,
                     group: str = "shell") -> np.ndarray:
    """(n_el, 18, 18) flat-shell stiffness on ``[u, v, w, theta_x, theta_y, theta_z]`` per node.

    Membrane (:func:`membrane_stiffness` of the given kind) and DKT plate (:func:`bending_stiffness`)
    are uncoupled in a flat element. Symmetric, rank 12: the null space is the six rigid-body
    modes ``u = a + omega x X``, ``theta = omega``.
    """
    K = np.zeros((xy.shape[0], 18, 18))
    K[:, MEMBRANE_DOFS[:, None], MEMBRANE_DOFS[None, :]] = membrane_stiffness(
        xy, E, nu, h, membrane, group=group)
    K[:, BENDING_DOFS[:, None], BENDING_DOFS[None, :]] = bending_stiffness(xy, E, nu, h, group=group)
    return K


def centroid_operators(xy: np.ndarray, membrane: str = "opt", *,
                       group: str = "shell") -> tuple[np.ndarray, np.ndarray]:
    """Membrane strains and curvatures at the centroid from the 18 local DOFs.

    Returns
    -------
    Bm : (n_el, 3, 18) ``[e_xx, e_yy, gamma_xy]``. For "opt" this is the basic (mean) strain
        operator ``L^T / V`` with alpha_b = 3/2, which is also the centroid strain (the higher-
        order natural strains are linear with zero mean, hence zero at the centroid); for "cst"
        the CST strain.
    Bk : (n_el, 3, 18) DKT curvatures ``[k_xx, k_yy, 2 k_xy] = [-w_xx, -w_yy, -2 w_xy]`` at
        the centroid (the mean curvature, as the DKT curvatures are linear).

    Stress resultants: ``N = h D Bm d``, ``M = (h^3/12) D Bk d``.
    """
    if membrane == "opt":
        membrane_operator = _opt_basic_strain_operator(xy)
    elif membrane == "cst":
        membrane_operator = _cst_strain_operator(xy)
    else:
        raise ModelError(f"shell group {group!r}: membrane kind {membrane!r} is not one of 'opt', 'cst'")
    n_el = xy.shape[0]
    Bm = np.zeros((n_el, 3, 18))
    Bm[:, :, MEMBRANE_DOFS] = membrane_operator
    Bk = np.zeros((n_el, 3, 18))
    Bk[:, :, BENDING_DOFS] = _dkt_curvature_operator(xy, np.full((1, 3), 1.0 / 3.0))[:, 0]
    return Bm, Bk


def lumped_mass(area: np.ndarray, rho, h) -> np.ndarray:
    """(n_el,) translational mass per node, ``rho h A / 3`` [kg]."""
    return np.asarray(rho, dtype=float) * np.asarray(h, dtype=float) * np.asarray(area) / 3.0


def nodal_rotary_inertia(area: np.ndarray, rho, h) -> np.ndarray:
    """(n_el, 3, 3) LOCAL rotary inertia of the element's share at each of its nodes [kg m^2].

    The through-thickness rotary inertia of a third of the element, ``J_xx = J_yy = rho h^3 A / 36``
    (= rho (h^3/12) (A/3)), and ``J_zz = J_xx + J_yy`` (perpendicular-axis rule of a thin lamina
    for the same distribution): a choice that keeps the nodal inertia isotropic in the plane and
    positive definite. The in-plane extent of the lumped area is not included (it vanishes with
    the mesh size, the through-thickness one does not).
    """
    J = np.asarray(rho, dtype=float) * np.asarray(h, dtype=float) ** 3 * np.asarray(area) / 36.0
    J = np.broadcast_to(J, np.shape(area))
    inertia = np.zeros(np.shape(area) + (3, 3))
    inertia[..., 0, 0] = J
    inertia[..., 1, 1] = J
    inertia[..., 2, 2] = 2.0 * J
    return inertia

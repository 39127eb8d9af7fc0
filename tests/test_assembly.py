"""Sparse assembly against a slow, obviously-correct dense assembly; mass, gravity and momentum
against hand values; model input errors.

The dense reference numbers the DOFs itself (node by node: ux, uy and rz on nodes that carry a
beam) and calls one-element kernels in a Python loop, so it shares nothing with DofMap or the
CSC pattern except the element kernels.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb
from flexmb import Beam2D, Truss

# ---------------------------------------------------------------- mixed test model
COORDS = np.array([[0.0, 0.0], [1.0, 0.2], [2.1, 0.1], [3.0, -0.3], [4.2, 0.0],   # beam chain 0-4
                   [1.5, 1.4], [3.1, 1.2], [2.0, -1.5]])                        # truss-only 5, 6, 7
BEAMS = np.array([[0, 1], [1, 2], [2, 3], [3, 4]])
BARS = np.array([[1, 5], [5, 6], [6, 3], [5, 2], [2, 6], [0, 7], [7, 3], [4, 6]])
FIXED = {0: "all", 7: ["uy"], 4: ["rz"]}
POINT_MASS = (5, 2.5, 0.0)


def _mixed_model(rng: np.random.Generator, mass: str = "lumped") -> flexmb.Model:
    model = flexmb.Model(dim=2)
    model.add_nodes(COORDS)
    model.add_beam2d(BEAMS, EA=rng.uniform(1e3, 1e4, len(BEAMS)), EI=rng.uniform(10.0, 100.0, len(BEAMS)),
                     rho_A=rng.uniform(1.0, 3.0, len(BEAMS)), rho_I=rng.uniform(0.01, 0.1, len(BEAMS)),
                     mass=mass)
    model.add_truss(BARS, EA=rng.uniform(1e3, 1e4, len(BARS)), rho_A=rng.uniform(0.5, 2.0, len(BARS)), mass=mass)
    for node, names in FIXED.items():
        model.fix(node, names)
    model.add_point_mass(*POINT_MASS)
    return model


def _dense_numbering(model: flexmb.Model):
    """Hand DOF numbering: (first DOF per node, has rotation per node, free indices, n_dof)."""
    has_rot = np.zeros(model.n_nodes, dtype=bool)
    for g in model.groups:
        if isinstance(g, Beam2D):
            has_rot[g.connectivity.ravel()] = True
    first, n = [], 0
    for node in range(model.n_nodes):
        first.append(n)
        n += 3 if has_rot[node] else 2
    names = ("ux", "uy", "rz")
    fixed = {first[node] + names.index(d) for (node, d) in model.prescribed}
    for node in getattr(model, "clamped", ()):                      # fix(node) = every DOF the node has
        fixed |= {first[node] + k for k in range(3 if has_rot[node] else 2)}
    free = np.array([i for i in range(n) if i not in fixed])
    return first, has_rot, free, n


def _element_dofs(group, conn, first) -> list[int]:
    per_node = 3 if isinstance(group, Beam2D) else 2
    return [first[node] + k for node in conn for k in range(per_node)]


def _single(group, e: int):
    """One-element copy of element e of ``group``."""
    conn = np.array([[0, 1]])
    if isinstance(group, Beam2D):
        return Beam2D(conn, group.EA[e], group.EI[e], group.rho_A[e], group.rho_I[e], group.mass)
    return Truss(conn, group.dim, group.EA[e], group.rho_A[e], group.mass)


def _dense_assembly(model: flexmb.Model, u: np.ndarray, u0: np.ndarray | None = None):
    """Slow reference: force (n,), tangent (n, n), mass (n, n); mid-point kernels if u0 is given."""
    first, has_rot, _, n = _dense_numbering(model)
    q, K, M = np.zeros(n), np.zeros((n, n)), np.zeros((n, n))
    for group in model.groups:
        for e, conn in enumerate(group.connectivity):
            dofs = _element_dofs(group, conn, first)
            el = _single(group, e)
            Xe = model.coordinates[conn][None]                         # (1, 2, 2)
            if u0 is None:
                qe, Ke = el.force_and_tangent(Xe, u[dofs][None])
            else:
                qe, Ke = el.mid_point_force_and_tangent(Xe, u0[dofs][None], u[dofs][None])
            q[dofs] += qe[0]
            K[np.ix_(dofs, dofs)] += Ke[0]
            M[np.ix_(dofs, dofs)] += el.mass_matrix(Xe)[0]
    for node, m, inertia in model.point_masses:
        M[first[node], first[node]] += m
        M[first[node] + 1, first[node] + 1] += m
        if has_rot[node]:
            M[first[node] + 2, first[node] + 2] += inertia
    return q, K, M


def _large_displacement(rng: np.random.Generator, model: flexmb.Model, n_dof: int) -> np.ndarray:
    """Rigid rotation by 2.4 rad plus random perturbations (rotations of up to 0.5 rad)."""
    first, has_rot, _, _ = _dense_numbering(model)
    phi = 2.4
    R = np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])
    u = np.zeros(n_dof)
    for node, X in enumerate(model.coordinates):
        u[first[node]:first[node] + 2] = R @ X - X + rng.uniform(-0.1, 0.1, 2)
        if has_rot[node]:
            u[first[node] + 2] = phi + rng.uniform(-0.5, 0.5)
    return u


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


# ------------------------------------------------------------- assembly vs dense loops
def test_dof_map_matches_hand_numbering(rng):
    model = _mixed_model(rng)
    asm = flexmb.Assembly(model)
    first, has_rot, free, n = _dense_numbering(model)
    assert asm.n_dof == n, f"{asm.n_dof} DOFs, hand count {n}"
    np.testing.assert_array_equal(asm.dofs.first, first)
    np.testing.assert_array_equal(asm.dofs.has_rotations, has_rot)
    np.testing.assert_array_equal(asm.dofs.free, free)
    assert asm.n_free == free.size


@pytest.mark.parametrize("mass", ["lumped", "consistent"])
def test_sparse_tangent_and_force_match_dense_assembly(mass, rng):
    model = _mixed_model(rng, mass)
    asm = flexmb.Assembly(model)
    _, _, free, n = _dense_numbering(model)
    u = _large_displacement(rng, model, n)
    q_ref, K_ref, M_ref = _dense_assembly(model, u)
    q, data = asm.force_and_tangent(u)
    K = asm.free_matrix(data).toarray()
    err_K = _rel(K, K_ref[np.ix_(free, free)])
    assert err_K < 1e-13, f"assembled free-free tangent differs from the dense loop by {err_K:.2e} (relative)"
    err_q = _rel(q, q_ref)
    assert err_q < 1e-13, f"assembled internal force differs from the dense loop by {err_q:.2e} (relative)"
    assert _rel(asm.internal_force(u), q_ref) < 1e-13, "Assembly.internal_force differs from the dense loop"
    err_M = _rel(asm.mass.toarray(), M_ref)
    assert err_M < 1e-14, f"assembled mass matrix differs from the dense loop by {err_M:.2e}"
    err_Mf = _rel(asm.free_matrix(asm.mass_data).toarray(), M_ref[np.ix_(free, free)])
    assert err_Mf < 1e-14, f"free-free mass on the tangent pattern differs from the dense loop by {err_Mf:.2e}"
    first = _dense_numbering(model)[0]
    energy = sum(_single(g, e).strain_energy(model.coordinates[c][None], u[_element_dofs(g, c, first)][None])[0]
                 for g in model.groups for e, c in enumerate(g.connectivity))
    assert abs(asm.strain_energy(u) - energy) <= 1e-13 * energy, "assembled strain energy differs from the loop"


def test_sparse_mid_point_tangent_matches_dense_assembly(rng):
    model = _mixed_model(rng)
    asm = flexmb.Assembly(model)
    _, _, free, n = _dense_numbering(model)
    u0 = _large_displacement(rng, model, n)
    u1 = u0 + rng.uniform(-0.05, 0.05, n)
    q_ref, K_ref, _ = _dense_assembly(model, u1, u0)
    q, data = asm.mid_point_force_and_tangent(u0, u1)
    err_K = _rel(asm.free_matrix(data).toarray(), K_ref[np.ix_(free, free)])
    err_q = _rel(q, q_ref)
    assert err_K < 1e-13, f"assembled mid-point tangent differs from the dense loop by {err_K:.2e}"
    assert err_q < 1e-13, f"assembled mid-point force differs from the dense loop by {err_q:.2e}"


def test_sparsity_pattern_is_built_once_and_reused(rng):
    model = _mixed_model(rng)
    asm = flexmb.Assembly(model)
    n = asm.n_dof
    u_a, u_b = _large_displacement(rng, model, n), _large_displacement(rng, model, n)
    _, data_a = asm.force_and_tangent(u_a)
    _, data_b = asm.force_and_tangent(u_b)
    _, data_m = asm.mid_point_force_and_tangent(u_a, u_b)
    mats = [asm.free_matrix(d) for d in (data_a, data_b, data_m, asm.mass_data)]
    for d in (data_a, data_b, data_m, asm.mass_data):
        assert d.shape == (asm.nnz,), f"matrix data has shape {d.shape}, pattern has {asm.nnz} entries"
    for A in mats[1:]:
        np.testing.assert_array_equal(A.indices, mats[0].indices)
        np.testing.assert_array_equal(A.indptr, mats[0].indptr)
    A = mats[0]
    assert A.has_canonical_format, "free-free tangent has unsorted or duplicate entries"
    assert np.all(A.diagonal() != 0.0), "a free DOF has a zero diagonal in the tangent"
    # the pattern is exactly the element couplings of free DOFs (plus the diagonal), nothing more
    first, _, free, n = _dense_numbering(model)
    coupled = np.eye(n, dtype=bool)
    for g in model.groups:
        for c in g.connectivity:
            d = _element_dofs(g, c, first)
            coupled[np.ix_(d, d)] = True
    expected_nnz = int(coupled[np.ix_(free, free)].sum())
    assert asm.nnz == expected_nnz, f"pattern has {asm.nnz} entries, the element couplings give {expected_nnz}"


# ------------------------------------------------------------------ mass and gravity
def _l_model(mass: str) -> flexmb.Model:
    """Bars (0,0)-(3,0) and (3,0)-(3,4), rho_A = 2 kg/m: masses 6 kg and 8 kg; 1.5 kg at node 2."""
    model = flexmb.Model(dim=2)
    model.add_nodes([[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]])
    model.add_truss(np.array([[0, 1], [1, 2]]), EA=1e4, rho_A=2.0, mass=mass)
    model.add_point_mass(2, 1.5)
    return model


def test_lumped_mass_and_gravity_hand_values():
    model = _l_model("lumped")
    model.set_gravity([0.0, -9.81])
    model.add_load(1, "ux", 5.0)
    asm = flexmb.Assembly(model)
    node_mass = np.array([3.0, 3.0 + 4.0, 4.0 + 1.5])
    np.testing.assert_allclose(asm.mass.toarray(), np.diag(np.repeat(node_mass, 2)), rtol=0, atol=1e-14)
    f = asm.external_force(0.0)
    expected = np.zeros(6)
    expected[1::2] = -9.81 * node_mass
    expected[2] += 5.0
    assert np.abs(f - expected).max() < 1e-12, f"gravity + load {f} vs hand values {expected}"
    f_half = asm.external_force(0.5, statics=True)
    assert np.abs(f_half - 0.5 * expected).max() < 1e-12, f"statics at lam = 0.5: {f_half} vs {0.5 * expected}"


def test_consistent_mass_and_gravity_hand_values():
    model = _l_model("consistent")
    model.set_gravity([1.0, -9.81])
    asm = flexmb.Assembly(model)
    M = np.zeros((6, 6))
    for (a, b), m in (((0, 1), 6.0), ((1, 2), 8.0)):
        for k in range(2):
            i, j = 2 * a + k, 2 * b + k
            M[i, i] += m / 3.0
            M[j, j] += m / 3.0
            M[i, j] += m / 6.0
            M[j, i] += m / 6.0
    M[4, 4] += 1.5
    M[5, 5] += 1.5
    err = np.abs(asm.mass.toarray() - M).max()
    assert err < 1e-14, f"consistent mass differs from the hand matrix by {err:.2e} kg"
    # consistent mass moves no weight between nodes: nodal weight = half the adjacent bar masses
    node_mass = np.array([3.0, 7.0, 5.5])
    expected = np.stack([1.0 * node_mass, -9.81 * node_mass], axis=1).ravel()
    f = asm.external_force(0.0)
    assert np.abs(f - expected).max() < 1e-12, f"consistent-mass gravity {f} vs hand values {expected}"
    assert abs(f[1::2].sum() + 9.81 * 15.5) < 1e-12, "total weight is not g times the total mass"


# --------------------------------------------------------------- momentum and energy
@pytest.mark.parametrize("mass", ["lumped", "consistent"])
def test_rigid_rotation_angular_momentum_and_kinetic_energy(mass):
    """Beam (0,0)-(0,2) in 2 elements, rho_A = 3, rho_I = 0.5; bar (1,0)-(3,0), rho_A = 2; 0.4 kg at (3,0).

    Moment of inertia about the origin (kg m^2). Consistent mass integrates rho_A r^2 exactly:
    beam 3 * 2^3 / 3 = 8, bar 2 * (3^3 - 1^3) / 3 = 52/3. Lumped: beam nodes at r = 0, 1, 2 m
    carry 1.5, 3, 1.5 kg -> 0 + 3 + 6 = 9; bar nodes at r = 1, 3 m carry 2 kg each -> 2 + 18 = 20.
    Both add the rotary inertia rho_I * 2 m = 1 and the point mass 0.4 * 3^2 = 3.6.
    """
    model = flexmb.Model(dim=2)
    model.add_nodes([[0.0, 0.0], [0.0, 1.0], [0.0, 2.0], [1.0, 0.0], [3.0, 0.0]])
    model.add_beam2d(np.array([[0, 1], [1, 2]]), EA=1e5, EI=1e3, rho_A=3.0, rho_I=0.5, mass=mass)
    model.add_truss(np.array([[3, 4]]), EA=1e5, rho_A=2.0, mass=mass)
    model.add_point_mass(4, 0.4)
    I = (8.0 + 52.0 / 3.0 if mass == "consistent" else 9.0 + 20.0) + 1.0 + 3.6
    asm = flexmb.Assembly(model)
    dofs = asm.dofs
    phi, omega = 2.7, 1.7                                             # rotated configuration, rad/s
    R = np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])
    u, v = np.zeros(asm.n_dof), np.zeros(asm.n_dof)
    for node, X in enumerate(model.coordinates):
        x = R @ X
        ix, iy = dofs.index(node, "ux"), dofs.index(node, "uy")
        u[[ix, iy]] = x - X
        v[[ix, iy]] = omega * np.array([-x[1], x[0]])
        if dofs.has_rotations[node]:
            u[dofs.index(node, "rz")], v[dofs.index(node, "rz")] = phi, omega
    L = asm.angular_momentum(u, v)
    assert L.shape == (1,)
    miss = abs(L[0] / (I * omega) - 1.0)
    assert miss < 1e-12, f"{mass}: angular momentum {L[0]:.12g} vs I omega = {I * omega:.12g} ({miss:.2e} off)"
    T = asm.kinetic_energy(v)
    miss = abs(T / (0.5 * I * omega**2) - 1.0)
    assert miss < 1e-12, f"{mass}: kinetic energy {T:.12g} vs I omega^2/2 = {0.5 * I * omega**2:.12g} ({miss:.2e})"
    assert asm.strain_energy(u) < 1e-20, "rigid rotation stores strain energy"


def test_angular_momentum_3d_hand_value():
    """Bar (1,0,0)-(3,0,0), lumped 2 kg per node, omega = (a, b, c).

    L = sum m (|x|^2 omega - (x.omega) x) = (0, 20 b, 20 c) kg m^2/s.
    """
    model = flexmb.Model(dim=3)
    model.add_nodes([[1.0, 0.0, 0.0], [3.0, 0.0, 0.0]])
    model.add_truss(np.array([[0, 1]]), EA=1e5, rho_A=2.0)
    asm = flexmb.Assembly(model)
    omega = np.array([0.3, -1.1, 0.7])
    v = np.cross(omega[None], model.coordinates).ravel()
    L = asm.angular_momentum(np.zeros(6), v)
    expected = np.array([0.0, 20.0 * omega[1], 20.0 * omega[2]])
    assert np.abs(L - expected).max() < 1e-13, f"3D angular momentum {L} vs hand value {expected}"
    T = asm.kinetic_energy(v)
    assert abs(T - 0.5 * omega @ L) < 1e-13, f"kinetic energy {T} vs omega.L/2 = {0.5 * omega @ L}"


# ------------------------------------------------------------------------ input errors
def test_model_errors_name_the_offending_item():
    model = flexmb.Model(dim=2)
    model.add_nodes([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(flexmb.ModelError, match=r"element 1 of group 'bars'.*\[1, 5\]"):
        model.add_truss(np.array([[0, 1], [1, 5]]), EA=1.0, name="bars")
    with pytest.raises(flexmb.ModelError, match=r"element 0 of group 'beams'.*\[-1, 1\]"):
        model.add_beam2d(np.array([[-1, 1]]), EA=1.0, EI=1.0, name="beams")
    with pytest.raises(flexmb.ModelError, match=r"element 1 of group 'bars' has zero length.*\[2, 0\]"):
        model.add_truss(np.array([[0, 1], [2, 0]]), EA=1.0, name="bars")
    assert model.groups == [], "a rejected group was added to the model"
    with pytest.raises(flexmb.ModelError, match=r"node 9 does not exist"):
        model.add_load(9, "uy", 1.0)
    with pytest.raises(flexmb.ModelError, match=r"node 3 does not exist"):
        model.fix(3)
    with pytest.raises(flexmb.ModelError, match=r"unknown DOF 'uz'"):
        model.add_load(1, "uz", 1.0)
    with pytest.raises(flexmb.ModelError, match=r"node 3 has a non-finite coordinate"):
        model.add_nodes([[np.nan, 0.0]])
    assert issubclass(flexmb.ModelError, ValueError)


def test_element_value_errors_reach_the_model_user():
    model = flexmb.Model(dim=2)
    model.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    with pytest.raises(ValueError, match=r"EI of element 1 is -2"):
        model.add_beam2d(np.array([[0, 1], [1, 2]]), EA=1.0, EI=[1.0, -2.0])
    with pytest.raises(flexmb.ModelError, match=r"needs a 2D model"):
        flexmb.Model(dim=3).add_beam2d(np.array([[0, 1]]), EA=1.0, EI=1.0)
    with pytest.raises(flexmb.ModelError, match=r"is 3D, the model is 2D"):
        model.add_group(Truss(np.array([[0, 1]]), 3, EA=1.0))


def test_dof_map_errors_name_the_node():
    model = flexmb.Model(dim=2)
    model.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [5.0, 5.0]])
    model.add_truss(np.array([[0, 1], [1, 2]]), EA=1.0)
    with pytest.raises(flexmb.ModelError, match=r"node 3 is not connected"):
        flexmb.Assembly(model)
    model.add_point_mass(3, 1.0)
    asm = flexmb.Assembly(model)
    with pytest.raises(flexmb.ModelError, match=r"node 1 has no DOF 'rz'"):
        asm.dofs.index(1, "rz")

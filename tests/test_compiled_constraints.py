"""The compiled joint kernels (flexmb.compiled.constraints behind ConstraintSystem.evaluate, values,
vectors and augmented) against their numpy specifications ``reference_*`` to 1e-12, and their
derivatives against central differences.

Models: two bodies joined by every joint kind (driven ones too) and a beam node attached to a
body, in 2D and 3D (test_joints.every_joint), at random large-rotation states (rotation vectors
up to several radians, Cayley steps up to 1 rad), in the end-point and the mid-point form.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from test_joints import every_joint

TOL = 1e-12


def _states(asm: fm.Assembly, rng: np.random.Generator, scale: float):
    u0 = rng.normal(size=asm.n_dof) * scale
    d = rng.normal(size=asm.n_dof) * 0.3
    return u0, d, asm.cayley_update(u0, d)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max(initial=0.0) / max(np.abs(b).max(initial=0.0), 1e-30))


def _same_terms(got, want, what: str) -> None:
    assert _relative(got.phi, want.phi) <= TOL, f"{what}: phi off by {_relative(got.phi, want.phi):.2e}"
    assert _relative(got.force, want.force) <= TOL, f"{what}: force off by {_relative(got.force, want.force):.2e}"
    for name in ("g", "c", "k"):
        (r, c, v), (rr, cc, vv) = getattr(got, name), getattr(want, name)
        assert np.array_equal(r, rr) and np.array_equal(c, cc), f"{what}: triplet pattern of {name} differs"
        assert _relative(v, vv) <= TOL, f"{what}: values of {name} off by {_relative(v, vv):.2e}"


@pytest.mark.parametrize("dim", [2, 3])
def test_evaluate_equals_its_reference_at_large_rotations(dim, rng):
    asm = fm.Assembly(every_joint(dim))
    cs = asm.constraints
    for scale in (0.3, 1.5, 3.0):
        u0, d, u1 = _states(asm, rng, scale)
        lam, t0, t1 = rng.normal(size=cs.n), 0.2, 0.35
        P, r = cs.vectors(u1)
        P_ref, r_ref = cs.reference_vectors(u1)
        assert _relative(P, P_ref) <= TOL and _relative(r, r_ref) <= TOL, "vectors differ from the reference"
        assert _relative(cs.values(u1, t1), cs.reference_values(u1, t1)) <= TOL, "values differ from the reference"
        _same_terms(cs.evaluate(u1, t1, lam), cs.reference_evaluate(u1, t1, lam), f"end point, scale {scale}")
        _same_terms(cs.evaluate(u1, t1, lam, u0=u0, d=d, t0=t0),
                    cs.reference_evaluate(u1, t1, lam, u0=u0, d=d, t0=t0), f"mid-point, scale {scale}")


@pytest.mark.parametrize("dim", [2, 3])
def test_compiled_tangents_match_central_differences(dim, rng):
    """K = d(G^T lambda)/dd and C = dPhi/dd of the mid-point form (d: the step increment,
    Cayley parameters at 3D rotations); the end-point form is checked in test_joints."""
    asm = fm.Assembly(every_joint(dim))
    cs = asm.constraints
    u0, d, u1 = _states(asm, rng, 2.0)
    lam, t0, t1, h = rng.normal(size=cs.n), 0.2, 0.35, 1e-6
    ct = cs.evaluate(u1, t1, lam, u0=u0, d=d, t0=t0)
    C_fd, K_fd = np.zeros((cs.n, asm.n_dof)), np.zeros((asm.n_dof, asm.n_dof))
    for j in range(asm.n_dof):
        e = np.zeros(asm.n_dof)
        e[j] = h
        up, um = asm.cayley_update(u0, d + e), asm.cayley_update(u0, d - e)
        C_fd[:, j] = (cs.values(up, t1) - cs.values(um, t1)) / (2 * h)
        K_fd[:, j] = (cs.evaluate(up, t1, lam, u0=u0, d=d + e, t0=t0).force
                      - cs.evaluate(um, t1, lam, u0=u0, d=d - e, t0=t0).force) / (2 * h)
    assert _relative(ct.C.toarray(), C_fd) < 1e-6, f"C vs central differences: {_relative(ct.C.toarray(), C_fd):.2e}"
    assert _relative(ct.K.toarray(), K_fd) < 1e-6, f"K vs central differences: {_relative(ct.K.toarray(), K_fd):.2e}"


@pytest.mark.parametrize("dim", [2, 3])
def test_augmented_matrix_equals_the_triplet_assembly(dim, rng):
    """The in-place filled augmented matrix against [[J + K, G^T s], [kappa C, 0]] built from the
    triplets by scipy (twice: the second call reuses the cached pattern)."""
    asm = fm.Assembly(every_joint(dim))
    cs = asm.constraints
    free, fpos, nf = asm.dofs.free, asm.dofs.free_position, asm.dofs.free.size
    for _ in range(2):
        u0, d, u1 = _states(asm, rng, 1.0)
        ct = cs.evaluate(u1, 0.3, rng.normal(size=cs.n), u0=u0, d=d, t0=0.2)
        jac = asm.free_matrix(rng.normal(size=asm.nnz))
        lam_scale, kappa = 3.0, 7.0
        A = cs.augmented(ct, jac, fpos, lam_scale, kappa)
        want = sp.bmat([[jac + ct.K[free][:, free], lam_scale * ct.G[:, free].T],
                        [kappa * ct.C[:, free], None]]).toarray()
        assert A.shape == (nf + cs.n, nf + cs.n)
        err = _relative(A.toarray(), want)
        assert err <= TOL, f"augmented matrix off by {err:.2e} (relative)"


@pytest.mark.parametrize("dim", [2, 3])
def test_joint_reactions_equal_their_reference(dim, rng):
    asm = fm.Assembly(every_joint(dim))
    cs = asm.constraints
    for scale in (0.3, 2.0):
        _, _, u = _states(asm, rng, scale)
        lam = rng.normal(size=cs.n)
        got, want = cs.joint_reactions(u, lam, 0.3, asm.dofs), cs.reference_joint_reactions(u, lam, 0.3, asm.dofs)
        assert len(got) == len(want) == len(cs.joints)
        for k, ((f, m), (ff, mm)) in enumerate(zip(got, want)):
            assert f.shape == ff.shape and m.shape == mm.shape, f"joint {k}: shapes differ"
            scale_f = max(np.abs(ff).max(), np.abs(mm).max(), 1e-30)
            err = max(np.abs(f - ff).max(), np.abs(m - mm).max()) / scale_f
            assert err <= TOL, f"joint {k} ({cs.joints[k].kind}): reaction off by {err:.2e} (relative)"

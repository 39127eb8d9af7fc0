"""One compiled call per Newton iteration, and per step, of the mid-point scheme for small spatial
models of 3D modal bodies and rigid bodies (on joints).

:meth:`flexmb.integrators.schemes.MidPoint.residual` (its spatial branch) and the step loop's
augmented residual (:func:`flexmb.integrators.time_stepping._sub_step`: ``[g + G^T lambda; kappa Phi]``
with the multipliers scaled by lam_scale and kappa = 100 F / L) make a few dozen numpy and kernel
calls per iteration, which cost a small model more than its kernels. Here the same terms are summed
in one call, in the same order, for models whose element groups are one 3D modal body
(:class:`~flexmb.elements.floating_frame.ModalBody` with its
:class:`~flexmb.elements.floating_frame3d.FloatingFrameMass3D` inertia) or none, whose other masses
are constant (rigid bodies, point masses: the constant mass and the rotary inertia J of the rotating
nodes), on joints or without (no vectors, terms or multipliers: the augmented system is the FE one),
without ties, damping or configuration-dependent loads:

* the step's motion: the increment d (Cayley parameters w at the rotating nodes), v1 = 2 d/dt - v0,
  the rotating nodes' end angular velocity R_{n+1} Omega_{n+1} (:func:`flexmb.compiled.rigid.mid_point_body_rates`),
  the modal frame's own rule (:func:`flexmb.compiled.floating_frame3d.mid_point_velocity`), a_m;
* the modal body's elastic force K_e (q0 + q1)/2 and its inertia
  (:func:`flexmb.compiled.floating_frame3d.mid_point_inertia`), the constant mass's M a_m, the rotary
  terms (:func:`flexmb.compiled.rigid.mid_point_rotary_terms`) and their blocks, g = q_m - f_m + inertia and
  the force scale of ``Scheme._scale``;
* the joints' terms (:func:`flexmb.compiled.constraints.evaluate`, mid-point form; their time
  functions evaluated by the caller once per step), the augmented residual and the augmented
  Jacobian's data on its fixed pattern (:func:`flexmb.compiled.constraints.augmented_data`).

:func:`spatial_mid_point_newton` runs the whole Newton solve of a step around it: the loop of
:func:`~flexmb.integrators.newton.newton_solve` (:func:`flexmb.compiled.dense_newton.newton_correction`)
on the unknowns (u_free, lambda / lam_scale), with the step's update of the rotations
(``R <- cay(w + dw) R_n``, the rotation corrections capped). The Python path is the specification
(``tests/test_compiled_spatial_step.py`` compares residuals, Jacobians, iterates and logs).
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.constraints import augmented_data, evaluate
from flexmb.compiled.dense_newton import CONTINUE, new_counters, new_work, newton_correction, solve_result
from flexmb.compiled.floating_frame3d import mid_point_inertia_from, mid_point_velocity, start_momenta
from flexmb.compiled.rigid import mid_point_body_rates, mid_point_rotary_terms
from flexmb.compiled.rotations import cayley_increment_batch, cayley_update_batch, spatial_inertia_batch
from flexmb.compiled.scatter import gather_vector, scatter_matrix, scatter_vector
from flexmb.compiled.sparse_ops import csr_matvec, free_norm, norm

jit = numba.njit(cache=True)


@jit
def _rows(values, dofs):
    """values[dofs] (n, 3) for a vector values (n_dof,) and DOF rows dofs (n, 3)."""
    out = np.empty(dofs.shape)
    for k in range(dofs.shape[0]):
        for i in range(dofs.shape[1]):
            out[k, i] = values[dofs[k, i]]
    return out


@jit
def _spatial_momenta(p, rotation_dofs, rotary_inertia, u, v) -> None:
    """p[rotation_dofs] = R J R^T omega (n_r, 3) at the rotating nodes of the state u, v (n_dof,). The
    3-term sums of this module's products of a (3, 3) and a (3,) array are summed in the order of the
    numpy specification's ``einsum("nij,nj->ni")`` (two lanes: (x0 + x2) + x1), so that the values are
    the same bit for bit."""
    A = spatial_inertia_batch(_rows(u, rotation_dofs), rotary_inertia)
    for k in range(rotation_dofs.shape[0]):
        o0, o1, o2 = v[rotation_dofs[k, 0]], v[rotation_dofs[k, 1]], v[rotation_dofs[k, 2]]
        for i in range(3):
            p[rotation_dofs[k, i]] = (A[k, i, 0] * o0 + A[k, i, 2] * o2) + A[k, i, 1] * o1    # einsum's order


@jit
def momentum_norm(mass_indptr, mass_indices, mass_values, free, rotation_dofs, rotary_inertia, u, v):
    """``|p|`` over the free DOFs of the momenta p = M v with R J R^T omega at the rotating nodes
    (kg m/s; ``Scheme._scale``'s), for the state u, v (n_dof,)."""
    p = csr_matvec(mass_indptr, mass_indices, mass_values, v)
    _spatial_momenta(p, rotation_dofs, rotary_inertia, u, v)
    return free_norm(p, free)


@jit
def _frame_velocities(body, u0, u1, v0, dt, v1) -> None:
    """v1 (n_dof,) at the modal body's frame rotations by its own rule (``Assembly.set_modal_frame_velocities``)."""
    edofs, frame_rotations = body[0], body[3]
    n_el, ne = edofs.shape
    frame_velocity = np.empty((n_el, ne))
    mid_point_velocity(gather_vector(u0, edofs), gather_vector(u1, edofs), gather_vector(v0, edofs), dt,
                       frame_velocity)
    for e in range(n_el):
        for i in range(3):
            v1[frame_rotations[e, i]] = frame_velocity[e, 3 + i]


@jit
def body_start_momenta(body, u0, v0):
    """The modal body's start momenta (n_el, ne) of a step from u0, v0 (n_dof,)
    (:func:`~flexmb.compiled.floating_frame3d.start_momenta`; ``body`` as
    :func:`spatial_mid_point_residual` takes it), an empty (0, 0) array without a body."""
    if body is None:                              # (a compile-time branch: body is None or a tuple)
        return np.empty((0, 0))
    edofs, before, after = body[0], body[4], body[5]
    p0 = np.empty(edofs.shape)
    start_momenta(before[0], before[1], before[2], gather_vector(u0, edofs), gather_vector(v0, edofs), after[0],
                  after[1], after[2], after[8], p0)
    return p0


@jit
def _body_forces(body, u0, u1, v0, p0, dt, tangent, jacobian, data, q_m, f_c, d_c) -> None:
    """The modal body's terms, in ``Assembly.mid_point_forces_and_inertia``'s order: its elastic force
    K_e (u0 + u1)/2 into q_m with, with ``jacobian``, its tangent K_e/2 into data, its inertia (from the
    start momenta p0, in the tangent's arithmetic with ``tangent``) into f_c (n_dof,) with its tangent
    into d_c (nnz,)."""
    edofs, entry_map, stiffness, _, before, after = body
    n_el, ne = edofs.shape
    ue0, ue1, ve0 = gather_vector(u0, edofs), gather_vector(u1, edofs), gather_vector(v0, edofs)
    q_e = np.empty((n_el, ne))
    for e in range(n_el):
        for i in range(ne):
            acc = 0.0
            for j in range(ne):
                acc += 0.5 * (ue0[e, j] + ue1[e, j]) * stiffness[i, j]
            q_e[e, i] = acc
    if jacobian:
        K_e = np.empty((n_el, ne, ne))
        for e in range(n_el):
            for i in range(ne):
                for j in range(ne):
                    K_e[e, i, j] = 0.5 * stiffness[i, j]
        scatter_matrix(data, K_e, entry_map)
    scatter_vector(q_m, q_e, edofs)
    F = np.empty((n_el, ne))
    J = np.empty((n_el if jacobian else 0, ne, ne))
    mid_point_inertia_from(*before, ue0, ue1, ve0, p0, dt, F, J, tangent, jacobian, *after)
    if jacobian:
        scatter_matrix(d_c, J, entry_map)
    scatter_vector(f_c, F, edofs)


@jit
def spatial_mid_point_residual(free, rotation_dofs, rotary_inertia, mass_indptr, mass_indices, mass_values,
                               mass_data, rotary_positions, rotary_entries, body, u0, v0, p0,
                               momentum_norm0, dt, mass_factor, f_m, u1, tangent, jacobian, g, data, d, v1, a_m):
    """The mid-point residual g = q_m - f_m + inertia (n_dof,) at u1 of a model of rigid bodies and at
    most one 3D modal body (module docstring), as the spatial branch of
    :meth:`flexmb.integrators.schemes.MidPoint.residual` computes it, in the same order; written in
    place with d, v1, a_m (n_dof,) and, with ``jacobian`` (which needs ``tangent``), the Jacobian data
    (nnz,) ``mass_factor M + dq_m/du1 + df_c/du1 + rotary blocks`` (derivatives w.r.t. the step's Cayley
    parameters at the rotating nodes). With ``tangent`` the modal body's inertia is the one of its
    tangent's pass, also without the data (the same g bit for bit), else its value alone's.

    The constant mass as CSR arrays (n_dof rows) and its free-free data (nnz,); rotation_dofs (n_r, 3)
    and rotary_inertia J (n_r, 3, 3) of the rotating nodes; rotary_positions, rotary_entries (n_s,):
    where the entries of the rotary blocks (n_r, 3, 3, flattened) go in the data. ``body``: the
    modal body's (element DOFs (n_el, ne), entry map (n_el, ne, ne), element stiffness K_e
    blockdiag(0, K) (ne, ne), frame rotation DOFs (n_el, 3), then its inertia kernel's
    (:func:`~flexmb.compiled.floating_frame3d.mid_point_inertia`) arguments before u0 and after
    ``tangent``, two tuples), None for a model of rigid bodies. u0, v0 (n_dof,) the step's
    start, p0 the body's start momenta (:func:`body_start_momenta`), momentum_norm0 its ``|p|``
    (:func:`momentum_norm`), f_m (n_dof,) the step's external force.
    Returns the force scale (N)."""
    n = u0.size
    rd = rotation_dofs
    n_r = rd.shape[0]
    psi0, psi1 = _rows(u0, rd), _rows(u1, rd)
    for k in range(n):
        d[k] = u1[k] - u0[k]
    w = cayley_increment_batch(psi0, psi1)
    for k in range(n_r):
        for i in range(3):
            d[rd[k, i]] = w[k, i]
    for k in range(n):
        v1[k] = 2.0 * d[k] / dt - v0[k]
    omega0 = _rows(v0, rd)
    R0, R1, Om1 = mid_point_body_rates(psi0, psi1, w, omega0, dt)
    for k in range(n_r):
        for i in range(3):
            v1[rd[k, i]] = (R1[k, i, 0] * Om1[k, 0] + R1[k, i, 2] * Om1[k, 2]) + R1[k, i, 1] * Om1[k, 1]
    if body is not None:                          # (a compile-time branch: body is None or a tuple)
        _frame_velocities(body, u0, u1, v0, dt, v1)
    for k in range(n):
        a_m[k] = (v1[k] - v0[k]) / dt
    if jacobian:
        for k in range(data.size):
            data[k] = mass_factor * mass_data[k]
    q_m, f_c = np.zeros(n), np.zeros(n)
    d_c = np.zeros(data.size if jacobian else 0)
    if body is not None:
        _body_forces(body, u0, u1, v0, p0, dt, tangent, jacobian, data, q_m, f_c, d_c)
    inertia = csr_matvec(mass_indptr, mass_indices, mass_values, a_m)
    if body is not None:                          # MidPoint.residual's "if asm.configuration_masses"
        for k in range(n):
            inertia[k] += f_c[k]
        if jacobian:
            for k in range(data.size):
                data[k] += d_c[k]
    # (pi_{n+1} - pi_n)/dt in place of M a_m at the rotating nodes, the modal frames' inertia kept there
    rotary, blocks = mid_point_rotary_terms(R0, R1, Om1, rotary_inertia, omega0, w, dt)
    for k in range(n_r):
        for i in range(3):
            inertia[rd[k, i]] = rotary[k, i]
            if body is not None:
                inertia[rd[k, i]] += f_c[rd[k, i]]
    if jacobian:
        flat = blocks.ravel()
        for p in range(rotary_positions.size):
            data[rotary_positions[p]] += flat[rotary_entries[p]]
    for k in range(n):
        g[k] = q_m[k] - f_m[k] + inertia[k]
    p1 = csr_matvec(mass_indptr, mass_indices, mass_values, v1)
    _spatial_momenta(p1, rd, rotary_inertia, u1, v1)
    return max(max(momentum_norm0, free_norm(p1, free)) / abs(dt), free_norm(q_m, free), free_norm(f_m, free),
               free_norm(inertia, free))


@jit
def spatial_joint_residual(free, rotation_dofs, rotary_inertia, mass_indptr, mass_indices, mass_values, mass_data,
                           rotary_positions, rotary_entries, body, joints, augmented, u0, v0, p0,
                           momentum_norm0, dt, mass_factor, f_m, start_points, start_vectors, scales1, scales_m, rhs,
                           lam_scale, idle_scale, length_scale, u1, y, tangent, with_jacobian, g, data, d, v1, a_m, r,
                           jacobian):
    """The step loop's augmented residual r = [g + G^T lambda; kappa Phi] (n_free + n_c,) at the
    iterate (u1, y = lambda / lam_scale) and, with ``with_jacobian`` (and ``tangent``), the augmented
    Jacobian's data (n_aug,) on its fixed pattern, as :func:`flexmb.integrators.time_stepping._sub_step`'s
    ``residual`` computes them with :meth:`MidPoint.constraint_terms` and
    :meth:`~flexmb.multibody.constraints.ConstraintSystem.augmented`: the FE terms of
    :func:`spatial_mid_point_residual` (same arguments; g receives g + G^T lambda), then the
    joints' terms.

    joints: the constraint system's (n_dof, n_joint_g, n_joint_k, then its kernel arrays);
    augmented: (n_aug, and the data positions of the FE entries, K, G and C triplets); the step's
    start vectors P0, r0 (n_v, 3), the bilinear scales at t_{n+1} and mid-step and the right-hand
    sides f(t_{n+1}) (n_c,). Returns the FE force scale, the augmented one (N; idle_scale where it
    is zero), and the joints' phi (n_c,), force (n_dof,) and G, C, K values."""
    fe_scale = spatial_mid_point_residual(free, rotation_dofs, rotary_inertia, mass_indptr, mass_indices, mass_values,
                                          mass_data, rotary_positions, rotary_entries, body, u0, v0, p0,
                                          momentum_norm0, dt, mass_factor, f_m, u1, tangent, with_jacobian, g, data,
                                          d, v1, a_m)
    n_dof, n_joint_g, n_joint_k = joints[0], joints[1], joints[2]
    (v_d, v_X, v_cols, v_point, v_rotates, l_row, l_vec, l_c, b_row, b_a, b_b, d_row, d_dof,
     d_c) = joints[3]
    lam = y * lam_scale
    mid = np.bool_(True)                            # a bool, as the Python callers' ``mid``: one compilation
    phi, force, g_values, c_values, k_values = evaluate(mid, u1, start_points, start_vectors, d, lam, scales1,
                                                        scales_m, rhs, n_dof, n_joint_g, n_joint_k, v_d, v_X, v_cols,
                                                        v_point, v_rotates, l_row, l_vec, l_c, b_row, b_a, b_b, d_row,
                                                        d_dof, d_c)
    for k in range(g.size):
        g[k] = g[k] + force[k]
    free_force = np.empty(free.size)
    for i in range(free.size):
        free_force[i] = force[free[i]]
    scale = max(fe_scale, np.sqrt(np.dot(free_force, free_force)))      # np.linalg.norm's sum (BLAS)
    if scale == 0.0:
        scale = idle_scale
    kappa = 100.0 * scale / length_scale
    nf = free.size
    for i in range(nf):
        r[i] = g[free[i]]
    for i in range(phi.size):
        r[nf + i] = kappa * phi[i]
    if with_jacobian:
        n_aug, fe_pos, k_pos, g_pos, c_pos = augmented
        jacobian[:] = augmented_data(n_aug, data, fe_pos, k_values, k_pos, g_values, g_pos, lam_scale, c_values,
                                     c_pos, kappa)
    return fe_scale, scale, phi, force, g_values, c_values, k_values


@jit
def _force_first(passes, residual_norm, force_scale, residual_tol, force_tol) -> bool:
    """Whether the pass number ``passes`` (from 0) is predicted to converge, so that it evaluates its
    residual first without the Jacobian, after a correction from the residual residual_norm (N; its
    force scale force_scale, N, as logged). Full Newton from the scheme's spatial predictor ends
    at its second correction in most steps of these models (the relative residuals of the 6-mode
    blade of ``benchmarks/bench_modal_body3d.py``: about 1, 3e-7 and 3e-13 at its three passes, of
    the 5-element spin-up of the tests 1, 5e-4 and 5e-14); after the first, the pass is predicted
    converged where Newton's squaring of the relative residual would take it below residual_tol (or
    it is below force_tol); from the fourth pass on never (:func:`_converged`). A wrong guess costs
    a second evaluation, never other values. The blade's 200 steps of 2 s take 2.005 evaluations a
    step with the Jacobian and 1.005 without, of which 0.01 again with it, against 3.005 with it
    (2026-11-29)."""
    if passes == 2:
        return True
    return passes == 1 and (residual_norm <= np.sqrt(residual_tol) * force_scale or residual_norm <= force_tol)


@jit
def _converged(r, evaluated, residual_tol, force_tol, passes) -> bool:
    """Whether :func:`~flexmb.compiled.dense_newton.newton_correction` ends the pass number ``passes``
    (from 0) at the augmented residual r (n_free + n_c,) with force scale ``evaluated`` (N) converged
    before it would factor the Jacobian: its residual test, with its norm and scale (the tests of the
    correction before it end the pass earlier, also without the Jacobian). Its stagnation test, from
    the fourth pass on, can take the new Jacobian's values: there the answer is no."""
    if passes >= 3:
        return False
    scale = evaluated
    if np.finfo(np.float64).tiny > scale:                           # newton_correction's max(scale, tiny)
        scale = np.finfo(np.float64).tiny
    rn = norm(r)
    return rn <= residual_tol * scale or rn <= force_tol


@jit
def spatial_mid_point_newton(free, rotation_dofs, rotary_inertia, mass_indptr, mass_indices, mass_values, mass_data,
                             rotary_positions, rotary_entries, body, joints, augmented, u0, v0,
                             momentum_norm0, dt, mass_factor, f_m, start_points, start_vectors, scales1, scales_m, rhs,
                             lam_scale, idle_scale, jacobian_indptr, jacobian_indices, length_scale, residual_tol,
                             force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol,
                             round_off_factor, magnitudes, pivot_tol, absurd_correction, capped,
                             max_rotation_correction, x, u1, g, data, d, v1, a_m, r, jacobian, phi, force, g_values,
                             c_values, k_values, residual_norms, force_scales, increment_norms, smallest_pivots,
                             correction):
    """A whole Newton solve of a mid-point step of the models :func:`spatial_joint_residual` takes,
    with the dense LU: :func:`~flexmb.integrators.newton.newton_solve`'s full Newton loop
    (:func:`flexmb.compiled.dense_newton.newton_correction`) on the unknowns x = (u1[free],
    lambda / lam_scale) (n_free + n_c,), with magnitudes (n_free + n_c,) and the update of
    ``_sub_step``: the correction's rotation part capped at ``max_rotation_correction`` (capped:
    the positions of the free rotation DOFs in x), then u1 = cay-updated from u0 by the iterate's
    increment plus the correction (:meth:`MidPoint.update`), the multipliers added.

    x holds the start and receives the last iterate, u1 (n_dof) the start value (the predictor with
    the prescribed values) and the last iterate; g ... k_values receive the terms of the last
    residual evaluation (g with the joints' force), data and jacobian its Jacobians where it formed
    them. Returns :func:`~flexmb.compiled.dense_newton.solve_result`'s values, the FE force scale of
    the last evaluation and whether it formed the Jacobians (else they are an earlier iterate's).

    The modal body's start momenta are taken once (:func:`body_start_momenta`). A pass whose
    residual the previous one predicts converged (:func:`_force_first`) evaluates it first without
    the Jacobian, in the tangent's arithmetic (the same values bit for bit), and again with it only
    if :func:`_converged` does not find the pass converged (then the loop needs its LU); the
    iterates, outcome and log are the same as with the Jacobian at every pass."""
    nf, n = free.size, u0.size
    rd = rotation_dofs
    p0 = body_start_momenta(body, u0, v0)
    # the flags as bool values, never literals (a literal True types as Literal[bool](True), ``body is
    # None`` as an int): the residual then compiles once, for these calls and its Python callers' alike
    tangent = np.bool_(True)
    with_jacobian = tangent                                         # the predictor's residual: not converged
    passes = np.int64(0)                                            # (an int64 from the start, as in the loop)
    work, counts = new_work(np.arange(x.size), x), new_counters()
    unknowns = work[0]
    positions = np.arange(x.size)
    du = np.zeros(n)
    step = np.empty(n)
    rotation_row = np.full(n, -1)                   # the row of each rotation DOF in rd.ravel(), else -1
    for k in range(rd.shape[0]):
        for i in range(3):
            rotation_row[rd[k, i]] = 3 * k + i
    while True:
        for i in range(nf):
            u1[free[i]] = unknowns[i]
        fe_scale, evaluated, phi_k, force_k, g_k, c_k, k_k = spatial_joint_residual(
            free, rotation_dofs, rotary_inertia, mass_indptr, mass_indices, mass_values, mass_data, rotary_positions,
            rotary_entries, body, joints, augmented, u0, v0, p0, momentum_norm0, dt, mass_factor, f_m,
            start_points, start_vectors, scales1, scales_m, rhs, lam_scale, idle_scale, length_scale, u1,
            unknowns[nf:], tangent, with_jacobian, g, data, d, v1, a_m, r, jacobian)
        if not with_jacobian and not _converged(r, evaluated, residual_tol, force_tol, passes):
            with_jacobian = tangent                                 # the pass goes on to the LU: the same values
            fe_scale, evaluated, phi_k, force_k, g_k, c_k, k_k = spatial_joint_residual(
                free, rotation_dofs, rotary_inertia, mass_indptr, mass_indices, mass_values, mass_data,
                rotary_positions, rotary_entries, body, joints, augmented, u0, v0, p0, momentum_norm0, dt,
                mass_factor, f_m, start_points, start_vectors, scales1, scales_m, rhs, lam_scale, idle_scale,
                length_scale, u1, unknowns[nf:], tangent, with_jacobian, g, data, d, v1, a_m, r, jacobian)
        outcome, dx = newton_correction(evaluated, positions, r, jacobian, jacobian_indptr, jacobian_indices,
                                        length_scale, residual_tol, force_tol, increment_tol, max_iterations,
                                        increment_gate, stagnation_tol, round_off_factor, magnitudes, pivot_tol,
                                        absurd_correction, capped, max_rotation_correction, residual_norms,
                                        force_scales, increment_norms, smallest_pivots, correction, work, counts)
        if outcome != CONTINUE:
            x[:] = unknowns
            phi[:] = phi_k
            force[:] = force_k
            g_values[:] = g_k
            c_values[:] = c_k
            k_values[:] = k_k
            result = solve_result(outcome, evaluated, counts)
            return result[0], result[1], result[2], result[3], result[4], result[5], fe_scale, with_jacobian
        passes += 1
        # a rigid model's residual costs about as much without its Jacobian: a wrong guess would not pay
        with_jacobian = np.bool_(body is None) or not _force_first(passes, residual_norms[passes - 1],
                                                                   force_scales[passes - 1], residual_tol, force_tol)
        # MidPoint.update: u0 cay-updated by the iterate's increment d plus the correction
        for i in range(nf):
            du[free[i]] = dx[i]
        for k in range(n):
            step[k] = d[k] + du[k]
        psi = cayley_update_batch(_rows(step, rd), _rows(u0, rd))
        for i in range(nf):
            at = rotation_row[free[i]]
            unknowns[i] = u0[free[i]] + step[free[i]] if at < 0 else psi[at // 3, at % 3]
        for i in range(nf, x.size):
            unknowns[i] = unknowns[i] + dx[i]

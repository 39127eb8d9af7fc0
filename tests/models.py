"""Small models shared by several test files."""
from __future__ import annotations

import numpy as np

import flexmb as fm


def truss_bays(n_bays: int = 4, EA: float = 1e5, rho_A: float = 0.0):
    """Plane truss cantilever geometry: square 1 m bays with diagonals, no supports or loads.

    Returns (model, bottom node indices, top node indices).
    """
    m = fm.Model(dim=2)
    bottom = m.add_nodes(np.c_[np.arange(n_bays + 1.0), np.zeros(n_bays + 1)])
    top = m.add_nodes(np.c_[np.arange(n_bays + 1.0), np.ones(n_bays + 1)])
    bars = ([[bottom[i], bottom[i + 1]] for i in range(n_bays)]
            + [[top[i], top[i + 1]] for i in range(n_bays)]
            + [[bottom[i], top[i]] for i in range(1, n_bays + 1)]
            + [[bottom[i], top[i + 1]] for i in range(n_bays)])
    m.add_truss(np.array(bars), EA=EA, rho_A=rho_A)
    return m, bottom, top


def clamped_tet10_bar() -> tuple[fm.Model, np.ndarray]:
    """A steel bar 1 x 0.1 x 0.1 m of 8 x 2 x 2 tet10 boxes clamped at x = 0, and its node
    coordinates (n, 3); no load."""
    from flexmb.io.solid_mesh import box

    X, cells = box(1.0, 0.1, 0.1, 8, 2, 2, "tet10")
    m = fm.Model(dim=3)
    m.add_nodes(X)
    m.add_solid(cells, E=2.1e11, nu=0.3)
    for node in np.flatnonzero(X[:, 0] == 0.0):
        m.fix(int(node), ["ux", "uy", "uz"])
    return m, X


def spinning_bar() -> tuple[fm.Assembly, np.ndarray]:
    """A free 3D bar of 4 Beam3D elements (group "bar") and its rigid initial velocity (n_dof,):
    spin W = (4, 0, 6) rad/s about its centre, so it twists and tumbles."""
    m = fm.Model(dim=3)
    n = m.add_nodes(np.c_[np.linspace(0, 1, 5), np.zeros(5), np.zeros(5)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=8.4e7, GJ=1e3, EI_y=140.0, EI_z=2240.0, rho_A=3.14,
                 rho_I=(1e-4, 5e-5, 5e-5), name="bar")
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    w, X = np.array([4.0, 0.0, 6.0]), m.coordinates
    v0[asm.dofs.translations()] = np.cross(w, X - X.mean(0))
    v0[asm.rotation_dofs] = w
    return asm, v0


def kicked_pendulum() -> fm.Assembly:
    """Stiff pendulum at rest; from t = 0.25 s a 2 kN sideways force hits the tip."""
    m = fm.Model(dim=2)
    pivot, tip = m.add_node([0.0, 0.0]), m.add_node([0.0, -3.0443])
    m.add_truss([pivot, tip], EA=1e10)
    m.add_point_mass(tip, 10.0)
    m.fix(pivot)
    m.add_load(tip, "ux", lambda t: 0.0 if t < 0.25 else 2000.0)
    return fm.Assembly(m)


def pendulum_chain(n_links: int = 3) -> fm.Assembly:
    """Horizontal chain of stiff bars (group "links") with 1 kg point masses, pinned at the origin,
    under gravity."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.arange(n_links + 1.0), np.zeros(n_links + 1)])
    m.add_truss(np.c_[nodes[:-1], nodes[1:]], EA=1e7, name="links")
    for node in nodes[1:]:
        m.add_point_mass(node, 1.0)
    m.fix(nodes[0])
    m.set_gravity([0.0, -9.81])
    return fm.Assembly(m)


def cantilever_body_3d(n_el: int = 5, n_modes: int = 3):
    """3D modal-body data (:class:`flexmb.cms.ModalBodyData`) of a 1 m cantilever along x with unequal
    bending stiffnesses and rotary inertia (``n_el`` consistent-mass Beam3D), frame at the root."""
    from flexmb.cms.modal_body import ModalBodyData

    body = fm.Model(dim=3)
    x = np.linspace(0.0, 1.0, n_el + 1)
    nodes = body.add_nodes(np.c_[x, 0.0 * x, 0.0 * x])
    body.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=2e3, GJ=1.5, EI_y=2.0, EI_z=3.0, rho_A=0.5,
                    rho_I=(1e-3, 5e-4, 5e-4), mass="consistent", y_axis=(0.0, 1.0, 0.0))
    return ModalBodyData.from_model(body, frame_node=int(nodes[0]), n_modes=n_modes, name="beam")


def damped_truss() -> fm.Model:
    """A cantilever truss of three square bays (15 bars, 12 free DOFs), Rayleigh-damped, under gravity
    and a sinusoidal tip load that sets its first modes swinging."""
    m = fm.Model(dim=2)
    bottom = m.add_nodes(np.c_[np.arange(4.0), np.zeros(4)])
    top = m.add_nodes(np.c_[np.arange(4.0), np.ones(4)])
    bars = ([[bottom[i], bottom[i + 1]] for i in range(3)] + [[top[i], top[i + 1]] for i in range(3)]
            + [[bottom[i], top[i]] for i in range(1, 4)] + [[bottom[i], top[i + 1]] for i in range(3)])
    m.add_truss(np.array(bars), EA=1e5, rho_A=2.0, name="truss")
    m.fix(bottom[0])
    m.fix(top[0])
    m.set_rayleigh_damping("truss", 0.5, 1e-4)
    m.set_gravity([0.0, -9.81])
    m.add_load(top[-1], "uy", lambda t: -2e3 * np.sin(40.0 * t))
    return m


def spinning_hub_beam() -> tuple[fm.Model, fm.Assembly, np.ndarray, np.ndarray]:
    """Three cubic-mass Beam2D elements (6 m) on a hub with the prescribed spin-up 0.4 t^2 rad (a driven
    director DOF), a tip load 2 sin(3 t) N and a tip start velocity of 0.3 m/s: the model, its assembly,
    v0 (n_dof,) and the nodes (hub first)."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 6.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2.8e7, EI=1.4e4, rho_A=1.2, rho_I=2e-3, mass="cubic", name="beam",
                 second_order=True)
    m.fix(nodes[0], ["ux", "uy"])
    m.prescribe(nodes[0], "rz", lambda t: 0.4 * t**2)
    m.add_load(nodes[-1], "uy", lambda t: 2.0 * np.sin(3.0 * t))
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(int(nodes[-1]), "uy")] = 0.3
    return m, asm, v0, nodes


def sagging_beam() -> tuple[fm.Model, fm.Assembly]:
    """A pinned 5 m beam of 51 lumped-mass Beam2D elements (154 free DOFs, enough for modified Newton)
    sagging under gravity: the model and its assembly."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 5.0, 52), np.zeros(52)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=50.0, rho_A=1.0, rho_I=1e-4, mass="lumped", name="beam")
    m.fix(nodes[0], ["ux", "uy"])
    m.set_gravity([0.0, -9.81])
    return m, fm.Assembly(m)


def spatial_double_pendulum() -> fm.Assembly:
    """Two rigid bodies under gravity: a spherical joint to the ground, a revolute joint with a tilted
    axis between them (a spatial motion)."""
    m = fm.Model(dim=3)
    a = m.add_rigid_body([0.5, 0.0, 0.0], 1.0, [0.01, 0.1, 0.1])
    b = m.add_rigid_body([1.5, 0.0, 0.0], 2.0, [0.1, 0.2, 0.15])
    m.add_joint("spherical", None, a, at=[0.0, 0.0, 0.0])
    m.add_joint("revolute", a, b, at=[1.0, 0.0, 0.0], axis=[0.0, 0.3, 1.0])
    m.set_gravity([0.0, 0.0, -9.81])
    return fm.Assembly(m)


def modal_blade_on_hub(data, angle, tip_at=None) -> fm.Assembly:
    """The modal body ``data`` ("blade") on a revolute joint about z whose angle (rad) is ``angle(t)``
    (t in s); with ``tip_at`` (m) also a rigid body there ("tip", 0.1 kg) hung by a spherical joint on
    the point (1, 0, 0) m of the body's frame (a second joint)."""
    m = fm.Model(dim=3)
    body = m.add_modal_body(data, name="blade")
    frame = int(body.connectivity[0, 0])
    m.add_joint("revolute", None, frame, axis=(0.0, 0.0, 1.0), drive=angle, name="hub")
    if tip_at is not None:
        tip = m.add_rigid_body(tip_at, 0.1, [2e-4, 2e-4, 3e-4], name="tip")
        m.add_joint("spherical", frame, tip, at=[1.0, 0.0, 0.0], name="tip joint")
    return fm.Assembly(m)

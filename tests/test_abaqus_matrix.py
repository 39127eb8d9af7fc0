"""Abaqus matrix output read by flexmb.cms.imported.read_abaqus_component, on a file written by hand
in the node-labelled text layout of ``*MATRIX GENERATE, STIFFNESS, MASS`` with ``*MATRIX OUTPUT``
(lines ``row node, row DOF, column node, column DOF, value``, the lower triangle column by column,
node labels that are not 1..n, Abaqus DOF numbers 1-6, zeros the assembly cancelled kept).

No file written by Abaqus itself was available: the layout follows the published description of
the format, and the model is a straight 3D beam whose response is known in closed form.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.checks import ModelError
from flexmb.cms.imported import read_abaqus_component

# Two Euler-Bernoulli beams of length 1 m along x: nodes 11 (x = 0), 12 (x = 1 m), 30 (x = 2 m);
# EA = 1e6 N, GJ = 500 N m^2, EI_z = 1e3 N m^2 (bending in x-y: DOFs 2, 6), EI_y = 2e3 N m^2
# (bending in x-z: DOFs 3, 5). Entries 12EI/L^3, 6EI/L^2, 4EI/L, 2EI/L, EA/L, GJ/L.
STIFFNESS = """\
11, 1, 11, 1, 1.000000000000000e+06
12, 1, 11, 1, -1.000000000000000e+06
11, 2, 11, 2, 1.200000000000000e+04
11, 6, 11, 2, 6.000000000000000e+03
12, 2, 11, 2, -1.200000000000000e+04
12, 6, 11, 2, 6.000000000000000e+03
11, 3, 11, 3, 2.400000000000000e+04
11, 5, 11, 3, -1.200000000000000e+04
12, 3, 11, 3, -2.400000000000000e+04
12, 5, 11, 3, -1.200000000000000e+04
11, 4, 11, 4, 5.000000000000000e+02
12, 4, 11, 4, -5.000000000000000e+02
11, 5, 11, 5, 8.000000000000000e+03
12, 3, 11, 5, 1.200000000000000e+04
12, 5, 11, 5, 4.000000000000000e+03
11, 6, 11, 6, 4.000000000000000e+03
12, 2, 11, 6, -6.000000000000000e+03
12, 6, 11, 6, 2.000000000000000e+03
12, 1, 12, 1, 2.000000000000000e+06
30, 1, 12, 1, -1.000000000000000e+06
12, 2, 12, 2, 2.400000000000000e+04
12, 6, 12, 2, 0.000000000000000e+00
30, 2, 12, 2, -1.200000000000000e+04
30, 6, 12, 2, 6.000000000000000e+03
12, 3, 12, 3, 4.800000000000000e+04
12, 5, 12, 3, 0.000000000000000e+00
30, 3, 12, 3, -2.400000000000000e+04
30, 5, 12, 3, -1.200000000000000e+04
12, 4, 12, 4, 1.000000000000000e+03
30, 4, 12, 4, -5.000000000000000e+02
12, 5, 12, 5, 1.600000000000000e+04
30, 3, 12, 5, 1.200000000000000e+04
30, 5, 12, 5, 4.000000000000000e+03
12, 6, 12, 6, 8.000000000000000e+03
30, 2, 12, 6, -6.000000000000000e+03
30, 6, 12, 6, 2.000000000000000e+03
30, 1, 30, 1, 1.000000000000000e+06
30, 2, 30, 2, 1.200000000000000e+04
30, 6, 30, 2, -6.000000000000000e+03
30, 3, 30, 3, 2.400000000000000e+04
30, 5, 30, 3, 1.200000000000000e+04
30, 4, 30, 4, 5.000000000000000e+02
30, 5, 30, 5, 8.000000000000000e+03
30, 6, 30, 6, 4.000000000000000e+03
"""
# lumped mass, 1 kg/m: 0.5 kg at the end nodes, 1 kg in the middle; rotary inertia 1e-3 kg m^2 per
# half element
MASS = "\n".join(f"{n}, {d}, {n}, {d}, {(0.5 if d <= 3 else 1e-3) * (2 if n == 12 else 1):.15e}"
                 for n in (11, 12, 30) for d in range(1, 7)) + "\n"
X = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])        # m
CLAMP = [(11, d) for d in range(1, 7)]


def write(tmp_path, stiffness: str = STIFFNESS, mass: str = MASS):
    paths = tmp_path / "beam_STIF2.mtx", tmp_path / "beam_MASS2.mtx"
    for path, text in zip(paths, (stiffness, mass)):
        path.write_text(text)
    return paths


def tip_response(comp, load: dict[str, float]) -> dict[str, float]:
    """Static displacements of node 30 under ``load`` at node 30 (N, N m), the clamp grounded."""
    K = comp.K.toarray()
    f = np.zeros(comp.n_dof)
    at = {(int(n), str(d)): i for i, (n, d) in enumerate(zip(comp.dof_nodes, comp.dof_names))}
    for dof, value in load.items():
        f[at[(30, dof)]] = value
    free = np.setdiff1d(np.arange(comp.n_dof), comp.grounded)
    u = np.zeros(comp.n_dof)
    u[free] = np.linalg.solve(K[np.ix_(free, free)], f[free])
    return {d: u[at[(30, d)]] for d in ("ux", "uy", "uz", "rx", "ry", "rz")}


def test_hand_written_abaqus_matrices_give_the_cantilever_in_closed_form(tmp_path):
    """The clamped 2 m beam read from the files deflects as beam theory says (cubic beam elements
    are exact for end loads): u = F L^3 / (3 EI), rotation F L^2 / (2 EI), twist T L / GJ, stretch
    F L / EA, each about its own axis and sign."""
    comp = read_abaqus_component(*write(tmp_path), X, interface=[30], nodes=[11, 12, 30], grounded=CLAMP,
                                 name="abaqus beam")
    assert comp.nodes.tolist() == [11, 12, 30] and comp.n_dof == 18
    assert comp.dof_names.tolist()[:6] == ["ux", "uy", "uz", "rx", "ry", "rz"]
    length = 2.0
    cases = [({"uy": 1.0}, {"uy": length ** 3 / (3 * 1e3), "rz": length ** 2 / (2 * 1e3)}),
             ({"uz": 1.0}, {"uz": length ** 3 / (3 * 2e3), "ry": -length ** 2 / (2 * 2e3)}),
             ({"rx": 1.0}, {"rx": length / 500.0}),
             ({"ux": 1.0}, {"ux": length / 1e6})]
    for load, expected in cases:
        u = tip_response(comp, load)
        for dof, value in u.items():
            want = expected.get(dof, 0.0)
            assert abs(value - want) <= 1e-12 * max(abs(v) for v in expected.values()), \
                f"load {load}: {dof} = {value!r}, beam theory {want!r}"
    M = comp.M.toarray()
    for k in range(3):                                   # rigid translation: the whole 2 kg
        r = (np.arange(comp.n_dof) % 6 == k).astype(float)
        assert abs(r @ M @ r - 2.0) <= 1e-14


def test_upper_triangle_or_both_and_blank_separators_give_the_same_matrix(tmp_path):
    lower = read_abaqus_component(*write(tmp_path), X, interface=[30], nodes=[11, 12, 30]).K.toarray()
    upper_lines = []
    for line in STIFFNESS.splitlines():
        a, da, b, db, v = (p.strip() for p in line.split(","))
        upper_lines.append(f"{b} {db} {a} {da} {v}")
    upper = read_abaqus_component(*write(tmp_path, stiffness="\n".join(upper_lines)), X, interface=[30],
                                  nodes=[11, 12, 30]).K.toarray()
    both = read_abaqus_component(*write(tmp_path, stiffness=STIFFNESS + "\n".join(
        line for line in upper_lines if line.split()[:2] != line.split()[2:4])), X, interface=[30],
        nodes=[11, 12, 30]).K.toarray()
    assert np.array_equal(lower, upper) and np.array_equal(lower, both)
    assert np.array_equal(lower, lower.T) and lower[6, 0] == -1e6 and lower[0, 6] == -1e6


def test_abaqus_file_errors(tmp_path):
    with pytest.raises(ModelError, match=r"line 3: node -4 is an Abaqus internal node"):
        read_abaqus_component(*write(tmp_path, stiffness=STIFFNESS.replace("11, 2, 11, 2,", "-4, 2, 11, 2,", 1)),
                              X, interface=[30], nodes=[11, 12, 30])
    with pytest.raises(ModelError, match=r"line 1: expected 'node, DOF, node, DOF, value' with DOF in \[1, 2, 3"):
        read_abaqus_component(*write(tmp_path, stiffness=STIFFNESS.replace("11, 1, 11, 1,", "11, 7, 11, 1,", 1)),
                              X, interface=[30], nodes=[11, 12, 30])
    with pytest.raises(ModelError, match=r"beam_MASS2.mtx' names node 40 DOF 1, which the stiffness file does not"):
        read_abaqus_component(*write(tmp_path, mass=MASS + "40, 1, 40, 1, 1.0\n"), X, interface=[30],
                              nodes=[11, 12, 30])
    with pytest.raises(ModelError, match=r"row \d+ names node 30, which is not a node of the component"):
        read_abaqus_component(*write(tmp_path), X, interface=[30], nodes=[11, 12, 31])
    with pytest.raises(ModelError, match=r"grounded DOF \(11, 9\) is not an Abaqus DOF number"):
        read_abaqus_component(*write(tmp_path), X, interface=[30], nodes=[11, 12, 30], grounded=[(11, 9)])
    with pytest.raises(ModelError, match=r"K is not symmetric"):
        read_abaqus_component(*write(tmp_path, stiffness=STIFFNESS + "11, 1, 12, 1, -0.9e6\n"), X, interface=[30],
                              nodes=[11, 12, 30])

"""Components from Nastran matrices (flexmb.io.nastran): OP4 files (read through pyNastran, the
optional extra) and DMIG/GRID bulk data (read by flexmb), written here from flexmb components by
writers that follow the documented layouts, read back and compared: K and M, and CMS frequencies.

The OP4 tests run with and without pyNastran: without it (the plain install) reading an OP4 file
must say how to install the extra; CI's optional probe installs it and runs this file again.
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cms import Component, components_from_groups, craig_bampton, free_interface, synthesize
from flexmb.io.nastran import read_nastran_component

try:
    import pyNastran.op4.op4  # noqa: F401  (only whether the OP4 reader imports)
    HAVE_PYNASTRAN = True
except ImportError:
    HAVE_PYNASTRAN = False
E, G, RHO, SIDE, LENGTH = 2.1e11, 8.0e10, 7850.0, 0.03, 2.0       # Pa, Pa, kg/m^3, m, m
A, I = SIDE ** 2, SIDE ** 4 / 12.0
COMPONENT = {"ux": 1, "uy": 2, "uz": 3, "rx": 4, "ry": 5, "rz": 6}


def grid_id(node) -> int:
    """Nastran grid ids of the test: not 1..n (labels 101, 108, 115, ...)."""
    return 101 + 7 * int(node)


def cantilever(per: int = 4, parts: int = 3) -> fm.Model:
    """A steel 3D beam along x, tilted out of the axes, clamped at node 0, in groups ``part 1`` ..."""
    n = per * parts
    model = fm.Model(3)
    s = np.linspace(0.0, LENGTH, n + 1)
    model.add_nodes(np.c_[s, 0.3 * s, -0.2 * s] / np.sqrt(1.13))
    for k in range(parts):
        first = np.arange(k * per, (k + 1) * per)
        model.add_beam3d(np.c_[first, first + 1], E * A, G * 2.25 * I, E * I, 1.7 * E * I, rho_A=RHO * A,
                         rho_I=(2.7 * RHO * I, RHO * I, 1.7 * RHO * I), mass="consistent", name=f"part {k + 1}")
    model.fix(0)
    return model


def split(model: fm.Model) -> list[Component]:
    return components_from_groups(model, {g.name: [g.name] for g in model.groups})


def rows_of(comp: Component) -> list[tuple[int, int]]:
    return [(grid_id(n), COMPONENT[str(d)]) for n, d in zip(comp.dof_nodes, comp.dof_names)]


def grounded_of(comp: Component) -> list[tuple[int, int]]:
    return [(grid_id(comp.dof_nodes[i]), COMPONENT[str(comp.dof_names[i])]) for i in comp.grounded]


def relative(A, B) -> float:
    return float(abs(A - B).max() / abs(A).max())


def entrywise(A, B) -> float:
    """Largest |A - B| relative to each entry of A (entries below 1e-13 max|A|, round-off of zeros,
    count as 1e-13 max|A|)."""
    A, B = (X.toarray() if sp.issparse(X) else np.asarray(X) for X in (A, B))
    return float((np.abs(A - B) / np.maximum(np.abs(A), 1e-13 * np.abs(A).max())).max())


# ---------------------------------------------------------------------------- writers (documented layouts)
def grid_cards(comp: Component) -> list[str]:
    """GRID cards in free field (basic system: CP, CD blank), shortest round-trip decimals."""
    return [f"GRID,{grid_id(n)},,{x!r},{y!r},{z!r}"
            for n, (x, y, z) in zip(comp.nodes, comp.model.coordinates.tolist())]


def dmig_cards(name: str, A, rows, field: str = "free", ifo: int = 6) -> list[str]:
    """A DMIG of real doubles (TIN 2), one card per column: symmetric (IFO 6, the lower triangle)
    or square (IFO 1, every entry).

    ``field``: ``free`` (commas, shortest round-trip decimals) or ``large`` (``DMIG*``, 16-character
    fields, values in ``%16.9E``: 10 significant digits, the precision of a large-field card)."""
    L = (sp.tril(sp.csr_matrix(A)) if ifo == 6 else sp.csr_matrix(A)).tocsc()
    value = repr if field == "free" else (lambda v: f"{v:16.9E}")
    cards = []
    cards.append([name, "0", str(ifo), "2", "0", "", "", str(len(rows))])
    for j in range(L.shape[1]):
        lo, hi = L.indptr[j], L.indptr[j + 1]
        if lo == hi:
            continue
        fields = [name, str(rows[j][0]), str(rows[j][1]), ""]
        for i, v in zip(L.indices[lo:hi], L.data[lo:hi]):
            fields += [str(rows[i][0]), str(rows[i][1]), value(float(v)), ""]
        cards.append(fields)
    lines = []
    for fields in cards:
        if field == "free":
            chunks = [fields[:8]] + [fields[k:k + 8] for k in range(8, len(fields), 8)]
            lines.append("DMIG," + ",".join(chunks[0]))
            lines += ["+," + ",".join(c) for c in chunks[1:]]
        else:
            chunks = [fields[k:k + 4] for k in range(0, len(fields), 4)]
            for k, c in enumerate(chunks):
                lines.append(("DMIG*" if k == 0 else "*").ljust(8) + "".join(f"{f:>16s}" for f in c))
    return lines


def write_bulk(path: Path, comp: Component, field: str = "free", with_grids: bool = True) -> Path:
    rows = rows_of(comp)
    lines = ["$ flexmb test: component " + comp.name, "SOL 103", "CEND", "K2GG = KSUPER", "M2GG = MSUPER",
             "BEGIN BULK"]
    lines += grid_cards(comp) if with_grids else []
    lines += dmig_cards("KSUPER", comp.K, rows, field) + dmig_cards("MSUPER", comp.M, rows, field)
    path.write_text("\n".join(lines + ["ENDDATA"]) + "\n")
    return path


def write_op4_ascii(path: Path, matrices: dict, digits: int = 9) -> Path:
    """ASCII OP4 as OUTPUT4 writes it: per matrix a header (NCOL, NROW, FORM, TYPE 2 = real double,
    NAME, Fortran format), per non-zero column ICOL, IROW (first non-zero row), NW (words) and the
    values, then the column NCOL + 1 closing the matrix. ``digits`` 9: ``1P,5E16.9`` (Nastran's
    default); 16: ``1P,3E23.16``."""
    per_line, width = (5, 16) if digits == 9 else (3, 23)
    out = []
    for name, A in matrices.items():
        A = np.asarray(sp.csr_matrix(A).toarray())
        nrow, ncol = A.shape
        out.append(f"{ncol:8d}{nrow:8d}{6:8d}{2:8d}{name:<8s}1P,{per_line}E{width}.{digits}")
        for j in range(ncol):
            nonzero = np.flatnonzero(A[:, j])
            if not nonzero.size:
                continue
            words = A[nonzero[0]:nonzero[-1] + 1, j]
            out.append(f"{j + 1:8d}{nonzero[0] + 1:8d}{words.size:8d}")
            for k in range(0, words.size, per_line):
                out.append("".join(f"{v:{width}.{digits}E}" for v in words[k:k + per_line]))
        out.append(f"{ncol + 1:8d}{1:8d}{1:8d}")
        out.append(f"{1.0:{width}.{digits}E}")
    path.write_text("\n".join(out) + "\n")
    return path


def write_op4_binary(path: Path, matrices: dict) -> Path:
    """Binary OP4 (little-endian Fortran unformatted records, each framed by its byte count): the
    same header (NCOL, NROW, FORM, TYPE 2, NAME as 8 bytes), columns (ICOL, IROW, NW = 2 words per
    double, values) and closing column as the ASCII form. (pyNastran 1.4.1's binary writer gives
    files its reader refuses, numpy 2.4.)"""
    def record(payload: bytes) -> bytes:
        return struct.pack("<i", len(payload)) + payload + struct.pack("<i", len(payload))

    out = b""
    for name, A in matrices.items():
        A = np.asarray(sp.csr_matrix(A).toarray())
        nrow, ncol = A.shape
        out += record(struct.pack("<4i8s", ncol, nrow, 6, 2, name.ljust(8).encode()))
        for j in range(ncol):
            nonzero = np.flatnonzero(A[:, j])
            if nonzero.size:
                words = A[nonzero[0]:nonzero[-1] + 1, j]
                out += record(struct.pack("<3i", j + 1, nonzero[0] + 1, 2 * words.size) + words.astype("<f8").tobytes())
        out += record(struct.pack("<3i", ncol + 1, 1, 2) + np.ones(1, "<f8").tobytes())
    path.write_bytes(out)
    return path


def read_back(comp: Component, path, **kw) -> Component:
    return read_nastran_component(path, [grid_id(n) for n in comp.interface_nodes], grounded=grounded_of(comp),
                                  name=comp.name, **kw)


def cms_error(own: list[Component], back: list[Component], free: bool = True) -> np.ndarray:
    """(8,) largest relative difference of each of the first 8 CMS frequencies over Craig-Bampton
    and (``free``) free-interface reduction."""
    error = np.zeros(8)
    for reduce in [lambda c: craig_bampton(c, n_modes=6)] + [lambda c: free_interface(c, n_elastic_modes=6)] * free:
        f_own = synthesize([reduce(c) for c in own]).modes(8).frequencies_hz
        f = synthesize([reduce(c) for c in back]).modes(8).frequencies_hz
        error = np.maximum(error, np.abs(f / f_own - 1.0))
    return error


def rounding_bound(own: list[Component], rounding: float) -> np.ndarray:
    """(8,) first-order bound of the relative change of the first 8 frequencies of the assembled
    model when every entry of K and M changes by at most ``rounding`` of itself:
    |df/f| <= rounding |phi|^T (|K| + lambda |M|) |phi| / (2 lambda), phi mass-normalised. Slender
    members make it large: rounding breaks the rigid-body invariance of each element's K, and the
    low modes are nearly rigid motions of the elements."""
    n = 6 * (max(int(c.dof_nodes.max()) for c in own) + 1)
    K, M, absK, absM = (np.zeros((n, n)) for _ in range(4))
    for c in own:
        index = np.ix_(*[6 * c.dof_nodes + np.array([COMPONENT[str(d)] - 1 for d in c.dof_names])] * 2)
        for total, absolute, X in ((K, absK, c.K.toarray()), (M, absM, c.M.toarray())):
            total[index] += X
            absolute[index] += np.abs(X)
    free = np.setdiff1d(np.arange(n), np.concatenate([6 * c.dof_nodes[c.grounded] + np.array(
        [COMPONENT[str(d)] - 1 for d in c.dof_names[c.grounded]], dtype=int) for c in own]))
    lam, phi = scipy.linalg.eigh(K[np.ix_(free, free)], M[np.ix_(free, free)], subset_by_index=[0, 7])
    a = np.abs(phi)
    return rounding * (np.einsum("ik,ij,jk->k", a, absK[np.ix_(free, free)], a)
                       + lam * np.einsum("ik,ij,jk->k", a, absM[np.ix_(free, free)], a)) / (2.0 * lam)


# ---------------------------------------------------------------------------- DMIG (no extra needed)
def test_dmig_free_field_round_trip(tmp_path):
    """Free-field DMIG with full decimals: K and M back to round-off, CMS frequencies to 1e-10; the
    DOFs land on the grid ids (not 1..n) with components 1-6 as ux..rz."""
    own = split(cantilever())
    back = [read_back(c, write_bulk(tmp_path / f"c{k}.bdf", c), stiffness="KSUPER", mass="MSUPER")
            for k, c in enumerate(own)]
    for a, b in zip(own, back):
        assert b.nodes.tolist() == [grid_id(n) for n in a.nodes]
        assert b.dof_names.tolist() == a.dof_names.tolist()
        assert relative(a.K, b.K) <= 1e-12 and relative(a.M, b.M) <= 1e-12, f"component {a.name}"
        assert np.array_equal(a.grounded, b.grounded) and np.array_equal(a.interface_dofs, b.interface_dofs)
    error = cms_error(own, back).max()
    assert error <= 1e-10, f"CMS frequencies differ by {error:.2e} relative"


def test_dmig_large_field_precision(tmp_path):
    """Large-field DMIG* (16 characters, ``%16.9E``: 10 significant digits): each entry back to
    5e-10 of itself, and the CMS frequencies within the first-order bound of that rounding
    (:func:`rounding_bound`: 1e-4 for the first mode of this slender beam; measured 9.9e-6)."""
    own = split(cantilever())
    back = [read_back(c, write_bulk(tmp_path / f"c{k}.bdf", c, field="large"), stiffness="KSUPER", mass="MSUPER")
            for k, c in enumerate(own)]
    for a, b in zip(own, back):
        for X, Y in ((a.K, b.K), (a.M, b.M)):              # the lower triangle was written
            error = entrywise(sp.tril(X), sp.tril(Y))
            assert error <= 5.01e-10, f"component {a.name}: {error:.2e}"
    error, bound = cms_error(own, back, free=False), rounding_bound(own, 5e-10)
    assert np.all(error <= bound + 1e-10), f"CMS frequencies differ by {error} relative, bound {bound}"


def test_dmig_with_grids_given_and_translations_only(tmp_path):
    """A solid-like component (components 1-3 only), grid positions from grids= (no GRID cards),
    upper and lower triangle of M given by a square (IFO 1) DMIG."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((4, 3))
    B = rng.standard_normal((12, 12))
    K, M = B @ B.T, np.diag(rng.uniform(1.0, 2.0, 12))
    rows = [(10 * g, c) for g in (3, 5, 8, 9) for c in (1, 2, 3)]
    lines = dmig_cards("K2GG", K, rows) + ["DMIG,M2GG,0,1,2,0,,,12"]
    lines += [f"DMIG,M2GG,{g},{c},,{g},{c},{float(M[i, i])!r}" for i, (g, c) in enumerate(rows)]
    path = tmp_path / "solid.dat"
    path.write_text("\n".join(lines) + "\n")
    comp = read_nastran_component(path, [30, 90], grids={10 * g: x for g, x in zip((3, 5, 8, 9), X)}, name="s")
    assert comp.nodes.tolist() == [30, 50, 80, 90] and comp.dof_names.tolist()[:3] == ["ux", "uy", "uz"]
    np.testing.assert_allclose(comp.model.coordinates, X)
    assert relative(K, comp.K) <= 1e-15 and relative(M, comp.M) <= 1e-15


# ---------------------------------------------------------------------------- OP4 (pyNastran)
@pytest.mark.parametrize("digits", [16, 9])
def test_op4_ascii_round_trip(tmp_path, digits):
    """ASCII OP4: 17 significant digits (``1P,3E23.16``) give K and M exactly and the CMS frequencies
    to 1e-10; 10 digits (``1P,5E16.9``) give each entry to 5e-10 of itself and the CMS frequencies
    within the first-order bound of that rounding (1e-4 for the first mode; measured 9.9e-6).
    Without pyNastran the reader says how to install it."""
    own = split(cantilever())
    paths = [write_op4_ascii(tmp_path / f"c{k}.op4", {"KAAX": c.K, "MAAX": c.M}, digits) for k, c in enumerate(own)]
    grids = [{grid_id(n): x for n, x in zip(c.nodes, c.model.coordinates)} for c in own]
    if not HAVE_PYNASTRAN:
        with pytest.raises(ModelError, match=r"pip install flexmb\[nastran\]"):
            read_back(own[0], paths[0], grids=grids[0])
        return
    back = [read_back(c, p, grids=g) for c, p, g in zip(own, paths, grids)]
    for a, b in zip(own, back):
        for X, Y in ((a.K, b.K), (a.M, b.M)):
            error = entrywise(X, Y)
            assert error <= (0.0 if digits == 16 else 5.01e-10), f"component {a.name}: {error:.2e}"
    error = cms_error(own, back, free=digits == 16)
    bound = 1e-10 if digits == 16 else rounding_bound(own, 5e-10) + 1e-10
    assert np.all(error <= bound), f"CMS frequencies differ by {error} relative, bound {bound}"


def test_op4_binary_with_dofs_and_grid_file(tmp_path):
    """Binary OP4 (KGG/MGG, rows in a shuffled order given by dofs=), grid positions from a
    bulk-data file: K and M exact."""
    comp = split(cantilever())[1]
    order = np.random.default_rng(5).permutation(comp.n_dof)
    rows = [rows_of(comp)[i] for i in order]
    K, M = comp.K[order][:, order], comp.M[order][:, order]
    grid_file = tmp_path / "grids.bdf"
    grid_file.write_text("\n".join(grid_cards(comp)) + "\n")
    path = write_op4_binary(tmp_path / "kgg.op4", {"KGG": K, "MGG": M})
    if not HAVE_PYNASTRAN:
        with pytest.raises(ModelError, match=r"needs pyNastran.*pip install flexmb\[nastran\]"):
            read_back(comp, path, grids=grid_file, stiffness="KGG", mass="MGG", dofs=rows)
        return
    back = read_back(comp, path, grids=grid_file, stiffness="KGG", mass="MGG", dofs=rows)
    assert (back.K != comp.K).nnz == 0 and (back.M != comp.M).nnz == 0


def test_op4_default_rows_are_grids_ascending(tmp_path):
    """Without dofs= the OP4 rows are the grids in ascending id x components 1-6 (the g-set order)."""
    comp = split(cantilever())[2]
    path = write_op4_ascii(tmp_path / "c.op4", {"KAAX": comp.K, "MAAX": comp.M}, 16)
    grids = {grid_id(n): x for n, x in zip(comp.nodes, comp.model.coordinates)}
    if not HAVE_PYNASTRAN:
        with pytest.raises(ModelError, match=r"pip install flexmb\[nastran\]"):
            read_back(comp, path, grids=grids)
        return
    back = read_back(comp, path, grids=grids)
    assert relative(comp.K, back.K) <= 1e-15
    with pytest.raises(ModelError, match=r"KAAX .* has 30 rows, which is neither 6 nor 3 per grid for the 4 grids"):
        read_back(comp, path, grids=dict(list(grids.items())[:4]))
    with pytest.raises(ModelError, match=r"no matrix 'KXX' .*; the files have KAAX, MAAX"):
        read_back(comp, path, grids=grids, stiffness="KXX")
    with pytest.raises(ModelError, match=r"KAAX .* has 30 rows but dofs= names 29"):
        read_back(comp, path, grids=grids, dofs=rows_of(comp)[:-1])


def test_without_pynastran_the_error_says_how_to_install(tmp_path, monkeypatch):
    comp = split(cantilever())[2]
    path = write_op4_ascii(tmp_path / "c.op4", {"KAAX": comp.K, "MAAX": comp.M}, 16)
    monkeypatch.setitem(sys.modules, "pyNastran.op4.op4", None)           # import -> ImportError
    with pytest.raises(ModelError, match=r"needs pyNastran, an optional extra: pip install flexmb\[nastran\]"):
        read_back(comp, path, grids={grid_id(n): x for n, x in zip(comp.nodes, comp.model.coordinates)})


# ---------------------------------------------------------------------------- errors
@pytest.fixture
def bulk(tmp_path):
    comp = split(cantilever())[1]
    return comp, write_bulk(tmp_path / "c.bdf", comp)


def test_missing_matrix_lists_the_names(bulk):
    comp, path = bulk
    with pytest.raises(ModelError, match=r"no matrix 'K2GG' in .*c.bdf'; the files have KSUPER, MSUPER"):
        read_back(comp, path)


def test_dmig_refers_to_a_grid_not_given(bulk):
    comp, path = bulk
    text = path.read_text().splitlines()
    path.write_text("\n".join(t for t in text if not t.startswith(f"GRID,{grid_id(comp.nodes[2])},")) + "\n")
    with pytest.raises(ModelError, match=rf"KSUPER .* refers to grid {grid_id(comp.nodes[2])}, which is not given"):
        read_back(comp, path, stiffness="KSUPER", mass="MSUPER")


def test_non_symmetric_and_non_square(tmp_path, bulk):
    comp, path = bulk
    rows = rows_of(comp)
    K = comp.K.toarray()
    K[7, 2] *= 1.0 + 1e-6                              # a square DMIG (IFO 1) that is not symmetric
    lines = grid_cards(comp) + dmig_cards("KSUPER", K, rows, ifo=1) + dmig_cards("MSUPER", comp.M, rows)
    (tmp_path / "square.bdf").write_text("\n".join(lines) + "\n")
    with pytest.raises(ModelError, match=r"K is not symmetric: K\[(2, 7|7, 2)\]"):
        read_back(comp, tmp_path / "square.bdf", stiffness="KSUPER", mass="MSUPER")
    (tmp_path / "rect.bdf").write_text(path.read_text().replace("DMIG,KSUPER,0,6,", "DMIG,KSUPER,0,9,"))
    with pytest.raises(ModelError, match=r"DMIG KSUPER .*IFO = 9 is not a square matrix"):
        read_back(comp, tmp_path / "rect.bdf", stiffness="KSUPER", mass="MSUPER")
    i, j = sp.tril(comp.K, k=-1).tocoo().row[0], sp.tril(comp.K, k=-1).tocoo().col[0]   # a lower entry
    both = path.read_text().replace("ENDDATA", f"DMIG,KSUPER,{rows[i][0]},{rows[i][1]},,{rows[j][0]},{rows[j][1]},1.0"
                                               "\nENDDATA")
    (tmp_path / "both.bdf").write_text(both)
    with pytest.raises(ModelError, match=r"symmetric \(IFO = 6\) but both"):
        read_back(comp, tmp_path / "both.bdf", stiffness="KSUPER", mass="MSUPER")


def test_rows_named_by_the_mass_alone_and_scalar_points(bulk, tmp_path):
    """A DOF that only M names is a row with zero stiffness (the rows are those K or M name: a bar's
    K names its axial DOFs alone); a grid not given is refused; a scalar point (component 0) too."""
    comp, path = bulk
    cards = ["GRID,101,,0.0,0.0,0.0", "GRID,102,,1.0,0.0,0.0", "DMIG,KBAR,0,6,2,0,,,2",
             "DMIG,KBAR,101,1,,101,1,1.0e6,,+", "+,102,1,-1.0e6", "DMIG,KBAR,102,1,,102,1,1.0e6",
             "DMIG,MBAR,0,6,2,0,,,6"]
    cards += [f"DMIG,MBAR,{g},{c},,{g},{c},0.5" for g in (101, 102) for c in (1, 2, 3)]
    (tmp_path / "bar.bdf").write_text("\n".join(cards) + "\n")
    bar = read_nastran_component(tmp_path / "bar.bdf", [101], stiffness="KBAR", mass="MBAR")
    assert bar.dof_names.tolist() == ["ux", "uy", "uz"] * 2
    np.testing.assert_array_equal(bar.K.toarray(), 1e6 * np.kron([[1, -1], [-1, 1]], np.diag([1, 0, 0])))
    np.testing.assert_array_equal(bar.M.toarray(), 0.5 * np.eye(6))
    (tmp_path / "long.bdf").write_text("\n".join(cards).replace(",,+\n+,", ",,") + "\n")
    with pytest.raises(ModelError, match=r"long.bdf', line 4: a free-field line holds at most 8 data fields"):
        read_nastran_component(tmp_path / "long.bdf", [101], stiffness="KBAR", mass="MBAR")
    missing = path.read_text().replace("ENDDATA", "DMIG,MSUPER,9999,1,,9999,1,1.0\nENDDATA")
    (tmp_path / "missing.bdf").write_text(missing)
    with pytest.raises(ModelError, match=r"refers to grid 9999, which is not given"):
        read_back(comp, tmp_path / "missing.bdf", stiffness="KSUPER", mass="MSUPER")
    spoint = path.read_text().replace("ENDDATA", "DMIG,KSUPER,77,0,,77,0,1.0\nENDDATA")
    (tmp_path / "spoint.bdf").write_text(spoint)
    with pytest.raises(ModelError, match=r"scalar point 77 \(component 0\)"):
        read_back(comp, tmp_path / "spoint.bdf", stiffness="KSUPER", mass="MSUPER")


def test_grid_outside_the_basic_system(bulk):
    comp, path = bulk
    g = grid_id(comp.nodes[1])
    text = path.read_text().splitlines()
    text = [t + ",4" if t.startswith(f"GRID,{g},") else t for t in text]
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(ModelError, match=rf"GRID {g} has CP = 0, CD = 4; only grids in the basic"):
        read_back(comp, path, stiffness="KSUPER", mass="MSUPER")


def test_nastran_number_forms():
    from flexmb.io.nastran import _real

    assert [_real(t) for t in ("1.5+3", "-2.5-2", ".5", "7.", "1.25D+1", "3.0E-4", "")] == \
        [1500.0, -0.025, 0.5, 7.0, 12.5, 3.0e-4, 0.0]


def test_small_field_cards_as_written_by_hand(tmp_path):
    """Fixed small-field GRID and DMIG cards (8-column fields, a continuation line, Nastran's
    exponent without E, a tab) give the bar: K = EA/L [[1, -1], [-1, 1]] on uy, zero on ux, uz;
    an entry given twice is refused."""
    text = (
        "$ bar 101-102 along y\n"
        "BEGIN BULK\n"
        "GRID         101              0.      0.      0.\n"
        "GRID         102              0.     2.5      0.\n"
        "DMIG    KBAR           0       6       2       0                       2\n"
        "DMIG    KBAR         101       2             101       2   4.2+5        +\n"
        "+            102       2  -4.2+5\n"
        "DMIG    KBAR         102       2             102       2  .42+6\n"
        "DMIG    MBAR           0       6       2       0                       6\n"
        + "".join(f"DMIG    MBAR    {g:>8}{c:>8}        {g:>8}{c:>8}   1.5D0\n"
                  for g in (101, 102) for c in (1, 2, 3) if (g, c) != (102, 3))
        + "DMIG\tMBAR\t102\t3\t\t102\t3\t0.25\n"
        "ENDDATA\n")
    (tmp_path / "bar.dat").write_text(text)
    bar = read_nastran_component(tmp_path / "bar.dat", [101], stiffness="KBAR", mass="MBAR")
    np.testing.assert_array_equal(bar.model.coordinates, [[0.0, 0.0, 0.0], [0.0, 2.5, 0.0]])
    np.testing.assert_array_equal(bar.K.toarray(), 4.2e5 * np.kron([[1, -1], [-1, 1]], np.diag([0, 1, 0])))
    np.testing.assert_array_equal(bar.M.diagonal(), [1.5] * 5 + [0.25])
    (tmp_path / "twice.dat").write_text(text.replace("ENDDATA", "DMIG,MBAR,102,3,,102,3,0.5\nENDDATA"))
    with pytest.raises(ModelError, match=r"DMIG MBAR gives the entry \(102, 3; 102, 3\) twice \(lines 15 and 16\)"):
        read_nastran_component(tmp_path / "twice.dat", [101], stiffness="KBAR", mass="MBAR")

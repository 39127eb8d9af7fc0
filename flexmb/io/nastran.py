"""Components from Nastran matrices: OP4 files (OUTPUT4) and DMIG bulk-data cards (issue 32, item 2).

:func:`read_nastran_component` builds a :class:`~flexmb.cms.component.Component` (through
:func:`~flexmb.cms.imported.imported_component`) from a stiffness and a mass matrix that Nastran
wrote, with the grid points and the DOF map of the rows:

* **OP4** (``OUTPUT4``, ASCII or binary, e.g. ``KAAX``/``MAAX`` or ``KGG``/``MGG``) is read with
  pyNastran, an optional extra (``pip install flexmb[nastran]``), imported only here and only when
  an OP4 file is read. An OP4 matrix does not say which DOF a row is: give ``dofs`` (one
  ``(grid id, component 1-6)`` per row), or let the rows be every grid in ascending id with
  components 1-6 (or 1-3 when there are three rows per grid), the g-set order of a model of grid
  points alone.
* **DMIG** cards (``DMIG, NAME, 0, IFO, TIN, ...`` and its columns ``DMIG, NAME, GJ, CJ, , G1, C1,
  A1, ...``; small, large (``DMIG*``) or free (comma) field) and **GRID** cards (``GRID, ID, CP, X1,
  X2, X3, CD``) are read from bulk data by this module, following the card layout of the Nastran
  quick reference guide (pyNastran 1.4.1's bulk-data reader does not import with numpy >= 2.4).
  The rows are every (grid, component) that the stiffness or the mass matrix names, sorted by grid
  id and component. A symmetric matrix (IFO = 6) gives one triangle and is mirrored.

Grid ids are the component's node labels (components meet by label) and components 1-6 are
``ux uy uz rx ry rz``. The positions come from the GRID cards of the files read, or from ``grids``
(a mapping grid id -> (x, y, z), or a bulk-data file whose GRID cards to use); only grids in the
basic coordinate system are accepted (CP and CD blank or 0), as flexmb's DOFs are global.

Nastran has no units; flexmb works in SI: the matrices must be in N/m, kg (and N m/rad, kg m^2 for
rotations) and the positions in m, i.e. a model built in N, m, kg, s. From N, mm, t, s: translational
stiffness and mass x 1e3, rotational stiffness and inertia x 1e-3, translation-rotation terms
unchanged, lengths x 1e-3; or, better, export from Nastran in SI.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from flexmb.checks import ModelError, keywords_listed
from flexmb.cms.component import Component
from flexmb.model import Model

__all__ = ["read_nastran_component"]

#: Nastran DOF components 1..6 -> flexmb DOF names (3D)
NASTRAN_DOFS = {1: "ux", 2: "uy", 3: "uz", 4: "rx", 5: "ry", 6: "rz"}
_INSTALL = "pip install flexmb[nastran]"
#: OP4 file suffixes; anything else is read as bulk data (.bdf, .dat, .nas, .blk, ...)
_OP4_SUFFIXES = (".op4",)
_NUMBER = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))([+-]\d+)$")   # Nastran's 1.5+3 (an E left out)


@keywords_listed
def read_nastran_component(paths: str | Path | Sequence[str | Path], interface: Iterable[int], stiffness: str = "",
                           mass: str = "", grids: Mapping[int, Sequence[float]] | str | Path | None = None,
                           dofs: Iterable[tuple[int, int]] | None = None, grounded: Iterable[tuple[int, int]] = (),
                           name: str = "nastran", parent: Model | None = None) -> Component:
    """A component from Nastran stiffness and mass matrices: OP4 files (through pyNastran, the
    optional extra ``flexmb[nastran]``) or DMIG bulk-data cards (read by flexmb), with GRID
    positions; grid ids become node labels and components 1-6 ``ux uy uz rx ry rz``.

    Parameters
    ----------
    paths : one file or several: OP4 files (suffix ``.op4``, ASCII or binary) and bulk-data files
        (DMIG and GRID cards in small, large or free field); the matrices are looked up by name in
        all of them. Only the basic coordinate system is read (GRID CP and CD blank or 0).
    interface : grid ids of the interface nodes (shared with other components).
    stiffness, mass : matrix names; default ``KAAX``/``MAAX`` in OP4 files and ``K2GG``/``M2GG``
        in bulk data. Units N/m (N m/rad) and kg (kg m^2): Nastran is unit-agnostic, flexmb is SI.
    grids : grid positions, m: a mapping grid id -> (x, y, z) or a bulk-data file with GRID
        cards; default the GRID cards of the bulk-data files in ``paths``.
    dofs : OP4 only: ``(grid id, component 1-6)`` of every row, in row order; default every grid
        in ascending id with components 1-6 (or 1-3), the g-set order of grid points alone. A DMIG
        names its rows: every (grid, component) that K or M names, sorted.
    grounded : ``(grid id, component 1-6)`` pairs tied to the ground (the SPCs of a g-set
        matrix such as ``KGG`` or ``K2GG``, which still holds those DOFs).
    name, parent : as for :func:`~flexmb.cms.imported.imported_component`.

    Raises ModelError naming the file and the matrix, line or grid for: a matrix name not in the
    files (listing the names they have), pyNastran missing for an OP4 file, a DMIG naming a grid
    that is not given or a scalar point, a complex or rectangular matrix, a symmetric DMIG that
    gives both triangles, an entry given twice, rows that do not match ``dofs``, a grid outside the
    basic coordinate system, and
    everything :func:`~flexmb.cms.imported.imported_component` refuses (non-square, non-symmetric,
    sizes that differ, nodes that do not all carry the same DOFs).
    """
    from flexmb.cms.imported import imported_component

    files = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    for path in files:
        if not path.is_file():
            raise ModelError(f"reading Nastran component {name!r}: file {str(path)!r} does not exist")
    op4 = [p for p in files if p.suffix.lower() in _OP4_SUFFIXES]
    bulk = [p for p in files if p not in op4]
    stiffness = stiffness or ("KAAX" if op4 else "K2GG")
    mass = mass or ("MAAX" if op4 else "M2GG")
    cards = [_bulk_data(p) for p in bulk]
    positions: dict[int, tuple[np.ndarray, str]] = {}
    if grids is None:
        for path, (grid_cards, _) in zip(bulk, cards):
            positions.update({g: (x, str(path)) for g, x in grid_cards.items()})
    elif isinstance(grids, (str, Path)):
        positions = {g: (x, str(grids)) for g, x in _bulk_data(Path(grids))[0].items()}
    else:
        positions = {int(g): (np.asarray(x, dtype=float), "grids") for g, x in grids.items()}
    matrices: dict[str, tuple[sp.csr_matrix, list[tuple[int, int]] | None, str]] = {}
    for path in op4:
        wanted = {stiffness, mass} - matrices.keys()
        matrices.update({k: (A, None, str(path)) for k, A in _op4_matrices(path, wanted).items()})
    for path, (_, dmig) in zip(bulk, cards):
        for key in {stiffness, mass} - matrices.keys():
            if key in dmig:
                matrices[key] = (*_dmig_matrix(dmig[key], key, path), str(path))
    for key in (stiffness, mass):
        if key not in matrices:
            have = sorted(_op4_names(op4) + [k for _, d in cards for k in d])
            raise ModelError(f"reading Nastran component {name!r}: no matrix {key!r} in "
                             f"{', '.join(repr(str(p)) for p in files)}; the files have "
                             f"{', '.join(have) if have else 'no matrices'}")
    (K, k_rows, k_file), (M, m_rows, m_file) = matrices[stiffness], matrices[mass]
    if (k_rows is None) != (m_rows is None):
        raise ModelError(f"reading Nastran component {name!r}: {stiffness} ({k_file}) and {mass} ({m_file}) must "
                         "both be OP4 matrices or both DMIG")
    if k_rows is None:
        rows = _op4_rows(dofs, K.shape[0], positions, stiffness, k_file, name)
        if K.shape != M.shape:
            raise ModelError(f"reading Nastran component {name!r}: {stiffness} ({k_file}) is {K.shape[0]} x "
                             f"{K.shape[1]} but {mass} ({m_file}) is {M.shape[0]} x {M.shape[1]}")
    else:
        if dofs is not None:
            raise ModelError(f"reading Nastran component {name!r}: dofs= is for OP4 matrices; the DMIG {stiffness} "
                             f"names its rows")
        rows = sorted(set(k_rows) | set(m_rows))         # a DOF with mass but no stiffness is a row too
        K, M = _reorder(K, k_rows, rows), _reorder(M, m_rows, rows)
    labels = sorted({g for g, _ in rows})
    for g in labels:
        if g not in positions:
            key, path = (stiffness, k_file) if k_rows is None or any(r[0] == g for r in k_rows) else (mass, m_file)
            source = "grids=" if grids is not None and not isinstance(grids, (str, Path)) else "the GRID cards"
            raise ModelError(f"reading Nastran component {name!r}: {key} ({path}) refers to grid {g}, which is not "
                             f"given in {source} ({len(positions)} grids given)")
    coordinates = np.array([positions[g][0] for g in labels], dtype=float).reshape(len(labels), -1)
    if coordinates.shape[1] != 3:
        raise ModelError(f"reading Nastran component {name!r}: grid positions must be (x, y, z), got "
                         f"{coordinates.shape[1]} values per grid")
    dof_map = [(g, NASTRAN_DOFS[c]) for g, c in rows]
    ground = [(int(g), _dof_name(int(c), "grounded", name)) for g, c in grounded]
    return imported_component(K, M, coordinates, dof_map, interface, nodes=labels, grounded=ground, name=name,
                              source=k_file, parent=parent)


# ---------------------------------------------------------------------------- OP4 (pyNastran)
def _pynastran_op4():
    """pyNastran's OP4 reader, or a ModelError saying how to install it."""
    try:
        from pyNastran.op4.op4 import read_op4
    except ImportError:
        raise ModelError(f"reading OP4 files needs pyNastran, an optional extra: {_INSTALL}") from None
    return read_op4


def _op4_all(path: Path) -> dict:
    try:
        return _pynastran_op4()(str(path), debug=False)
    except ModelError:
        raise
    except Exception as exc:                              # pyNastran raises many kinds on a malformed file
        raise ModelError(f"reading OP4 file {str(path)!r}: pyNastran could not read it ({type(exc).__name__}: "
                         f"{exc})") from None


def _op4_names(paths: list[Path]) -> list[str]:
    return [k for p in paths for k in _op4_all(p)]


def _op4_matrices(path: Path, names: set[str]) -> dict[str, sp.csr_matrix]:
    """The matrices ``names`` that ``path`` holds, as real csr matrices."""
    out = {}
    for key, matrix in _op4_all(path).items():
        if key not in names:
            continue
        A = matrix.data
        if np.iscomplexobj(A.data if sp.issparse(A) else A):
            raise ModelError(f"OP4 file {str(path)!r}: matrix {key!r} is complex; K and M must be real")
        out[key] = sp.csr_matrix(A, dtype=float)
    return out


def _op4_rows(dofs, n: int, positions: dict, key: str, path: str, name: str) -> list[tuple[int, int]]:
    """(grid, component) of each OP4 row: ``dofs`` checked, or all grids ascending x 6 (or x 3)."""
    if dofs is not None:
        rows = [(int(g), int(c)) for g, c in dofs]
        for g, c in rows:
            _dof_name(c, f"dofs entry ({g}, {c})", name)
        if len(rows) != n:
            raise ModelError(f"reading Nastran component {name!r}: {key} ({path}) has {n} rows but dofs= names "
                             f"{len(rows)}")
        return rows
    ids = sorted(positions)
    for per in (6, 3):
        if n == per * len(ids):
            return [(g, c) for g in ids for c in range(1, per + 1)]
    raise ModelError(f"reading Nastran component {name!r}: {key} ({path}) has {n} rows, which is neither 6 nor 3 "
                     f"per grid for the {len(ids)} grids given; pass dofs= (grid id, component) for every row")


def _dof_name(component: int, what: str, name: str) -> str:
    if component not in NASTRAN_DOFS:
        raise ModelError(f"Nastran component {name!r}: {what}: component {component} is not a grid DOF 1-6")
    return NASTRAN_DOFS[component]


# ---------------------------------------------------------------------------- bulk data (own reader)
def _bulk_data(path: Path) -> tuple[dict[int, np.ndarray], dict[str, list[list[str]]]]:
    """GRID positions (basic system, m) and DMIG cards (name -> cards, each a list of fields 2..)."""
    if not path.is_file():
        raise ModelError(f"reading Nastran bulk data: file {str(path)!r} does not exist")
    grids: dict[int, np.ndarray] = {}
    dmig: dict[str, list[list[str]]] = {}
    for line_no, card in _cards(path):
        head = card[0].rstrip("*").upper()
        if head == "GRID":
            fields = card[1:] + [""] * 8
            try:
                gid, cp, cd = int(fields[0]), _integer(fields[1]), _integer(fields[5])
                xyz = np.array([_real(v) for v in fields[2:5]])
            except ValueError:
                raise ModelError(f"{str(path)!r}, line {line_no}: cannot read GRID card {card!r}") from None
            if cp or cd:
                raise ModelError(f"{str(path)!r}, line {line_no}: GRID {gid} has CP = {cp}, CD = {cd}; only grids "
                                 "in the basic coordinate system (CP and CD blank or 0) are read; give grids= in "
                                 "the basic system")
            grids[gid] = xyz
        elif head == "DMIG" and len(card) > 1:
            dmig.setdefault(card[1].strip().upper(), []).append([line_no, *card[1:]])
        elif head == "INCLUDE":
            raise ModelError(f"{str(path)!r}, line {line_no}: INCLUDE is not followed; pass the included file "
                             "among the paths")
    return grids, dmig


def _cards(path: Path):
    """(first line number, fields) of every bulk-data card, continuations joined; field 1 is the
    card name, then every data field in order (8 per small-field line, 4 per large-field line,
    blank fields kept as '' so that positions hold). A free-field line holds the card name or
    continuation marker, up to 8 (large: 4) data fields and an optional continuation marker;
    ModelError for a line with more (its extra fields would be lost)."""
    card: list[str] | None = None
    start = 0
    for line_no, raw in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        text = raw.split("$", 1)[0].rstrip().expandtabs(8)
        if not text.strip():
            continue
        if "," in text:                                   # free field
            parts = [p.strip() for p in text.split(",")]
        else:                                             # fixed: 8 columns, then 8 x 8 (small) or 4 x 16 (large)
            parts = [text[:8].strip()]
            opens = bool(parts[0]) and parts[0][0].isalpha()
            large = parts[0].endswith("*") if opens else card is not None and card[0].endswith("*")
            width = 16 if large else 8
            parts += [text[k:k + width].strip() for k in range(8, 8 + 64, width)]
        first = parts[0]
        opens = bool(first) and first[0].isalpha()
        if not opens and card is None:
            continue                                      # a stray continuation before any card
        per = 4 if (first if opens else card[0]).endswith("*") else 8
        extra = parts[1 + per:]
        if len(extra) > 1 or (extra and extra[0] and extra[0][0] not in "+*"):
            raise ModelError(f"{str(path)!r}, line {line_no}: a free-field line holds at most {per} data fields "
                             f"and a continuation marker, this one {len(parts) - 1} fields; continue the card on a "
                             "line starting with '+'")
        if opens:
            if card is not None:
                yield start, card
            card, start = [first], line_no
        card += (parts[1:1 + per] + [""] * per)[:per]
    if card is not None:
        yield start, card


def _real(text: str) -> float:
    text = text.strip().upper().replace("D", "E")
    match = _NUMBER.match(text)
    return float(f"{match.group(1)}E{match.group(2)}" if match else text) if text else 0.0


def _integer(text: str) -> int:
    return int(text) if text.strip() else 0


def _dmig_matrix(cards: list[list], key: str, path: Path) -> tuple[sp.csr_matrix, list[tuple[int, int]]]:
    """The DMIG ``key`` as a square real matrix over the (grid, component) pairs it names, sorted."""
    where = f"{str(path)!r}: DMIG {key}"
    headers = [c for c in cards if c[2].strip() == "0"]
    if len(headers) != 1:
        raise ModelError(f"{where}: expected one header card (GJ = 0), found {len(headers)}")
    line_no, _, _, ifo, tin = headers[0][:5]
    ifo, tin = _integer(ifo), _integer(tin)
    if tin not in (1, 2):
        raise ModelError(f"{where} (line {line_no}): TIN = {tin} is a complex matrix; K and M must be real (TIN 1 "
                         "or 2)")
    if ifo not in (1, 6):
        raise ModelError(f"{where} (line {line_no}): IFO = {ifo} is not a square matrix (1) or a symmetric one "
                         "(6); K and M must be square")
    entries = []
    for card in cards:
        if card is headers[0]:
            continue
        line_no = card[0]
        try:
            column = (int(card[2]), _integer(card[3]))
            fields = card[5:]                       # G1 C1 A1 B1 G2 C2 A2 B2 ...
            for k in range(0, len(fields) - 3, 4):
                if not fields[k].strip():
                    continue
                entries.append(((int(fields[k]), _integer(fields[k + 1])), column, _real(fields[k + 2]), line_no))
        except ValueError:
            raise ModelError(f"{where}, line {line_no}: cannot read the column card {card[1:]!r}") from None
    first_line: dict[tuple, int] = {}
    for row, col, _, line_no in entries:
        if (row, col) in first_line:
            raise ModelError(f"{where} gives the entry ({row[0]}, {row[1]}; {col[0]}, {col[1]}) twice (lines "
                             f"{first_line[row, col]} and {line_no})")
        first_line[row, col] = line_no
        for g, c in (row, col):
            if c == 0:
                raise ModelError(f"{where}, line {line_no}: scalar point {g} (component 0) is a generalised "
                                 "coordinate; only grid DOFs (components 1-6) can be read")
            if c not in NASTRAN_DOFS:
                raise ModelError(f"{where}, line {line_no}: grid {g} component {c} is not 1-6")
    keys = sorted({k for row, col, _, _ in entries for k in (row, col)})
    index = {k: i for i, k in enumerate(keys)}
    i = np.array([index[e[0]] for e in entries], dtype=np.int64)
    j = np.array([index[e[1]] for e in entries], dtype=np.int64)
    v = np.array([e[2] for e in entries], dtype=float)
    A = sp.csr_matrix((v, (i, j)), shape=(len(keys),) * 2)
    if ifo == 6:
        off = sp.csr_matrix((np.ones(i.size), (i, j)), shape=A.shape)
        off.setdiag(0.0)
        off.eliminate_zeros()
        both = off.multiply(off.T).tocoo()
        if both.nnz:
            r, c = keys[both.row[0]], keys[both.col[0]]
            raise ModelError(f"{where}: symmetric (IFO = 6) but both ({r[0]}, {r[1]}; {c[0]}, {c[1]}) and its "
                             "mirror are given; a symmetric DMIG gives one triangle")
        A = A + A.T - sp.diags(A.diagonal())
    return A.tocsr(), keys


def _reorder(A: sp.csr_matrix, have: list, want: list) -> sp.csr_matrix:
    """A (rows ``have``) with the rows and columns ``want`` (a superset): zero for a DOF it does not name."""
    index = {k: i for i, k in enumerate(want)}
    P = sp.csr_matrix((np.ones(len(have)), ([index[k] for k in have], np.arange(len(have)))),
                      shape=(len(want), len(have)))
    return (P @ A @ P.T).tocsr()

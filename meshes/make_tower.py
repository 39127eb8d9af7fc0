"""Write ``tower_lattice_3d.msh`` and ``tower_lattice_3d_coarse.msh``: a tubular lattice tower with a
payload platform as Gmsh meshes (MSH 4.1, ASCII).

Run ``python meshes/make_tower.py`` (from anywhere); both files are written next to this script.
Gmsh itself is not needed: as in ``make_portal_frame.py`` the script lays out the geometry
entities, nodes and elements in Gmsh's own file format (only the elements of physical groups).

The tower (z up, m): 4 legs on a rectangular plan tapering from 3 m x 2.4 m at the base (z = 0)
to 1.6 m x 1.2 m at the head (z = 18), 6 panels of 3 m (the plan is not square so that the two
bending directions have distinct frequencies). Every panel has a horizontal ring at its top and
X bracing on its 4 faces (the two diagonals of a face meet in a node where they cross). A leg
splice at z = 9 divides the tower into a lower and an upper section. On the head sits a 3 m x 3 m platform:
4 outriggers from the leg tops to the platform corners, 4 arms from the leg tops to the centre,
and the 4 edge beams; the payload (an antenna, a point mass in the model) sits at the centre.

Every member is a Gmsh curve divided into two-node line elements: legs, rings and platform
members into ``divisions``, each half of a diagonal (corner to crossing) into ``divisions // 2``
(at least 1). ``tower_lattice_3d.msh`` has ``divisions = 4`` (333 nodes, 432 line elements),
``tower_lattice_3d_coarse.msh`` ``divisions = 2`` (117 nodes, 216 line elements). Physical groups:

=============  =========  ===  ======================================================
name           dimension  tag  contents
=============  =========  ===  ======================================================
base           0          1    the 4 leg feet (z = 0), point elements
payload        0          2    the platform centre (z = 18), point element
lower_legs     1          3    legs of panels 1-3 (z = 0 to 9)
lower_bracing  1          4    diagonals of panels 1-3, rings at z = 3, 6, 9
upper_legs     1          5    legs of panels 4-6 (z = 9 to 18)
upper_bracing  1          6    diagonals of panels 4-6, rings at z = 12, 15, 18
platform       1          7    outriggers, arms and edge beams of the platform
=============  =========  ===  ======================================================
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

HEIGHT, PANELS = 18.0, 6                       # m, number of panels
BASE_SIZE = np.array([3.0, 2.4])               # plan size (x, y) at z = 0, m
HEAD_SIZE = np.array([1.6, 1.2])               # plan size (x, y) at z = HEIGHT, m
SPLICE_PANEL = 3                               # panels below the splice belong to the lower section
PLATFORM_WIDTH = 3.0                           # m
PHYSICAL = {"base": (0, 1), "payload": (0, 2), "lower_legs": (1, 3), "lower_bracing": (1, 4),
            "upper_legs": (1, 5), "upper_bracing": (1, 6), "platform": (1, 7)}   # name: (dim, tag)
FILES = {"tower_lattice_3d.msh": 4, "tower_lattice_3d_coarse.msh": 2}            # file: divisions

LINE, POINT = 1, 15                            # Gmsh element type codes
SIGNS = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])          # plan corners, counter-clockwise


def levels() -> np.ndarray:
    """Heights z of the panel levels (PANELS + 1,)."""
    return np.linspace(0.0, HEIGHT, PANELS + 1)


def half_size(z: float) -> np.ndarray:
    """Half the plan size (x, y) of the tapered tower at height z."""
    return 0.5 * (BASE_SIZE + (HEAD_SIZE - BASE_SIZE) * z / HEIGHT)


def crossing(a: np.ndarray, c: np.ndarray, b: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Point where the diagonals a-c and b-d of a plane face cross."""
    s, *_ = np.linalg.lstsq(np.column_stack([c - a, b - d]), b - a, rcond=None)
    return a + s[0] * (c - a)


def geometry() -> tuple[np.ndarray, list[tuple[int, int, str, str]], dict[int, str]]:
    """Corner points (n, 3), members [(start point, end point, physical group, kind)] and the
    physical group of the points that have one. ``kind`` is "member" or "half-diagonal"."""
    points: list[np.ndarray] = []

    def add(p: np.ndarray) -> int:
        points.append(np.asarray(p, dtype=float))
        return len(points) - 1

    z = levels()
    corner = [[add([*(half_size(zk) * s), zk]) for s in SIGNS] for zk in z]     # corner[level][c]
    members: list[tuple[int, int, str, str]] = []
    for k in range(PANELS):
        section = "lower" if k < SPLICE_PANEL else "upper"
        for c in range(4):
            members.append((corner[k][c], corner[k + 1][c], f"{section}_legs", "member"))
        for c in range(4):
            a, b = corner[k][c], corner[k][(c + 1) % 4]
            top_b, top_a = corner[k + 1][(c + 1) % 4], corner[k + 1][c]
            x = add(crossing(points[a], points[top_b], points[b], points[top_a]))
            for end in (a, b, top_b, top_a):
                members.append((end, x, f"{section}_bracing", "half-diagonal"))
        for c in range(4):                                                      # ring on the panel top
            members.append((corner[k + 1][c], corner[k + 1][(c + 1) % 4], f"{section}_bracing", "member"))

    head = corner[PANELS]
    centre = add([0.0, 0.0, HEIGHT])
    deck = [add([*(0.5 * PLATFORM_WIDTH * s), HEIGHT]) for s in SIGNS]
    for c in range(4):
        members.append((head[c], deck[c], "platform", "member"))                # outrigger
        members.append((head[c], centre, "platform", "member"))                 # arm
        members.append((deck[c], deck[(c + 1) % 4], "platform", "member"))      # edge beam
    physical_points = {p: "base" for p in corner[0]} | {centre: "payload"}
    return np.array(points), members, physical_points


def msh_text(divisions: int) -> str:
    """The whole file as text, members divided into ``divisions`` line elements."""
    corners, members, physical_points = geometry()
    n_corner, n_member = len(corners), len(members)
    ends = np.array([(a, b) for a, b, _, _ in members])
    counts = np.array([divisions if kind == "member" else max(1, divisions // 2) for *_, kind in members])
    tags = [PHYSICAL[group][1] for _, _, group, _ in members]

    out = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat", "$PhysicalNames", str(len(PHYSICAL))]
    out += [f'{dim} {tag} "{name}"' for name, (dim, tag) in PHYSICAL.items()]
    out += ["$EndPhysicalNames", "$Entities", f"{n_corner} {n_member} 0 0"]
    for k, p in enumerate(corners):
        phys = f"1 {PHYSICAL[physical_points[k]][1]}" if k in physical_points else "0"
        out.append(f"{k + 1} {p[0]:.17g} {p[1]:.17g} {p[2]:.17g} {phys}")
    for m, ((a, b), tag) in enumerate(zip(ends, tags)):
        lo, hi = np.minimum(corners[a], corners[b]), np.maximum(corners[a], corners[b])
        box = " ".join(f"{v:.17g}" for v in np.r_[lo, hi])
        out.append(f"{m + 1} {box} 1 {tag} 2 {a + 1} -{b + 1}")               # bounded by start, -end
    out.append("$EndEntities")

    # Nodes: the node of point entity k is node k + 1; the interior nodes of the members follow,
    # member by member.
    interior, next_tag = [], n_corner + 1
    for (a, b), n in zip(ends, counts):
        s = np.arange(1, n)[:, None] / n
        interior.append((np.arange(next_tag, next_tag + n - 1), corners[a] + s * (corners[b] - corners[a])))
        next_tag += n - 1
    n_nodes = next_tag - 1
    out += ["$Nodes", f"{n_corner + n_member} {n_nodes} 1 {n_nodes}"]
    for k, p in enumerate(corners):
        out += [f"0 {k + 1} 0 1", str(k + 1), " ".join(f"{v:.17g}" for v in p)]
    for m, (node_tags, xyz) in enumerate(interior):
        out += [f"1 {m + 1} 0 {len(node_tags)}"] + [str(t) for t in node_tags]
        out += [" ".join(f"{v:.17g}" for v in p) for p in xyz]
    out.append("$EndNodes")

    # Elements: one block per physical point, then one block of line elements per member.
    n_elements = len(physical_points) + int(counts.sum())
    out += ["$Elements", f"{len(physical_points) + n_member} {n_elements} 1 {n_elements}"]
    tag = 0
    for k in sorted(physical_points):
        tag += 1
        out += [f"0 {k + 1} {POINT} 1", f"{tag} {k + 1}"]
    for m, ((a, b), n) in enumerate(zip(ends, counts)):
        chain = np.r_[a + 1, interior[m][0], b + 1]                             # node tags along the member
        out.append(f"1 {m + 1} {LINE} {n}")
        for i in range(n):
            tag += 1
            out.append(f"{tag} {chain[i]} {chain[i + 1]}")
    out.append("$EndElements")
    return "\n".join(out) + "\n"


def main() -> None:
    for name, divisions in FILES.items():
        path = Path(__file__).with_name(name)
        path.write_text(msh_text(divisions))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

"""Write ``portal_frame_3d.msh``: a 3D two-storey portal frame as a Gmsh mesh (MSH 4.1, ASCII).

Run ``python meshes/make_portal_frame.py`` (from anywhere); the file is written next to this
script. Gmsh itself is not needed: the script lays out the geometry entities, nodes and elements
in Gmsh's own file format, so the file reads like a mesh Gmsh saved (``Mesh.SaveAll = 0``: only
the elements of physical groups).

The frame (z up, m): 4 columns at the corners of a 4 m (x) by 3 m (y) plan, 2 storeys of 3.5 m,
beams along the 4 plan edges at each floor level (z = 3.5 and 7). Every member (a column of one
storey or a beam of one floor) is a Gmsh curve divided into 4 two-node line elements, so the
mesh has 12 corner points, 16 members, 60 nodes and 64 line elements. Physical groups:

=========  =========  ===  ==============================================
name       dimension  tag  contents
=========  =========  ===  ==============================================
base       0          1    the 4 column foot points (z = 0), point elements
roof       0          2    the 4 top corner points (z = 7), point elements
columns    1          3    8 column members, 32 line elements
beams      1          4    8 floor beams, 32 line elements
=========  =========  ===  ==============================================
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

PLAN = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 3.0], [0.0, 3.0]])   # corner (x, y), m
LEVELS = np.array([0.0, 3.5, 7.0])                                   # floor heights z, m
DIVISIONS = 4                                                        # line elements per member
PHYSICAL = {"base": (0, 1), "roof": (0, 2), "columns": (1, 3), "beams": (1, 4)}   # name: (dim, tag)
OUTPUT = Path(__file__).with_name("portal_frame_3d.msh")

LINE, POINT = 1, 15                                                  # Gmsh element type codes


def corner_points() -> np.ndarray:
    """(12, 3) corner coordinates, level by level; point entity k + 1 is row k."""
    return np.array([[x, y, z] for z in LEVELS for x, y in PLAN])


def members() -> tuple[np.ndarray, np.ndarray]:
    """Members as (16, 2) corner indices (start, end) and their physical tags (16,)."""
    n_c = len(PLAN)
    columns = [(level * n_c + c, (level + 1) * n_c + c)
               for level in range(len(LEVELS) - 1) for c in range(n_c)]
    beams = [(level * n_c + c, level * n_c + (c + 1) % n_c)
             for level in range(1, len(LEVELS)) for c in range(n_c)]
    tags = [PHYSICAL["columns"][1]] * len(columns) + [PHYSICAL["beams"][1]] * len(beams)
    return np.array(columns + beams), np.array(tags)


def msh_text() -> str:
    """The whole file as text."""
    corners = corner_points()
    ends, member_tags = members()
    n_corner, n_member = len(corners), len(ends)
    top = len(LEVELS) - 1
    point_tag = {k: PHYSICAL["base"][1] if k < len(PLAN) else
                 PHYSICAL["roof"][1] if k >= top * len(PLAN) else None for k in range(n_corner)}

    out = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat", "$PhysicalNames", str(len(PHYSICAL))]
    out += [f'{dim} {tag} "{name}"' for name, (dim, tag) in PHYSICAL.items()]
    out += ["$EndPhysicalNames", "$Entities", f"{n_corner} {n_member} 0 0"]
    for k, p in enumerate(corners):
        phys = "0" if point_tag[k] is None else f"1 {point_tag[k]}"
        out.append(f"{k + 1} {p[0]:.17g} {p[1]:.17g} {p[2]:.17g} {phys}")
    for m, ((a, b), tag) in enumerate(zip(ends, member_tags)):
        lo, hi = np.minimum(corners[a], corners[b]), np.maximum(corners[a], corners[b])
        box = " ".join(f"{v:.17g}" for v in np.r_[lo, hi])
        out.append(f"{m + 1} {box} 1 {tag} 2 {a + 1} -{b + 1}")      # bounded by start, -end
    out.append("$EndEntities")

    # Nodes: the corner node of point entity k is node k + 1; the DIVISIONS - 1 interior nodes
    # of member m follow, member by member.
    s = np.arange(1, DIVISIONS) / DIVISIONS                          # (DIVISIONS - 1,)
    interior = corners[ends[:, 0], None] + s[None, :, None] * (corners[ends[:, 1]] - corners[ends[:, 0]])[:, None]
    interior_tags = n_corner + 1 + np.arange(n_member * (DIVISIONS - 1)).reshape(n_member, -1)
    n_nodes = n_corner + interior_tags.size
    out += ["$Nodes", f"{n_corner + n_member} {n_nodes} 1 {n_nodes}"]
    for k, p in enumerate(corners):
        out += [f"0 {k + 1} 0 1", str(k + 1), " ".join(f"{v:.17g}" for v in p)]
    for m in range(n_member):
        out += [f"1 {m + 1} 0 {DIVISIONS - 1}"] + [str(t) for t in interior_tags[m]]
        out += [" ".join(f"{v:.17g}" for v in p) for p in interior[m]]
    out.append("$EndNodes")

    # Elements: one block per physical point, then one block of DIVISIONS lines per member.
    physical_points = [k for k in range(n_corner) if point_tag[k] is not None]
    n_elements = len(physical_points) + n_member * DIVISIONS
    out += ["$Elements", f"{len(physical_points) + n_member} {n_elements} 1 {n_elements}"]
    tag = 0
    for k in physical_points:
        tag += 1
        out += [f"0 {k + 1} {POINT} 1", f"{tag} {k + 1}"]
    for m, (a, b) in enumerate(ends):
        chain = np.r_[a + 1, interior_tags[m], b + 1]                # node tags along the member
        out.append(f"1 {m + 1} {LINE} {DIVISIONS}")
        for i in range(DIVISIONS):
            tag += 1
            out.append(f"{tag} {chain[i]} {chain[i + 1]}")
    out.append("$EndElements")
    return "\n".join(out) + "\n"


def main() -> None:
    OUTPUT.write_text(msh_text())
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()

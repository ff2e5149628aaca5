#!/usr/bin/python3
# Generated inputs of tools/bench/convergence.py, written into its work folder so both renderers
# load the same files:
# - an OBJ + MTL of a scanned mesh (PLY) standing on a floor quad, with Lambertian (Kd only,
#   Ks 0) materials and area-weighted vertex normals (smooth shading on both sides);
# - a lat-long HDR environment (OpenEXR, float RGB): a sky gradient, a dark ground and a
#   sun-like hot spot. Deterministic: the same parameters give the same bytes' worth of pixels.
import math
import os

import numpy as np

_PLY_TYPES = {"char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2", "int16": "i2",
              "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
              "float": "f4", "float32": "f4", "double": "f8", "float64": "f8"}


def read_ply(path):
    """Positions (n, 3) float64 and triangles (m, 3) int64 of a PLY file (ASCII or binary, either
    endianness; polygons are fanned into triangles). Other properties are read and dropped."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.find(b"end_header")
    if not data.startswith(b"ply") or end < 0:
        raise ValueError(f"{path}: not a PLY file")
    body_start = data.index(b"\n", end) + 1
    header = data[:end].decode("ascii", errors="replace").replace("\r", "").split("\n")
    fmt, elements = None, []  # [(name, count, [(prop name, type, list count type or None)])]
    for line in header:
        w = line.split()
        if not w:
            continue
        if w[0] == "format":
            fmt = w[1]
        elif w[0] == "element":
            elements.append((w[1], int(w[2]), []))
        elif w[0] == "property":
            if w[1] == "list":
                elements[-1][2].append((w[4], _PLY_TYPES[w[3]], _PLY_TYPES[w[2]]))
            else:
                elements[-1][2].append((w[2], _PLY_TYPES[w[1]], None))
    if fmt not in ("ascii", "binary_little_endian", "binary_big_endian"):
        raise ValueError(f"{path}: unsupported PLY format {fmt!r}")
    verts, faces = None, None
    if fmt == "ascii":
        tokens = data[body_start:].split()
        pos = 0
        for name, count, props in elements:
            rows = []
            for _ in range(count):
                row = {}
                for pname, _t, ltype in props:
                    if ltype is None:
                        row[pname] = float(tokens[pos])
                        pos += 1
                    else:
                        n = int(tokens[pos])
                        row[pname] = [int(x) for x in tokens[pos + 1:pos + 1 + n]]
                        pos += 1 + n
                rows.append(row)
            if name == "vertex":
                verts = np.array([[r["x"], r["y"], r["z"]] for r in rows], dtype=np.float64)
            elif name == "face":
                key = next(p[0] for p in props if p[2] is not None)
                faces = [r[key] for r in rows]
    else:
        endian = "<" if fmt == "binary_little_endian" else ">"
        off = body_start
        for name, count, props in elements:
            if all(p[2] is None for p in props):
                dt = np.dtype([(p[0], endian + p[1]) for p in props])
                arr = np.frombuffer(data, dtype=dt, count=count, offset=off)
                off += dt.itemsize * count
                if name == "vertex":
                    verts = np.stack([arr["x"], arr["y"], arr["z"]], axis=1).astype(np.float64)
                continue
            # Elements with lists: try the common fixed layout (every list of the first one's
            # length) and check it, else walk them one by one.
            scalar = lambda t: np.dtype(endian + t)  # noqa: E731
            first = off
            fixed = []
            for pname, t, ltype in props:
                if ltype is None:
                    fixed.append((pname, endian + t))
                else:
                    n = int(np.frombuffer(data, dtype=scalar(ltype), count=1, offset=first)[0])
                    fixed += [(pname + "_n", endian + ltype), (pname, endian + t, (n,))]
                first += scalar(t if ltype is None else ltype).itemsize
            dt = np.dtype(fixed)
            lists = None
            if off + dt.itemsize * count <= len(data):
                arr = np.frombuffer(data, dtype=dt, count=count, offset=off)
                lp = next(p for p in props if p[2] is not None)
                n = dt[lp[0]].shape[0]
                if np.all(arr[lp[0] + "_n"] == n):
                    lists = [arr[lp[0]]]
                    off += dt.itemsize * count
            if lists is None:
                out = []
                for _ in range(count):
                    for pname, t, ltype in props:
                        if ltype is None:
                            off += scalar(t).itemsize
                        else:
                            n = int(np.frombuffer(data, dtype=scalar(ltype), count=1, offset=off)[0])
                            off += scalar(ltype).itemsize
                            out.append(list(np.frombuffer(data, dtype=scalar(t), count=n, offset=off)))
                            off += scalar(t).itemsize * n
                lists = [out]
            if name == "face":
                faces = lists[0]
    if verts is None or faces is None:
        raise ValueError(f"{path}: no vertex or face element")
    if isinstance(faces, np.ndarray) and faces.ndim == 2 and faces.shape[1] == 3:
        tris = faces.astype(np.int64)
    else:
        tris = np.array([[f[0], f[i], f[i + 1]] for f in faces for i in range(1, len(f) - 1)], dtype=np.int64)
    return verts, tris


def rotation_y(degrees):
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def vertex_normals(verts, tris):
    """Area-weighted vertex normals (unit; a vertex of no face gets +Y)."""
    fn = np.cross(verts[tris[:, 1]] - verts[tris[:, 0]], verts[tris[:, 2]] - verts[tris[:, 0]])
    n = np.zeros_like(verts)
    for k in range(3):
        np.add.at(n, tris[:, k], fn)
    length = np.linalg.norm(n, axis=1)
    n[length == 0] = (0.0, 1.0, 0.0)
    length[length == 0] = 1.0
    return n / length[:, None]


def mesh_on_floor(ply, obj_path, height, rotate_y=0.0, mesh_albedo=(0.6, 0.6, 0.6), floor_albedo=(0.5, 0.5, 0.5),
                  floor_size=40.0, center=(0.0, 0.0)):
    """Writes obj_path (+ .mtl): the PLY mesh scaled to `height`, turned about +Y, its lowest point
    on y = 0 and its bounding box centred on `center` (x, z), on a floor_size square at y = 0.
    Returns a dict of what was written (bounds, counts)."""
    verts, tris = read_ply(ply)
    used = np.unique(tris)
    lo, hi = verts[used].min(0), verts[used].max(0)
    v = (verts - (lo + hi) / 2) * (height / (hi - lo)[1])
    v = v @ rotation_y(rotate_y).T
    lo, hi = v[used].min(0), v[used].max(0)
    v += np.array([center[0] - (lo[0] + hi[0]) / 2, -lo[1], center[1] - (lo[2] + hi[2]) / 2])
    n = vertex_normals(v, tris)
    base = os.path.splitext(obj_path)[0]
    mtl_name = os.path.basename(base) + ".mtl"
    with open(base + ".mtl", "w") as f:
        for name, kd in (("mesh", mesh_albedo), ("floor", floor_albedo)):
            # Ks 0: Blender's importer otherwise keeps Principled specular 0.5 (and --lambert
            # then leaves the material alone); ours reads Kd-only as Lambertian diffuse.
            f.write(f"newmtl {name}\nKa 0 0 0\nKd {kd[0]:g} {kd[1]:g} {kd[2]:g}\nKs 0 0 0\nNs 10\nillum 1\n\n")
    nv = len(v)
    h = floor_size / 2
    lines = [f"# generated by tools/bench/scene_gen.py from {os.path.basename(ply)}", f"mtllib {mtl_name}",
             "o mesh", "usemtl mesh", "s 1"]
    lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in v]
    lines += [f"vn {x:.6f} {y:.6f} {z:.6f}" for x, y, z in n]
    lines += [f"f {a}//{a} {b}//{b} {c}//{c}" for a, b, c in (tris + 1)]
    fn = nv + 1  # the floor's normal follows the mesh's normals; corners counter-clockwise seen from +Y
    lines += ["o floor", "usemtl floor", "s off",
              f"v {-h:g} 0 {-h:g}", f"v {-h:g} 0 {h:g}", f"v {h:g} 0 {h:g}", f"v {h:g} 0 {-h:g}", "vn 0 1 0",
              f"f {nv + 1}//{fn} {nv + 2}//{fn} {nv + 3}//{fn} {nv + 4}//{fn}"]
    with open(obj_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    lo, hi = v[used].min(0), v[used].max(0)
    return {"triangles": int(len(tris)) + 2, "bounds": [lo.tolist(), hi.tolist()]}


def sky_image(path, width=512, height=256, sun_direction=(0.5, 0.6, -0.6), sun_radius=1.5, sun_radiance=1500.0,
              zenith=(0.25, 0.45, 0.9), horizon=(0.9, 0.95, 1.0), ground=(0.12, 0.10, 0.08)):
    """Writes a lat-long EXR in our convention (u = atan2(d.x, -d.z) / 2pi, v = acos(d.y) / pi, top row
    up; Y-up): above the horizon a blend from `horizon` to `zenith` with elevation, below it
    `ground`, plus a sun disc of angular radius `sun_radius` degrees and radiance `sun_radiance`
    around `sun_direction` (towards the sun), texels whose centre lies in the disc. Returns the
    sun's solid angle as drawn (texel solid angles summed) and its irradiance on a surface facing it."""
    import OpenImageIO as oiio
    u = (np.arange(width) + 0.5) / width
    v = (np.arange(height) + 0.5) / height
    phi, theta = np.meshgrid(2 * np.pi * u, np.pi * v)
    d = np.stack([np.sin(theta) * np.sin(phi), np.cos(theta), -np.sin(theta) * np.cos(phi)], axis=-1)
    up = np.clip(d[..., 1], 0.0, 1.0)
    t = (1.0 - up) ** 3  # 1 at the horizon, 0 at the zenith
    sky = (1 - t)[..., None] * np.array(zenith) + t[..., None] * np.array(horizon)
    img = np.where((d[..., 1] >= 0)[..., None], sky, np.array(ground))
    s = np.array(sun_direction, dtype=np.float64)
    s /= np.linalg.norm(s)
    in_sun = d @ s >= math.cos(math.radians(sun_radius))
    img[in_sun] = sun_radiance
    texel_sr = (2 * np.pi / width) * (np.pi / height) * np.sin(theta)
    sun_sr = float(texel_sr[in_sun].sum())
    spec = oiio.ImageSpec(width, height, 3, oiio.FLOAT)
    spec.attribute("compression", "zip")
    out = oiio.ImageOutput.create(path)
    if not out or not out.open(path, spec):
        raise RuntimeError(f"cannot write {path}: {oiio.geterror()}")
    out.write_image(img.astype(np.float32))
    out.close()
    return {"sun_solid_angle": sun_sr, "sun_irradiance": sun_sr * sun_radiance, "sun_texels": int(in_sun.sum()),
            "sky_irradiance_on_floor": float((img * (d[..., 1:2].clip(0)) * texel_sr[..., None] * (~in_sun)[..., None])
                                             .sum(axis=(0, 1)) @ np.array([0.2126, 0.7152, 0.0722]))}

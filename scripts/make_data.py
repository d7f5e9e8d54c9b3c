#!/usr/bin/python3
"""make_data.py - procedural inputs for scripts/demo.sh (no third-party images).

  make_data.py image  PATH.png     512x512 8-bit grey PNG (data/synthetic512.png)
  make_data.py volume PATH.npy [N] N^3 float32 volume (default 128)
  make_data.py conv   DIR          x.npy 1x64x56x56, w.npy 64x64x3x3, b.npy 64

Everything is deterministic (fixed seeds), so the committed image can be
regenerated bit for bit. Needs numpy; the PNG writer uses only zlib.
"""
import struct
import sys
import zlib

import numpy as np


def synthetic_image(n=512):
    """Rings, a gradient, a checkerboard, discs and bars, plus mild noise:
    smooth areas, sharp edges of every orientation and fine texture, so that
    blurs and edge filters have something to show."""
    y, x = np.mgrid[0:n, 0:n].astype(np.float64) / n
    img = 0.35 + 0.3 * x                                   # horizontal ramp
    r = np.hypot(x - 0.3, y - 0.35)
    img += 0.25 * np.cos(2 * np.pi * 18 * r) * (r < 0.25)  # zone-plate rings
    check = ((np.floor(x * 32) + np.floor(y * 32)) % 2) * 2 - 1
    img += 0.2 * check * ((x > 0.6) & (y < 0.35))          # checkerboard
    for cx, cy, rad, v in [(0.75, 0.6, 0.12, 0.35), (0.55, 0.8, 0.08, -0.3),
                           (0.2, 0.78, 0.1, 0.25)]:
        img += v * (np.hypot(x - cx, y - cy) < rad)        # discs
    t = (x - 0.1) * np.cos(0.5) + (y - 0.55) * np.sin(0.5)
    img += 0.2 * ((np.floor(t * 40) % 2) * 2 - 1) * (y > 0.9)  # slanted bars
    img += 0.15 * np.sin(2 * np.pi * (3 * x + 5 * y * y))  # slow waves
    rng = np.random.default_rng(20240601)
    img += rng.normal(0.0, 0.01, img.shape)                # sensor noise
    return np.clip(np.rint(img * 255), 0, 255).astype(np.uint8)


def write_png_gray8(path, a):
    """Minimal PNG writer: 8-bit greyscale, filter "Up" on every row."""
    h, w = a.shape
    up = np.empty((h, w + 1), np.uint8)
    up[:, 0] = 2
    up[0, 1:] = a[0]
    up[1:, 1:] = a[1:] - a[:-1]  # wraps modulo 256 as PNG wants

    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(up.tobytes(), 9)))
        f.write(chunk(b"IEND", b""))


def synthetic_volume(n):
    """A smooth 3D field with a few blobs and planes, float32."""
    rng = np.random.default_rng(7)
    z, y, x = np.mgrid[0:n, 0:n, 0:n].astype(np.float32) / n
    v = np.sin(6.0 * x) * np.cos(4.0 * y) + 0.5 * z
    for c in rng.random((6, 3)):
        v += np.exp(-((x - c[0]) ** 2 + (y - c[1]) ** 2 + (z - c[2]) ** 2) / 0.01)
    v += (np.abs(x + y - z - 0.3) < 0.02)
    v += rng.normal(0.0, 0.05, v.shape).astype(np.float32)
    return v.astype(np.float32)


def main(argv):
    if len(argv) < 3 or argv[1] not in ("image", "volume", "conv"):
        sys.stderr.write(__doc__)
        return 2
    what, path = argv[1], argv[2]
    if what == "image":
        write_png_gray8(path, synthetic_image())
    elif what == "volume":
        n = int(argv[3]) if len(argv) > 3 else 128
        np.save(path, synthetic_volume(n))
    else:
        rng = np.random.default_rng(11)
        np.save(f"{path}/x.npy", rng.standard_normal((1, 64, 56, 56), np.float32))
        # Kaiming-uniform-like weights, as torch initialises Conv2d
        bound = 1.0 / np.sqrt(64 * 3 * 3)
        np.save(f"{path}/w.npy", rng.uniform(-bound, bound, (64, 64, 3, 3)).astype(np.float32))
        np.save(f"{path}/b.npy", rng.uniform(-bound, bound, 64).astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

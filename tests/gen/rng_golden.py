#!/usr/bin/python3
"""Independent Python implementation of dpcorr's counter layout, stream derivation and the
ziggurat sampler, used to produce the known-answer values in tests/test_rng.c.
Reads the ziggurat tables from src/rng/ziggurat_tables.c (hex floats) so only the algorithm,
not the table, is re-implemented here."""
import math, re, sys

M = 0xFFFFFFFF
def philox(ctr, key):
    c = list(ctr); k0, k1 = key
    for r in range(10):
        if r:
            k0 = (k0 + 0x9E3779B9) & M; k1 = (k1 + 0xBB67AE85) & M
        p0 = 0xD2511F53 * c[0]; p1 = 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & M, p1 & M, ((p0 >> 32) ^ c[3] ^ k1) & M, p0 & M]
    return c

def splitmix64(x):
    U = (1 << 64) - 1
    x = (x + 0x9E3779B97F4A7C15) & U
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & U
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & U
    return x ^ (x >> 31)

def root_key(seed):
    k = splitmix64(seed); return (k & M, k >> 32)

def stream_key(root, sid):
    c = philox([sid & M, sid >> 32, 0, 0x5354524D], root); return (c[0], c[1])

def word(key, row, index, attempt):
    c = philox([(index >> 1) & M, row & M, row >> 32, (((index >> 33) & 0xFFFF) << 16) | attempt], key)
    return (c[3] << 32 | c[2]) if index & 1 else (c[1] << 32 | c[0])

src = open(sys.argv[1] if len(sys.argv) > 1 else "src/rng/ziggurat_tables.c").read()
def table(name):
    body = src.split(name)[1].split("};")[0]
    return [float.fromhex(h) for h in re.findall(r"-?0x[0-9a-fA-Fp.+-]+", body.split("{", 1)[1])]
X = table("dpc__zig_x[257]"); R = table("dpc__zig_ratio[256]")
r = float.fromhex(re.search(r"dpc__zig_r = (\S+);", src).group(1))

def gauss(key, row, index):
    a = 0; w = word(key, row, index, 0)
    while True:
        i = w & 255; u = ((w >> 11) + 0.5) * 2.0**-52 - 1.0
        if abs(u) < R[i]: return u * X[i]
        if i == 0:
            while True:
                a += 1; x = -math.log(((word(key, row, index, a) >> 11) + 1) * 2.0**-53) / r
                a += 1; y = -math.log(((word(key, row, index, a) >> 11) + 1) * 2.0**-53)
                if y + y > x * x: return -(r + x) if u < 0 else r + x
        x = u * X[i]
        f0 = math.exp(-0.5 * (X[i] * X[i] - x * x)); f1 = math.exp(-0.5 * (X[i+1] * X[i+1] - x * x))
        a += 1; v = (word(key, row, index, a) >> 11) * 2.0**-53
        if f1 + v * (f0 - f1) < 1.0: return x
        a += 1; w = word(key, row, index, a)

root = root_key(42)
print("root key seed 42: 0x%08x 0x%08x" % root)
sk = stream_key(root, (1 << 32) | 0)
print("noise stream key: 0x%08x 0x%08x" % sk)
for (row, idx) in [(0, 0), (0, 1), (0, 2), (7, 5), (123456789012, 3), (5, (1 << 40) + 17)]:
    print("gauss(row=%d, index=%d) = %s" % (row, idx, float(gauss(sk, row, idx)).hex()))
# find first slow-path indices (wedge and tail) in row 0 to pin those branches too
found = {}
for idx in range(200000):
    w = word(sk, 0, idx, 0); i = w & 255; u = ((w >> 11) + 0.5) * 2.0**-52 - 1.0
    if abs(u) >= R[i]:
        kind = "tail" if i == 0 else "wedge"
        if kind not in found:
            found[kind] = idx
            print("first %s index %d: %s" % (kind, idx, float(gauss(sk, 0, idx)).hex()))
    if len(found) == 2: break
print("uniform word(row=3,index=4,attempt=0) = 0x%016x" % word(sk, 3, 4, 0))

#!/usr/bin/env python3
"""Monte Carlo truth of the Poisson-sampled banded matrix mechanism's dominating pair, the
reference column of doc/accounting.md section 7.1.2's table (not a test oracle header: the
numbers are quoted in the doc; tests/test_account_mmcc_band.c asserts the exact-loss oracle of
tests/gen/mmcc_exact_oracle.py instead).

P = E_theta N(C theta, s^2 I), Q = N(0, s^2 I), C the BSR-b Toeplitz strategy, s = z * column
norm, theta_t i.i.d. Bernoulli(q). The privacy loss of each sampled output is exact (the forward
recursion over the last b - 1 participations, as in mmcc_exact_oracle.py); epsilon at delta is
read off the sample means of both directions' hockey-stick payoffs (the larger direction).
Usage (Debian's python3 with numpy; minutes for n = 1000):
  B=2 /usr/bin/python3 tests/gen/mmcc_band_truth.py 64 1 2 5
"""
import math
import os
import sys
import numpy as np


def sqrt_coeffs(n):
    c = np.zeros(n)
    c[0] = 1.0
    for j in range(1, n):
        c[j] = c[j - 1] * (2 * j - 1) / (2 * j)
    return c


def banded_losses(c, n, p, s, y):
    b = len(c)
    S = 1 << (b - 1)
    la = np.full((y.shape[0], S), -np.inf)
    la[:, 0] = 0.0
    lp, lq = np.log(p), np.log1p(-p)
    for i in range(n):
        new = np.full((y.shape[0], S), -np.inf)
        for st in range(S):
            for bit in (0, 1):
                w = (st << 1) | bit
                m = sum(c[k] for k in range(b) if (w >> k) & 1)
                term = la[:, st] + (lp if bit else lq) + (y[:, i] * m - 0.5 * m * m) / s**2
                new[:, w & (S - 1)] = np.logaddexp(new[:, w & (S - 1)], term)
        la = new
    mx = la.max(1)
    return mx + np.log(np.exp(la - mx[:, None]).sum(1))


def truth(c, n, q, s, delta, N, rng):
    C = np.zeros((n, n))
    for i in range(n):
        for t in range(max(0, i - len(c) + 1), i + 1):
            C[i, t] = c[i - t]
    th = (rng.random((N, n)) < q).astype(float)
    Lp = banded_losses(c, n, q, s, th @ C.T + s * rng.standard_normal((N, n)))
    Lq = banded_losses(c, n, q, s, s * rng.standard_normal((N, n)))
    out = []
    for f in (lambda e: np.clip(1 - np.exp(e - Lp), 0, None).mean(),
              lambda e: np.clip(1 - np.exp(e + Lq), 0, None).mean()):
        lo, hi = 0.0, 50.0
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            if f(mid) <= delta:
                hi = mid
            else:
                lo = mid
        out.append(hi)
    return max(out), out[0], out[1]


if __name__ == "__main__":
    n = int(sys.argv[1])
    c = sqrt_coeffs(int(os.environ.get("B", "2")))
    cn = math.sqrt((c * c).sum())
    rng = np.random.default_rng(int(os.environ.get("SEED", "5")))
    N = 200000 if n <= 64 else 100000
    for z in map(float, sys.argv[2:]):
        e, er, ea = truth(c, n, 0.01, z * cn, 1e-3, N, rng)
        print("bsr-%d n %d q 0.01 sigma %g delta 1e-3: eps %.4f (remove %.4f, add %.4f), %d samples"
              % (len(c), n, z, e, er, ea, N), flush=True)

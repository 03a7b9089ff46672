#!/usr/bin/env python3
"""Exact privacy loss of small Poisson-sampled matrix mechanisms, the independent reference
that bounds dpcorr's MMCC route from below (tests/test_account_mmcc.c, doc/accounting.md
section 7, "MMCC against the exact loss").

For a nonnegative strategy C (rows released in order, n steps, Poisson rate p at every step) the
run is dominated by the pair (Choquette-Choo et al.: C >= 0)

    P = sum_theta pi(theta) N(C theta, s^2 I),  Q = N(0, s^2 I),  theta in {0,1}^n, pi = p^|theta| (1-p)^(n-|theta|)

whose privacy loss L(y) = log sum_theta pi(theta) exp((<y, C theta> - |C theta|^2 / 2) / s^2) is
computed EXACTLY by enumerating all 2^n participation patterns (n <= 16), or for a banded
Toeplitz C (BSR) by the exact forward recursion over the last b - 1 participations (any n; the
generator first checks it against the enumeration at n = 10). delta(eps) = max of
E_P[(1 - e^(eps - L))_+] and E_Q[(1 - e^(eps + L))_+] is estimated by plain Monte Carlo over y
(seeded) with its standard error; eps(delta) is read off the estimate, and [eps_lo, eps_hi] from
the estimate -/+ 4 standard errors (the test asserts MMCC >= eps_lo).

Strategies are built here from their definitions (independent of dpcorr's mech module):
  bsr-b : Toeplitz, first b coefficients of (1 - x)^(-1/2) (banded square root)
  nu    : Toeplitz, coefficients of (1 - (1 - nu) x)^(-1/2) (nu-DP-FTRL's C)
  blt   : Toeplitz, c_0 = 1, c_j = sum_i omega_i theta_i^(j-1)
  tree  : binary tree: one row per dyadic interval (node) of [0, n), released at its last step
Run with Debian's python3 (numpy):
  /usr/bin/python3 tests/gen/mmcc_exact_oracle.py > tests/account_mmcc_exact_oracle.h
"""
import itertools
import sys
import numpy as np


def sqrt_coeffs(n, r=1.0):
    c = np.zeros(n)
    c[0] = 1.0
    for j in range(1, n):
        c[j] = c[j - 1] * (2 * j - 1) / (2 * j) * r
    return c


def toeplitz(c, n):
    C = np.zeros((n, n))
    for i in range(n):
        for t in range(i + 1):
            C[i, t] = c[i - t]
    return C


def bsr(n, b):
    c = sqrt_coeffs(n)
    c[b:] = 0.0
    return toeplitz(c, n)


def nu(n, v):
    return toeplitz(sqrt_coeffs(n, 1.0 - v), n)


def blt(n, theta, omega):
    c = np.zeros(n)
    c[0] = 1.0
    for j in range(1, n):
        c[j] = sum(w * th ** (j - 1) for th, w in zip(theta, omega))
    return toeplitz(c, n)


def tree(n):
    rows = []
    size = 1
    while size <= n:
        for a in range(0, n - size + 1, size):
            r = np.zeros(n)
            r[a:a + size] = 1.0
            rows.append((a + size - 1, size, r))
        size *= 2
    rows.sort(key=lambda x: (x[0], x[1]))
    return np.array([r for _, _, r in rows])


def losses(C, p, s, y):
    n = C.shape[1]
    th = np.array(list(itertools.product([0, 1], repeat=n)), dtype=float)  # (2^n, n)
    M = th @ C.T                                                          # (2^n, rows)
    k = th.sum(1)
    logpi = k * np.log(p) + (n - k) * np.log1p(-p) - 0.5 * (M * M).sum(1) / s**2
    A = y @ M.T / s**2 + logpi                                            # (N, 2^n)
    mx = A.max(1)
    return mx + np.log(np.exp(A - mx[:, None]).sum(1)), th, M


def banded_losses(c, n, p, s, y):
    """The same loss for a banded Toeplitz C (first column c, b = len(c) bands) by an exact
    forward recursion over the last b - 1 participations (2^(b-1) states; row i's mean depends
    on theta_{i-b+1..i} only), so n = 64 costs n 2^b terms per output instead of 2^n."""
    b = len(c)
    S = 1 << (b - 1)
    N = y.shape[0]
    la = np.full((N, S), -np.inf)
    la[:, 0] = 0.0  # no participation before step 0
    lp, lq = np.log(p), np.log1p(-p)
    for i in range(n):
        new = np.full((N, S), -np.inf)
        for st in range(S):
            for bit in (0, 1):
                w = (st << 1) | bit  # bit k = theta_{i-k}
                m = sum(c[k] for k in range(b) if (w >> k) & 1)
                term = la[:, st] + (lp if bit else lq) + (y[:, i] * m - 0.5 * m * m) / s**2
                ns = w & (S - 1)
                new[:, ns] = np.logaddexp(new[:, ns], term)
        la = new
    mx = la.max(1)
    return mx + np.log(np.exp(la - mx[:, None]).sum(1))


def sample_losses(C, p, s, N, rng, band=None):
    rows, n = C.shape
    out_p, out_q = [], []
    step = 20000 if band is not None or n <= 12 else max(200, (1 << 24) >> n)
    for chunk in range(0, N, step):
        m = min(step, N - chunk)
        th = (rng.random((m, n)) < p).astype(float)
        yp = th @ C.T + s * rng.standard_normal((m, rows))
        yq = s * rng.standard_normal((m, rows))
        if band is not None:
            out_p.append(banded_losses(band, n, p, s, yp))
            out_q.append(banded_losses(band, n, p, s, yq))
        else:
            out_p.append(losses(C, p, s, yp)[0])
            out_q.append(losses(C, p, s, yq)[0])
    return np.concatenate(out_p), np.concatenate(out_q)


def bsr_band(b):
    return sqrt_coeffs(b)


def check_recursion(rng):
    """The recursion equals the enumeration (n = 10, BSR-2 and BSR-4, random outputs)."""
    for b in (2, 4):
        C = bsr(10, b)
        y = rng.standard_normal((50, 10)) * 2 + 0.3
        e = losses(C, 0.1, 1.7, y)[0]
        r = banded_losses(bsr_band(b), 10, 0.1, 1.7, y)
        assert np.max(np.abs(e - r)) < 1e-9 * max(1.0, np.max(np.abs(e))), (b, e - r)


def delta_of(Lp, Lq, eps):
    fp = np.clip(1.0 - np.exp(eps - Lp), 0.0, None)
    fq = np.clip(1.0 - np.exp(eps + Lq), 0.0, None)
    dp, dq = fp.mean(), fq.mean()
    if dp >= dq:
        return dp, fp.std() / np.sqrt(len(fp))
    return dq, fq.std() / np.sqrt(len(fq))


def eps_at(Lp, Lq, delta, z):
    """smallest eps with delta_hat(eps) + z se <= delta (bisection; delta_hat is decreasing)."""
    lo, hi = 0.0, 60.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        d, se = delta_of(Lp, Lq, mid)
        if d + z * se <= delta:
            hi = mid
        else:
            lo = mid
    return hi


CASES = [  # name, C, p, s
    ("nu(0.1) n=8", nu(8, 0.1), 0.1, 2.0),
    ("nu(0.01) n=12", nu(12, 0.01), 0.05, 3.0),
    ("bsr-2 n=12", bsr(12, 2), 0.1, 1.5),
    ("bsr-4 n=12", bsr(12, 4), 0.05, 2.0),
    ("blt(0.9,0.99;0.3,0.2) n=10", blt(10, [0.9, 0.99], [0.3, 0.2]), 0.05, 3.0),
    ("tree n=8", tree(8), 0.1, 2.0),
    ("nu(0.01) n=16", nu(16, 0.01), 0.05, 3.0),
    ("bsr-2 n=16", bsr(16, 2), 0.01, 3.0),
    ("bsr-2 n=64", bsr(64, 2), 0.01, 3.0),
    ("bsr-4 n=64", bsr(64, 4), 0.01, 1.0),
    ("bsr-4 n=64 (q 0.05)", bsr(64, 4), 0.05, 2.0),
]
BANDED = {"bsr-2": bsr_band(2), "bsr-4": bsr_band(4)}  # cases with n > 12 use the recursion
DELTA = 1e-4
SAMPLES = 400000

rng = np.random.default_rng(20260127)
check_recursion(np.random.default_rng(7))
print("/* generated by tests/gen/mmcc_exact_oracle.py: exact privacy loss (2^n participation")
print(" * patterns, or the exact forward recursion for banded C) of the Poisson-sampled matrix")
print(" * mechanism's dominating pair; epsilon at delta by Monte Carlo over y (%d samples per" % SAMPLES)
print(" * direction, a quarter for n > 12): estimate and [lo, hi] = estimate -/+ 4")
print(" * standard errors of delta. Do not edit. */")
print("#ifndef ACCOUNT_MMCC_EXACT_ORACLE_H\n#define ACCOUNT_MMCC_EXACT_ORACLE_H\n#include <stddef.h>")
print("#define MMCC_EXACT_DELTA %.17g" % DELTA)
for ci, (name, C, p, s) in enumerate(CASES):
    print("static const double mmcc_exact_C%d[] = {%s};" % (ci, ", ".join("%.17g" % v for v in C.ravel())))
print("static const struct {\n    const char *name;\n    const double *C;\n    size_t rows, n;\n"
      "    double p, s, eps, eps_lo, eps_hi;\n} mmcc_exact[] = {")
for ci, (name, C, p, s) in enumerate(CASES):
    Lp, Lq = sample_losses(C, p, s, SAMPLES if C.shape[1] <= 12 else SAMPLES // 4, rng,
                           BANDED.get(name.split()[0]) if C.shape[1] > 12 else None)
    e = eps_at(Lp, Lq, DELTA, 0.0)
    lo = eps_at(Lp, Lq, DELTA, -4.0)
    hi = eps_at(Lp, Lq, DELTA, 4.0)
    print('    {"%s", mmcc_exact_C%d, %d, %d, %.17g, %.17g, %.17g, %.17g, %.17g},'
          % (name, ci, C.shape[0], C.shape[1], p, s, e, lo, hi))
    print(name, p, s, e, lo, hi, file=sys.stderr)
print("};\n#endif")

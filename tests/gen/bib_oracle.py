#!/usr/bin/env python3
"""Independent references for balls-in-bins accounting (tests/test_account_bib.c).

The dominating pair of a run whose example takes part in one uniformly random step of each
period b (the same position every period) with a nonnegative strategy C is, after reduction to
the b statistics t_j = <y, m_j> / s^2 (m_j = C x_j, x_j the indicator of the steps = j mod b),

    Q = N(0, A),  P = (1/b) sum_j N(A e_j, A),  A = G / s^2,  G_ij = <m_i, m_j>,
    Lambda = dP/dQ = (1/b) sum_j exp(t_j - A_jj / 2),
    remove: delta_R(eps) = E_Q[(Lambda - e^eps)+],  add: delta_A(eps) = E_Q[(1 - e^eps Lambda)+].

Methods (none shares code or discretization with the C library):
  * b = 2, 3, any A: condition on t_1..t_{b-1}; t_b is then Gaussian, so the conditional
    expectation is a Black-Scholes call (remove) or put (add) on a lognormal, in closed form; the
    remaining (b-1)-dimensional Gaussian expectation of that smooth function is a tensor
    Gauss-Hermite quadrature (120 nodes per axis).
  * b = 10, 60 with A = mu^2 I (DP-SGD, random allocation): Rao-Blackwellized Monte Carlo: the
    same closed form given the other b - 1 coordinates, averaged over 2^22 draws of them
    (importance-sampled towards the region that matters for the add direction), with the
    standard error reported; fixed seeds.
Run with Debian's python3 (numpy, scipy):
    /usr/bin/python3 tests/gen/bib_oracle.py > tests/account_bib_oracle.h
"""
import numpy as np
from scipy import integrate
from scipy.special import log_ndtr



def bs_call(logk_minus_m, s, m):
    """E[(e^(m + s Z) - K)+] with log K - m given (K > 0)."""
    d2 = -logk_minus_m / s
    # e^m (e^(s^2/2) Phi(d2 + s) - e^(log K - m) Phi(d2)), in logs for accuracy
    a = m + 0.5 * s * s + log_ndtr(d2 + s)
    b = m + logk_minus_m + log_ndtr(d2)
    return np.where(b < a, np.exp(a) * -np.expm1(b - a), 0.0)


def bs_put(logk_minus_m, s, m):
    """E[(K - e^(m + s Z))+] (K > 0)."""
    d2 = -logk_minus_m / s
    a = m + logk_minus_m + log_ndtr(-d2)
    b = m + 0.5 * s * s + log_ndtr(-d2 - s)
    return np.where(b < a, np.exp(a) * -np.expm1(b - a), 0.0)


def cond_expect(A, eps, rest):
    """E_Q[(Lambda - c)+ | t_r] and E_Q[(1 - c Lambda)+ | t_r] for rows of t_r (rest)."""
    b = A.shape[0]
    c = np.exp(eps)
    Arr, Abr = A[: b - 1, : b - 1], A[b - 1, : b - 1]
    coef = np.linalg.solve(Arr, Abr)
    v = A[b - 1, b - 1] - Abr @ coef
    s = np.sqrt(max(v, 0.0))
    m = rest @ coef - 0.5 * A[b - 1, b - 1]  # log-mean of W = exp(t_b - A_bb/2)
    a = np.exp(rest - 0.5 * np.diag(A)[: b - 1]).sum(axis=1)  # sum of the other terms
    # remove: (1/b) E[(a + W - b c)+]; strike K = b c - a
    K = b * c - a
    rem = np.where(K > 0, bs_call(np.log(np.maximum(K, 1e-300)) - m, s, m),
                   np.exp(m + 0.5 * s * s) - K) / b
    # add: E[(1 - c (a + W)/b)+] = (c/b) E[(b/c - a - W)+]
    Kp = b / c - a
    add = np.where(Kp > 0, bs_put(np.log(np.maximum(Kp, 1e-300)) - m, s, m), 0.0) * c / b
    return rem, add


def exact_small(A, eps):
    """Adaptive quadrature over z ~ N(0, I_{b-1}), t_r = L z (b = 2 or 3), with the kinks of the
    conditional payoffs (where the strike crosses 0) given to the integrator as breakpoints."""
    b = A.shape[0]
    d = b - 1
    c = np.exp(eps)
    L = np.linalg.cholesky(A[:d, :d])
    half = 0.5 * np.diag(A)[:d]
    phi = lambda z: np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
    opts = dict(epsabs=1e-17, epsrel=1e-12, limit=400)

    def f(z, which):
        rem, add = cond_expect(A, eps, (L @ np.atleast_1d(z))[None, :])
        return (rem if which == 0 else add)[0]

    def kinks_last(zhead, which):
        """Breakpoints in the last z coordinate where sum_j exp(t_j - A_jj/2) = strike."""
        strike = b * c if which == 0 else b / c
        t_head = L[: len(zhead), : len(zhead)] @ zhead if len(zhead) else np.zeros(0)
        used = np.exp(t_head - half[: len(zhead)]).sum() if len(zhead) else 0.0
        room = strike - used
        if room <= 0:
            return []
        i = len(zhead)
        t_star = np.log(room) + half[i]
        z_star = (t_star - L[i, :i] @ zhead) / L[i, i]
        return [z_star] if -14 < z_star < 14 else []

    out = []
    for which in (0, 1):
        if d == 1:
            val, _ = integrate.quad(lambda z: phi(z) * f(np.array([z]), which), -14, 14,
                                    points=kinks_last(np.zeros(0), which) or None, **opts)
        else:
            def inner(z1):
                g = lambda z2: phi(z2) * f(np.array([z1, z2]), which)
                v, _ = integrate.quad(g, -14, 14, points=kinks_last(np.array([z1]), which) or None,
                                      **opts)
                return phi(z1) * v
            val, _ = integrate.quad(inner, -14, 14, epsabs=1e-16, epsrel=1e-10, limit=400)
        out.append(float(val))
    return out[0], out[1]


def rb_mc(b, mu, eps, n, seed, shift):
    """Rao-Blackwellized MC for A = mu^2 I; the other coordinates drawn from N(-shift, 1) in z
    units (importance weights exp(shift z + shift^2/2) per coordinate)."""
    rng = np.random.default_rng(seed)
    A = mu * mu * np.eye(b)
    rems, adds = [], []
    chunk = 1 << 18
    for _ in range(n // chunk):
        z = rng.standard_normal((chunk, b - 1)) - shift
        lw = (shift * z + 0.5 * shift * shift).sum(axis=1)
        rem, add = cond_expect(A, eps, mu * z)
        wt = np.exp(lw)
        rems.append(rem * wt)
        adds.append(add * wt)
    rems, adds = np.concatenate(rems), np.concatenate(adds)
    return (rems.mean(), rems.std() / np.sqrt(rems.size), adds.mean(),
            adds.std() / np.sqrt(adds.size))


def main():
    print("/* generated by tests/gen/bib_oracle.py (numpy, scipy): references for balls-in-bins")
    print(" * accounting. ra[]: random allocation (A = mu^2 I) delta_R, delta_A at eps; b = 2, 3")
    print(" * by closed form + adaptive quadrature (se = 0), b = 10, 60 by Rao-Blackwellized")
    print(" * Monte Carlo (2^22 draws per direction) with standard errors. gen[]: a 3-bin pair with a general Gram matrix. */")
    print("static const struct { unsigned b; double mu, eps, remove, se_r, add, se_a; } "
          "bib_oracle_ra[] = {")
    for b, mu, eps in [(2, 1.0, 0.405465108108164), (2, 1.0, 3.0), (3, 0.7, 1.0),
                       (3, 2.0, 4.0)]:
        A = mu * mu * np.eye(b)
        r, a = exact_small(A, eps)
        print("    {%d, %.17g, %.17g, %.17g, 0, %.17g, 0}," % (b, mu, eps, r, a))
    # shifts of the proposal in z units: negative = towards large V (the remove direction's
    # region), positive = towards small V (the add direction's), about the Chernoff tilt
    for b, mu, eps, seed, sh_r, sh_a in [(10, 1.0, 1.5, 1, -0.25, 1.0), (10, 1.0, 0.6, 2, -0.25, 0.5),
                                         (60, 1.0, 0.7, 3, -0.25, 0.3),
                                         (60, 1.0, 0.25, 4, -0.1, 0.12)]:
        r, sr, _, _ = rb_mc(b, mu, eps, 1 << 22, seed, sh_r)
        _, _, a, sa = rb_mc(b, mu, eps, 1 << 22, seed + 100, sh_a)
        print("    {%d, %.17g, %.17g, %.17g, %.6g, %.17g, %.6g}," % (b, mu, eps, r, sr, a, sa))
    print("};")
    # a 3-bin pair with overlapping columns: C (6 x 6) nonnegative, x_j = steps j, j + 3
    C = np.tril(np.fromfunction(lambda i, t: 0.6 ** (i - t), (6, 6)))
    X = np.array([[1.0 if t % 3 == j else 0.0 for t in range(6)] for j in range(3)]).T
    M = C @ X
    G = M.T @ M
    s = 2.0
    A = G / s**2
    print("/* gen: C_it = 0.6^(i-t) (i >= t), n = 6, b = 3 bins (k = 2), noise std s = %g. */" % s)
    print("static const double bib_oracle_gen_C[36] = {")
    print("    " + ", ".join("%.17g" % v for v in C.reshape(-1)) + "};")
    print("static const double bib_oracle_gen_s = %.17g;" % s)
    print("static const struct { double eps, remove, add; } bib_oracle_gen[] = {")
    for eps in [0.5, 1.0, 1.5]:
        r, a = exact_small(A, eps)
        print("    {%.17g, %.17g, %.17g}," % (eps, r, a))
    print("};")


if __name__ == "__main__":
    main()

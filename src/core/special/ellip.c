/* ellip.c — complete elliptic integrals K, E, Pi (modulus convention, the nu-DP-FTRL
 * paper's eq. 94) by the AGM and Carlson's symmetric integrals.
 *
 * Carlson's duplication algorithms (B. C. Carlson, "Numerical computation of real or complex
 * elliptic integrals", Numer. Algorithms 10 (1995); DLMF 19.36): each step quarters the spread
 * of the arguments; stopping when it is below 0.0015-0.0025 and applying the 5th/6th-order
 * Taylor correction leaves a relative error of order tol^6 < 1e-16. */
#include "dpcorr/special.h"

#include <math.h>

double dpc_special_ellip_k(double k)
{
    if (!(k >= 0.0) || k > 1.0) return NAN;
    if (k == 1.0) return INFINITY;
    double a = 1.0, b = sqrt((1.0 - k) * (1.0 + k));
    for (int i = 0; i < 64 && fabs(a - b) > 1e-17 * a; i++) {
        double an = 0.5 * (a + b);
        b = sqrt(a * b);
        a = an;
    }
    return M_PI / (a + b);
}

static double max3(double a, double b, double c)
{
    double m = a > b ? a : b;
    return m > c ? m : c;
}

double dpc_special_carlson_rf(double x, double y, double z)
{
    if (!(x >= 0 && y >= 0 && z >= 0) || (x == 0) + (y == 0) + (z == 0) > 1) return NAN;
    double xt = x, yt = y, zt = z, ave, dx, dy, dz;
    for (int it = 0;; it++) {
        double sx = sqrt(xt), sy = sqrt(yt), sz = sqrt(zt);
        double lam = sx * (sy + sz) + sy * sz;
        xt = 0.25 * (xt + lam);
        yt = 0.25 * (yt + lam);
        zt = 0.25 * (zt + lam);
        ave = (xt + yt + zt) / 3.0;
        dx = (ave - xt) / ave;
        dy = (ave - yt) / ave;
        dz = (ave - zt) / ave;
        if (max3(fabs(dx), fabs(dy), fabs(dz)) <= 0.0025 || it > 200) break;
    }
    double e2 = dx * dy - dz * dz, e3 = dx * dy * dz;
    return (1.0 + (e2 / 24.0 - 0.1 - 3.0 / 44.0 * e3) * e2 + e3 / 14.0) / sqrt(ave);
}

double dpc_special_carlson_rd(double x, double y, double z)
{
    if (!(x >= 0 && y >= 0 && z > 0) || (x == 0 && y == 0)) return NAN;
    const double C1 = 3.0 / 14.0, C2 = 1.0 / 6.0, C3 = 9.0 / 22.0, C4 = 3.0 / 26.0;
    const double C5 = 0.25 * C3, C6 = 1.5 * C4;
    double xt = x, yt = y, zt = z, sum = 0.0, fac = 1.0, ave, dx, dy, dz;
    for (int it = 0;; it++) {
        double sx = sqrt(xt), sy = sqrt(yt), sz = sqrt(zt);
        double lam = sx * (sy + sz) + sy * sz;
        sum += fac / (sz * (zt + lam));
        fac *= 0.25;
        xt = 0.25 * (xt + lam);
        yt = 0.25 * (yt + lam);
        zt = 0.25 * (zt + lam);
        ave = 0.2 * (xt + yt + 3.0 * zt);
        dx = (ave - xt) / ave;
        dy = (ave - yt) / ave;
        dz = (ave - zt) / ave;
        if (max3(fabs(dx), fabs(dy), fabs(dz)) <= 0.0015 || it > 200) break;
    }
    double ea = dx * dy, eb = dz * dz, ec = ea - eb, ed = ea - 6.0 * eb, ee = ed + ec + ec;
    return 3.0 * sum +
           fac * (1.0 + ed * (-C1 + C5 * ed - C6 * dz * ee) +
                  dz * (C2 * ee + dz * (-C3 * ec + dz * C4 * ea))) /
               (ave * sqrt(ave));
}

/* R_C(x, y) = R_F(x, y, y), y > 0. */
static double carlson_rc(double x, double y)
{
    double xt = x, yt = y, ave, s;
    for (int it = 0;; it++) {
        double lam = 2.0 * sqrt(xt) * sqrt(yt) + yt;
        xt = 0.25 * (xt + lam);
        yt = 0.25 * (yt + lam);
        ave = (xt + yt + yt) / 3.0;
        s = (yt - ave) / ave;
        if (fabs(s) <= 0.0012 || it > 200) break;
    }
    return (1.0 + s * s * (0.3 + s * (1.0 / 7.0 + s * (0.375 + s * 9.0 / 22.0)))) / sqrt(ave);
}

double dpc_special_carlson_rj(double x, double y, double z, double p)
{
    if (!(x >= 0 && y >= 0 && z >= 0 && p > 0) || (x == 0) + (y == 0) + (z == 0) > 1)
        return NAN;
    const double C1 = 3.0 / 14.0, C2 = 1.0 / 3.0, C3 = 3.0 / 22.0, C4 = 3.0 / 26.0;
    const double C5 = 0.75 * C3, C6 = 1.5 * C4, C7 = 0.5 * C2, C8 = C3 + C3;
    double xt = x, yt = y, zt = z, pt = p, sum = 0.0, fac = 1.0, ave, dx, dy, dz, dp;
    for (int it = 0;; it++) {
        double sx = sqrt(xt), sy = sqrt(yt), sz = sqrt(zt);
        double lam = sx * (sy + sz) + sy * sz;
        double al = pt * (sx + sy + sz) + sx * sy * sz;
        al *= al;
        double be = pt * (pt + lam) * (pt + lam);
        sum += fac * carlson_rc(al, be);
        fac *= 0.25;
        xt = 0.25 * (xt + lam);
        yt = 0.25 * (yt + lam);
        zt = 0.25 * (zt + lam);
        pt = 0.25 * (pt + lam);
        ave = 0.2 * (xt + yt + zt + pt + pt);
        dx = (ave - xt) / ave;
        dy = (ave - yt) / ave;
        dz = (ave - zt) / ave;
        dp = (ave - pt) / ave;
        double m = max3(fabs(dx), fabs(dy), fabs(dz));
        if ((m > fabs(dp) ? m : fabs(dp)) <= 0.0015 || it > 200) break;
    }
    double ea = dx * (dy + dz) + dy * dz, eb = dx * dy * dz, ec = dp * dp;
    double ed = ea - 3.0 * ec, ee = eb + 2.0 * dp * (ea - ec);
    return 3.0 * sum + fac *
                           (1.0 + ed * (-C1 + C5 * ed - C6 * ee) + eb * (C7 + dp * (-C8 + dp * C4)) +
                            dp * ea * (C2 - dp * C3) - C2 * dp * ec) /
                           (ave * sqrt(ave));
}

double dpc_special_ellip_e(double k)
{
    if (!(k >= 0.0) || k > 1.0) return NAN;
    if (k == 1.0) return 1.0;
    double y = (1.0 - k) * (1.0 + k);
    return dpc_special_carlson_rf(0.0, y, 1.0) - k * k / 3.0 * dpc_special_carlson_rd(0.0, y, 1.0);
}

double dpc_special_ellip_pi(double n, double k)
{
    if (!(k >= 0.0) || k >= 1.0 || !(n < 1.0)) return NAN;
    double y = (1.0 - k) * (1.0 + k);
    return dpc_special_carlson_rf(0.0, y, 1.0) +
           n / 3.0 * dpc_special_carlson_rj(0.0, y, 1.0, 1.0 - n);
}


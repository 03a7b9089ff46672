/* theory_integral.c — the closed form of the integral I(a, b) of the nu-DP-FTRL paper's eq. (49)
 * through the complete elliptic integral of the third kind (dpcorr/special.h). */
#include "dpcorr/papers/theory.h"
#include "dpcorr/special.h"

#include <math.h>

double dpc_theory_integral_i(double a, double b)
{
    /* eq. (49) with Lemmas C.21, F.15, F.16 (note 5.3.5; verified there for a > b as well). */
    if (!(a > 0.0 && a < 1.0 && b > 0.0 && b < 1.0)) return NAN;
    /* 1 - alpha^2 = (a (1 - b/2) / (b (1 - a/2)))^2 exactly; passing it to R_J directly avoids
     * the cancellation in 1 - alpha^2 when alpha^2 -> 1 (a << b); likewise 1 - k^2 = (a/(2-a))^2. */
    double h = 1.0 - 0.5 * a;
    double pr = a * (1.0 - 0.5 * b) / (b * h), p = pr * pr, alpha2 = 1.0 - p;
    double ya = a / (2.0 * h), y = ya * ya; /* 1 - k^2, k = sqrt(1-a)/(1-a/2), exactly */
    double pi = dpc_special_carlson_rf(0.0, y, 1.0) +
                alpha2 / 3.0 * dpc_special_carlson_rj(0.0, y, 1.0, p);
    return 2.0 * a * a / (b * b * h) * pi;
}

/* harness.h — minimal test harness (each tests/test_<module>.c is a plain main).
 *
 *   CHECK(cond, fmt, ...)             fails with file:line and the message when cond is false
 *   CHECK_NEAR_REL(a, b, rtol, ...)   |a-b| <= rtol*max(|a|,|b|)   (NaN never passes)
 *   CHECK_NEAR_ABS(a, b, atol, ...)   |a-b| <= atol
 *   CHECK_OK(status_expr, err)        expects DPC_OK, prints err.msg otherwise
 *   SKIP(fmt, ...)                    records a skipped check (an absent data set, a CPU level this
 *                                     machine lacks): neither a pass nor a failure; prints
 *                                     "skip: file:line: why" (tests/run_all.sh lists these lines)
 *   TEST_SUMMARY()                    prints "N passed, N failed, N skipped" and returns the exit
 *                                     code (skips alone exit 0)
 *
 * DPC_TEST_SCALE=asan in the environment lets statistical tests shrink their sample sizes under
 * sanitizers (tests_scale() returns 0.1 then, 1.0 otherwise) — never below what keeps them meaningful.
 */
#ifndef DPCORR_TEST_HARNESS_H
#define DPCORR_TEST_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_passed, harness_failed, harness_skipped;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            harness_passed++;                                                                      \
        } else {                                                                                   \
            harness_failed++;                                                                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static inline int harness_near_rel(double a, double b, double rtol)
{
    if (isnan(a) || isnan(b)) return 0;
    if (a == b) return 1; /* covers equal infinities */
    if (isinf(a) || isinf(b)) return 0; /* else |inf - b| <= rtol * inf would hold */
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= rtol * m;
}

#define CHECK_NEAR_REL(a, b, rtol, ...)                                                            \
    do {                                                                                           \
        double ha_ = (a), hb_ = (b);                                                               \
        CHECK(harness_near_rel(ha_, hb_, (rtol)), "%.17g vs %.17g (rtol %g): %s", ha_, hb_,       \
              (double)(rtol), harness_fmt(__VA_ARGS__));                                           \
    } while (0)

#define CHECK_NEAR_ABS(a, b, atol, ...)                                                            \
    do {                                                                                           \
        double ha_ = (a), hb_ = (b);                                                               \
        CHECK(!isnan(ha_) && !isnan(hb_) && fabs(ha_ - hb_) <= (atol),                             \
              "%.17g vs %.17g (atol %g): %s", ha_, hb_, (double)(atol), harness_fmt(__VA_ARGS__)); \
    } while (0)

#define CHECK_OK(expr, errp)                                                                       \
    do {                                                                                           \
        int hs_ = (int)(expr);                                                                     \
        CHECK(hs_ == 0, "%s returned status %d: %s", #expr, hs_, (errp)->msg);                     \
    } while (0)

/* Formats into a rotating static buffer (tests only). */
static inline const char *harness_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static inline const char *harness_fmt(const char *fmt, ...)
{
    static char buf[4][512];
    static int i;
    i = (i + 1) & 3;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf[i], sizeof buf[i], fmt, ap);
    va_end(ap);
    return buf[i];
}

static inline double tests_scale(void)
{
    const char *s = getenv("DPC_TEST_SCALE");
    return (s && strcmp(s, "asan") == 0) ? 0.1 : 1.0;
}

/* A skip is printed, counted apart and never added to the passes, so a run whose data is absent
 * cannot look like a run that checked it. */
#define SKIP(...)                                                                                  \
    do {                                                                                           \
        harness_skipped++;                                                                         \
        printf("skip: %s:%d: %s\n", __FILE__, __LINE__, harness_fmt(__VA_ARGS__));                \
    } while (0)

#define TEST_SUMMARY()                                                                             \
    (printf("%d passed, %d failed, %d skipped\n", harness_passed, harness_failed,                 \
            harness_skipped),                                                                      \
     harness_failed ? 1 : 0)

#endif

/* noise_step_avx2.c — the noise engines' step at the avx2 level: noise_step.inc compiled with
 * this file's instruction-set flags (the Makefile sets them from the file name). */
#include "common/util.h"
#include "mech/noise_internal.h"

#include <string.h>

#define DPC__LEVEL avx2
#define DPC__VEC 4 /* doubles per vector register */
#include "mech/noise_step.inc"

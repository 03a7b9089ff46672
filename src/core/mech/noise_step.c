/* noise_step.c — the noise engines' step at the sse2 level: noise_step.inc compiled with
 * this file's instruction-set flags (the Makefile sets them from the file name). */
#include "common/util.h"
#include "mech/noise_internal.h"

#include <string.h>

#define DPC__LEVEL sse2
#define DPC__NOISE_BASELINE 1 /* this copy also serves the tree rebuild (seek) */
#define DPC__VEC 2 /* doubles per vector register */
#include "mech/noise_step.inc"

/* ziggurat.h — internal: the 256-layer normal ziggurat tables (generated; see tests/gen). */
#ifndef DPCORR_SRC_ZIGGURAT_H
#define DPCORR_SRC_ZIGGURAT_H

extern const double dpc__zig_r;          /* start of the tail, 3.6541528853610088 */
extern const double dpc__zig_v;          /* area of every layer */
extern const double dpc__zig_x[257];     /* layer right edges, X[0] = V/f(r), X[256] = 0 */
extern const double dpc__zig_ratio[256]; /* X[i+1]/X[i] */
extern const double dpc__zig_pair[512];  /* (ratio[i], X[i]) interleaved, for vector kernels */

#endif

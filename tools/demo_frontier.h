/* demo_frontier.h — `dpcorr demo --frontier` (demo_frontier.c). */
#ifndef DPCORR_TOOLS_DEMO_FRONTIER_H
#define DPCORR_TOOLS_DEMO_FRONTIER_H

#include <stddef.h>
#include <stdint.h>

/* Runs the frontier configuration (dry_run: prints it); epochs 0 = the default. Returns a CLI exit code. */
int demo_frontier(const char *out, size_t threads, uint64_t seed, size_t epochs, int quick,
                  int dry_run);

#endif

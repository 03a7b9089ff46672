/* train_algo.h — the runners of `dpcorr train --algo NAME` (the papers' own training algorithms;
 * train_algos.c dispatches). Each receives the whole `train` argv (argv[0] = "train") and parses
 * it with its own option table; all share the run frame of frame.h. */
#ifndef DPCORR_TOOLS_TRAIN_ALGO_H
#define DPCORR_TOOLS_TRAIN_ALGO_H

int train_linreg_ambssgd(int argc, char **argv); /* train_linreg.c: papers/001 */
int train_linreg_ssgd(int argc, char **argv);
int train_lcgd_projected(int argc, char **argv); /* train_kan.c: the KAN paper */
int train_srgd(int argc, char **argv);           /* train_srgd.c: Accelerated-DP-SRGD */

#endif

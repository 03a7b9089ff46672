/* nu_fig4_replot.c — redraws the nu-fig4 plot (doc/nu_fig4.png) from the summary CSV the run
 * wrote (doc/nu_fig4_summary.csv: mechanism, epsilon, mean and std of the test accuracy over
 * seeds) with the plot code of `dpcorr repro nu-fig4` itself (tools/repro_nu_fig4.c is
 * included, so fig4_plot is the very function the run calls), without the 42.5 minutes of
 * training that produced the numbers. Build and run from the repository root after `make`:
 *
 *   cc -std=c11 -D_DEFAULT_SOURCE -O2 -Iinclude -Isrc/core -Isrc/papers -Itools \
 *      scripts/nu_fig4_replot.c $(ls build/obj/tools/[!d]*.o build/obj/tools/demo*.o |
 *      grep -v /repro_nu_fig4.o) build/libdpcorr.a -lz -lpthread -lm -llbfgs -llapacke \
 *      -lopenblas -o build/nu_fig4_replot
 *   mkdir -p out && build/nu_fig4_replot doc/nu_fig4_summary.csv out && cp out/fig4.png doc/nu_fig4.png
 *
 * (mpicc instead of cc when the build has MPI: build/obj/tools/mpi_run.o then needs it.) */
#include "../tools/repro_nu_fig4.c"

#include <stdio.h>

/* One row: "name",epsilon,mean,std,seeds. */
static int read_row(const char *line, char *name, size_t nl, double *eps, double *mean,
                    double *sd, size_t *seeds)
{
    if (line[0] != '"') return 0;
    const char *q = strchr(line + 1, '"');
    if (!q || (size_t)(q - line - 1) >= nl) return 0;
    memcpy(name, line + 1, (size_t)(q - line - 1));
    name[q - line - 1] = 0;
    return sscanf(q + 1, ",%lf,%lf,%lf,%zu", eps, mean, sd, seeds) == 4;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: nu_fig4_replot SUMMARY.csv OUTDIR\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static fig4 g;
    memset(&g, 0, sizeof g);
    char line[512], name[64];
    size_t nm = 0, rows = 0;
    while (fgets(line, sizeof line, f)) {
        double e, mean, sd;
        size_t seeds, m = 0, k = 0;
        if (!read_row(line, name, sizeof name, &e, &mean, &sd, &seeds)) continue;
        while (m < nm && strcmp(g.mk[m].name, name)) m++;
        while (k < g.fc.neps && g.fc.eps[k] != e) k++;
        if (m == NMECH || k == 4) {
            fprintf(stderr, "%s: more than %d mechanisms or 4 epsilons\n", argv[1], NMECH);
            return 1;
        }
        if (m == nm++) {
            snprintf(g.mk[m].name, sizeof g.mk[m].name, "%s", name);
            g.mk[m].sampler = strstr(name, "Poisson")         ? DPC_SAMPLER_POISSON
                              : strstr(name, "balls-in-bins") ? DPC_SAMPLER_BALLS_IN_BINS
                                                              : DPC_SAMPLER_FIXED;
        } else {
            nm--;
        }
        if (k == g.fc.neps) g.fc.eps[g.fc.neps++] = e;
        g.mean[m][k] = mean;
        g.sd[m][k] = sd;
        g.fc.nseeds = seeds;
        rows++;
    }
    fclose(f);
    if (nm != NMECH || rows != NMECH * g.fc.neps) {
        fprintf(stderr, "%s: %zu mechanisms, %zu rows; expected %d x epsilons\n", argv[1], nm, rows,
                NMECH);
        return 1;
    }
    repro_opts o = {"nu-fig4", 0, 0, 0, argv[2], 0};
    repro_ctx c = {&o, NULL, NULL, 0, 1, 1, 0, 0.0};
    fig4_plot(&c, &g);
    return c.plots_ok ? 0 : 1;
}

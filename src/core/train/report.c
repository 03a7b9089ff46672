/* report.c — the report sections of a DP-FTRL run that are functions of the trainer's records
 * and time split (dpcorr/train.h), so that every front end reports them the same way. */
#include "dpcorr/io.h"
#include "dpcorr/train.h"

void dpc_train_records_report_json(dpc_json_writer *w, const dpc_train_record *r, size_t n)
{
    dpc_json_arr(w, "epochs");
    for (size_t i = 0; i < n; i++) {
        dpc_json_obj(w, NULL);
        dpc_json_int(w, "epoch", (long long)r[i].epoch);
        dpc_json_int(w, "step", (long long)r[i].step);
        dpc_json_num(w, "train_loss", r[i].train_loss);
        dpc_json_num(w, "test_loss", r[i].test_loss);
        dpc_json_num(w, "test_accuracy", r[i].test_accuracy);
        dpc_json_num(w, "epsilon_so_far", r[i].epsilon);
        dpc_json_num(w, "time_s", r[i].time_s);
        dpc_json_end(w);
    }
    dpc_json_end(w);
}

void dpc_train_times_report_json(dpc_json_writer *w, const dpc_train_times *tm, double setup_s,
                                 double account_s, double train_s)
{
    dpc_json_obj(w, "time_split_s");
    dpc_json_num(w, "setup", setup_s);
    dpc_json_num(w, "sample", tm->sample_s);
    dpc_json_num(w, "gradient", tm->gradient_s);
    dpc_json_num(w, "noise", tm->noise_s);
    dpc_json_num(w, "update", tm->update_s);
    dpc_json_num(w, "step_other", tm->other_s);
    dpc_json_num(w, "evaluate", tm->evaluate_s);
    dpc_json_num(w, "account", account_s);
    dpc_json_num(w, "loop", train_s - (tm->sample_s + tm->gradient_s + tm->noise_s +
                                       tm->update_s + tm->other_s));
    dpc_json_end(w);
}

/* test_common.c — status names and the error record (message and the parameter at fault). */
#include "dpcorr.h"
#include "harness.h"

int main(void)
{
    dpc_error e = {0};
    CHECK(!strcmp(dpc_status_str(DPC_OK), "ok"), "status name");
    CHECK(!strcmp(dpc_status_str((dpc_status)99), "unknown status"), "unknown status name");

    /* a parameter at fault: field set, message starts with it */
    CHECK(dpc_error_param(&e, DPC_E_INVALID, "nu", "must be in [0, 1), got %g", 2.0) ==
              DPC_E_INVALID, "param returns the status");
    CHECK(!strcmp(e.field, "nu") && !strcmp(e.msg, "nu: must be in [0, 1), got 2"), "param: %s|%s",
          e.field, e.msg);
    /* nesting: the caller's view of the same parameter */
    CHECK(dpc_error_nest(&e, "mech") == DPC_E_INVALID, "nest returns the status");
    CHECK(!strcmp(e.field, "mech.nu") && !strcmp(e.msg, "mech.nu: must be in [0, 1), got 2"),
          "nest: %s|%s", e.field, e.msg);
    /* a message without a field: nesting names the parent */
    (void)dpc_error_set(&e, DPC_E_FORMAT, "a.csv:3: expected a number");
    CHECK(e.field[0] == '\0', "set clears the field");
    (void)dpc_error_nest(&e, "data");
    CHECK(!strcmp(e.field, "data") && !strcmp(e.msg, "data: a.csv:3: expected a number"),
          "nest without field: %s|%s", e.field, e.msg);
    /* prefix keeps the field */
    (void)dpc_error_param(&e, DPC_E_PRIVACY, "epsilon", "too small");
    (void)dpc_error_prefix(&e, "run %d: ", 2);
    CHECK(!strcmp(e.field, "epsilon") && !strcmp(e.msg, "run 2: epsilon: too small"), "prefix: %s|%s",
          e.field, e.msg);
    /* long messages are truncated, never overflow */
    char big[2 * DPC_ERROR_MSG_LEN];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    (void)dpc_error_param(&e, DPC_E_INVALID, "f", "%s", big);
    CHECK(strlen(e.msg) == DPC_ERROR_MSG_LEN - 1, "truncated to the buffer");
    (void)dpc_error_nest(&e, "parent");
    CHECK(strlen(e.msg) == DPC_ERROR_MSG_LEN - 1 && !strncmp(e.msg, "parent.f: xx", 12),
          "nest of a long message stays in bounds");
    /* NULL err is allowed everywhere */
    CHECK(dpc_error_param(NULL, DPC_E_RANGE, "x", "y") == DPC_E_RANGE, "NULL err");
    CHECK(dpc_error_nest(NULL, "p") == DPC_E_INVALID, "NULL nest");
    return TEST_SUMMARY();
}

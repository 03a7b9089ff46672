/* test_field.c — the field-table machinery (dpcorr/field.h) on a local struct: lookup of dotted
 * names, defaults, typed set/get, range checks with their messages, and the coverage proof
 * refusing a table that leaves bytes uncovered, overlaps, mis-sizes or has an out-of-range
 * default. The exported tables of the library are verified by the tests of their modules. */
#include "dpcorr.h"
#include "field/field_def.h"
#include "harness.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct inner {
    double nu;
    int kind;
} inner;

typedef struct outer {
    inner mech;
    size_t batch;
    double delta;
    int flag;
    const char *label;
} outer;

static const char *const kind_names[] = {"a", "b", "c"};

static const dpc_field inner_fields[] = {
    {.name = "nu", .type = DPC_FIELD_DOUBLE, DPC_FIELD_AT(inner, nu), .def = 0.5, .lo = 0,
     .hi = 1, .flags = DPC_FIELD_HI_OPEN, .doc = "the decay"},
    {.name = "kind", .type = DPC_FIELD_ENUM, DPC_FIELD_AT(inner, kind), .def = 1,
     DPC_FIELD_NAMES(kind_names), .doc = "the kind"},
};
static const dpc_field_table inner_table = DPC_FIELD_TABLE(inner, inner_fields);

static const dpc_field outer_fields[] = {
    {.name = "mech", .type = DPC_FIELD_STRUCT, DPC_FIELD_AT(outer, mech), .sub = &inner_table,
     .doc = "the mechanism"},
    {.name = "batch", .type = DPC_FIELD_SIZE, DPC_FIELD_AT(outer, batch), .def = 256, .lo = 1,
     .hi = 1e12, .doc = "the batch"},
    {.name = "delta", .type = DPC_FIELD_DOUBLE, DPC_FIELD_AT(outer, delta), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO, .doc = "delta"},
    {.name = "flag", .type = DPC_FIELD_BOOL, DPC_FIELD_AT(outer, flag), .doc = "a switch"},
    {.name = "label", .type = DPC_FIELD_STRING, DPC_FIELD_AT(outer, label), .doc = "a label"},
};
static const dpc_field_table outer_table = DPC_FIELD_TABLE(outer, outer_fields);

static void test_lookup_defaults(void)
{
    dpc_error e = {0};
    CHECK_OK(dpc_field_table_verify(&outer_table, &e), &e);
    size_t base = 99;
    const dpc_field *f = dpc_field_find(&outer_table, "mech.nu", &base);
    CHECK(f && !strcmp(f->name, "nu") && base == offsetof(outer, mech), "dotted lookup");
    CHECK(!dpc_field_find(&outer_table, "mech.zz", NULL), "unknown nested name");
    CHECK(!dpc_field_find(&outer_table, "batch.x", NULL), "dot into a scalar");
    CHECK(!dpc_field_find(&outer_table, "mec", NULL), "prefix is not a name");
    outer o;
    memset(&o, 0x5a, sizeof o);
    dpc_field_defaults(&outer_table, &o);
    CHECK(o.mech.nu == 0.5 && o.mech.kind == 1 && o.batch == 256 && o.delta == 0 &&
              o.flag == 0 && o.label == NULL, "defaults written, the rest zero");
    CHECK(!strcmp(dpc_field_enum_name(&inner_fields[1], 2), "c") &&
              !dpc_field_enum_name(&inner_fields[1], 3), "enum names");
    CHECK_OK(dpc_field_check(&outer_table, &o, &e), &e);
}

static void test_set_and_ranges(void)
{
    dpc_error e = {0};
    outer o;
    dpc_field_defaults(&outer_table, &o);
    const dpc_field *b = dpc_field_find(&outer_table, "batch", NULL);
    CHECK(dpc_field_set(b, &o, 2.5, &e) == DPC_E_INVALID && !strcmp(e.field, "batch"),
          "non-integer size refused: %s", e.msg);
    CHECK(dpc_field_set(b, &o, -1, &e) == DPC_E_INVALID, "negative size refused");
    CHECK_OK(dpc_field_set(b, &o, 1024, &e), &e);
    CHECK(o.batch == 1024 && dpc_field_get(b, &o) == 1024, "set/get size");
    o.mech.nu = 1.0; /* hi is open */
    CHECK(dpc_field_check(&outer_table, &o, &e) == DPC_E_INVALID && !strcmp(e.field, "mech.nu"),
          "open upper bound refused, nested name: %s", e.msg);
    CHECK(strstr(e.msg, "[0, 1)") != NULL, "message states the range: %s", e.msg);
    o.mech.nu = NAN;
    CHECK(dpc_field_check(&outer_table, &o, &e) == DPC_E_INVALID && strstr(e.msg, "NaN"),
          "NaN refused: %s", e.msg);
    o.mech.nu = 0.25;
    o.mech.kind = 3;
    CHECK(dpc_field_check(&outer_table, &o, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "mech.kind"), "enum out of its names refused");
    o.mech.kind = 0;
    o.delta = 0; /* unset */
    CHECK_OK(dpc_field_check(&outer_table, &o, &e), &e);
    o.delta = 1;
    CHECK(dpc_field_check(&outer_table, &o, &e) == DPC_E_INVALID && !strcmp(e.field, "delta") &&
              strstr(e.msg, "or 0 (unset)"), "delta 1 refused: %s", e.msg);
    o.delta = 1e-5;
    o.flag = 2;
    CHECK(dpc_field_check(&outer_table, &o, &e) == DPC_E_INVALID && !strcmp(e.field, "flag"),
          "bool 2 refused");
}

/* The range in words: brackets from the open flags, the shortest round-trip decimals, a missing
 * upper bound as ">" / ">=" (the check's message adds "a finite number" for a DOUBLE). */
static void test_format_range(void)
{
    char buf[96];
    dpc_error e = {0};
    dpc_field_format_range(&inner_fields[0], buf, sizeof buf);
    CHECK(!strcmp(buf, "in [0, 1)"), "half-open range: %s", buf);
    dpc_field f = {.name = "x", .type = DPC_FIELD_DOUBLE, .lo = 0.1, .hi = 1e150,
                   .flags = DPC_FIELD_LO_OPEN};
    dpc_field_format_range(&f, buf, sizeof buf);
    CHECK(!strcmp(buf, "in (0.1, 1e+150]"), "open lo, large hi: %s", buf);
    f.hi = INFINITY;
    dpc_field_format_range(&f, buf, sizeof buf);
    CHECK(!strcmp(buf, "> 0.1"), "no upper bound: %s", buf);
    CHECK(dpc_field_check_value(&f, "", 0.1, &e) == DPC_E_INVALID &&
              strstr(e.msg, "must be a finite number > 0.1, got 0.1"), "check message: %s", e.msg);
    f.type = DPC_FIELD_SIZE, f.lo = 1, f.flags = 0;
    dpc_field_format_range(&f, buf, sizeof buf);
    CHECK(!strcmp(buf, ">= 1"), "count without upper bound: %s", buf);
    CHECK(dpc_field_check_value(&f, "", 0, &e) == DPC_E_INVALID &&
              strstr(e.msg, "must be >= 1, got 0"), "count message: %s", e.msg);
    f.lo = 1.0 / 3, f.hi = 2;
    dpc_field_format_range(&f, buf, sizeof buf);
    CHECK(!strcmp(buf, "in [0.33333333333333331, 2]"), "17 digits when 15 do not read back: %s",
          buf);
}

/* An ENUM's names joined, the default marked; the length of the whole text when cut. */
static void test_format_enum(void)
{
    char buf[64];
    int n = dpc_field_format_enum(&inner_fields[1], "|", NULL, buf, sizeof buf);
    CHECK(!strcmp(buf, "a|b|c") && n == 5, "names joined: %s (%d)", buf, n);
    dpc_field_format_enum(&inner_fields[1], " | ", " (default)", buf, sizeof buf);
    CHECK(!strcmp(buf, "a | b (default) | c"), "default marked: %s", buf);
    n = dpc_field_format_enum(&inner_fields[1], " | ", " (default)", buf, 6);
    CHECK(!strcmp(buf, "a | b") && n == 19, "cut text terminated, full length: %s (%d)", buf, n);
    n = dpc_field_format_enum(&inner_fields[0], "|", NULL, buf, sizeof buf);
    CHECK(buf[0] == '\0' && n == 0, "not an ENUM: empty");
}

/* An example value: accepted by the range check and not the default (twice the default, half
 * of it, the middle of the range; integral for counts); an ENUM's other name; none for a field
 * that is not numeric or whose range holds only the default. */
static void test_format_example(void)
{
    char buf[64];
    dpc_error e = {0};
    int n = dpc_field_format_example(&inner_fields[0], buf, sizeof buf);
    CHECK(n == 4 && !strcmp(buf, "0.25"), "nu 0.5 in [0, 1): half the default: %s", buf);
    dpc_field_format_example(&inner_fields[1], buf, sizeof buf);
    CHECK(!strcmp(buf, "a"), "enum default b: its first name: %s", buf);
    dpc_field f = inner_fields[1];
    f.def = 0;
    dpc_field_format_example(&f, buf, sizeof buf);
    CHECK(!strcmp(buf, "b"), "enum default a: its second name: %s", buf);
    dpc_field_format_example(&outer_fields[1], buf, sizeof buf);
    CHECK(!strcmp(buf, "512"), "batch 256: twice the default: %s", buf);
    f = (dpc_field){.name = "k", .type = DPC_FIELD_SIZE, .def = 3, .lo = 1, .hi = 4};
    dpc_field_format_example(&f, buf, sizeof buf);
    CHECK(!strcmp(buf, "1"), "count 3 in [1, 4]: half the default, floored: %s", buf);
    f = (dpc_field){.name = "x", .type = DPC_FIELD_DOUBLE, .lo = 0, .hi = 1e-3};
    dpc_field_format_example(&f, buf, sizeof buf);
    CHECK(!strcmp(buf, "0.0005"), "zero default, lo + 1 out of range: the middle: %s", buf);
    CHECK(dpc_field_check_value(&f, "", strtod(buf, NULL), &e) == DPC_OK, "example accepted");
    f = (dpc_field){.name = "x", .type = DPC_FIELD_INT, .def = 1, .lo = 1, .hi = 1};
    CHECK(dpc_field_format_example(&f, buf, sizeof buf) == -1 && buf[0] == '\0',
          "a range holding only the default: none");
    CHECK(dpc_field_format_example(&outer_fields[4], buf, sizeof buf) == -1 &&
              dpc_field_format_example(&outer_fields[0], buf, sizeof buf) == -1,
          "a string or struct field: none");
}

/* Broken tables: each must be refused naming the field. */
static void test_verify_refuses(void)
{
    dpc_error e = {0};
    /* a field left out: the bytes of batch uncovered */
    dpc_field gap[] = {outer_fields[0], outer_fields[2], outer_fields[3], outer_fields[4]};
    dpc_field_table t = DPC_FIELD_TABLE(outer, gap);
    CHECK(dpc_field_table_verify(&t, &e) == DPC_E_INVALID && !strcmp(e.field, "delta") &&
              strstr(e.msg, "not covered"), "uncovered bytes: %s", e.msg);
    /* the last field left out: bytes at the end */
    dpc_field tail[] = {outer_fields[0], outer_fields[1], outer_fields[2], outer_fields[3]};
    dpc_field_table t2 = DPC_FIELD_TABLE(outer, tail);
    CHECK(dpc_field_table_verify(&t2, &e) == DPC_E_INVALID && strstr(e.msg, "at its end"),
          "uncovered end: %s", e.msg);
    /* wrong type for its size */
    dpc_field wrong[5];
    memcpy(wrong, outer_fields, sizeof wrong);
    wrong[3].type = DPC_FIELD_DOUBLE; /* an int */
    dpc_field_table t3 = DPC_FIELD_TABLE(outer, wrong);
    CHECK(dpc_field_table_verify(&t3, &e) == DPC_E_INVALID && !strcmp(e.field, "flag"),
          "type/size mismatch: %s", e.msg);
    /* a default outside the range */
    memcpy(wrong, outer_fields, sizeof wrong);
    wrong[1].def = 0;
    dpc_field_table t4 = DPC_FIELD_TABLE(outer, wrong);
    CHECK(dpc_field_table_verify(&t4, &e) == DPC_E_INVALID && !strcmp(e.field, "batch"),
          "default out of range: %s", e.msg);
    /* a duplicated name */
    memcpy(wrong, outer_fields, sizeof wrong);
    wrong[4].name = "flag";
    dpc_field_table t5 = DPC_FIELD_TABLE(outer, wrong);
    CHECK(dpc_field_table_verify(&t5, &e) == DPC_E_INVALID, "duplicate name: %s", e.msg);
    /* a missing doc line */
    memcpy(wrong, outer_fields, sizeof wrong);
    wrong[2].doc = NULL;
    dpc_field_table t6 = DPC_FIELD_TABLE(outer, wrong);
    CHECK(dpc_field_table_verify(&t6, &e) == DPC_E_INVALID, "missing doc: %s", e.msg);
}

/* `when`: a field applies only while an ENUM field of its struct has one of the named values;
 * verify refuses a condition that names no enum field or an unknown value. */
static void test_when(void)
{
    dpc_error e = {0};
    dpc_field f[2];
    memcpy(f, inner_fields, sizeof f);
    f[0].when = "kind a|c";
    dpc_field_table t = DPC_FIELD_TABLE(inner, f);
    CHECK(dpc_field_table_verify(&t, &e) == DPC_OK, "a valid when: %s", e.msg);
    inner x = {0.5, 0};
    int got[3];
    for (x.kind = 0; x.kind < 3; x.kind++) got[x.kind] = dpc_field_applies(&t, &f[0], &x);
    CHECK(got[0] == 1 && got[1] == 0 && got[2] == 1, "applies by kind: %d %d %d", got[0], got[1],
          got[2]);
    CHECK(dpc_field_applies(&t, &f[1], &x) == 1, "no when: always");
    static const char *const bad[] = {"kind z", "kinds a", "nu a", "kind", "kind a|"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f[0].when = bad[i];
        CHECK(dpc_field_table_verify(&t, &e) == DPC_E_INVALID && !strcmp(e.field, "nu"),
              "when '%s' refused: %s", bad[i], e.msg);
        CHECK(dpc_field_applies(&t, &f[0], &x) == 0, "a malformed when never applies");
    }
}

/* Step records as doubles and back: doubles bit for bit (NaN too), integers by value, a value
 * outside the integer type leaves the field. */
static void test_pack(void)
{
    inner r[2] = {{0.25, 2}, {NAN, 1}}, back[2] = {{0, 0}, {0, 0}};
    double v[4];
    dpc_field_pack(&inner_table, r, 2, v);
    CHECK(v[0] == 0.25 && v[1] == 2 && isnan(v[2]) && v[3] == 1, "packed %g %g %g %g", v[0],
          v[1], v[2], v[3]);
    dpc_field_unpack(&inner_table, v, 2, back);
    CHECK(!memcmp(&back[0].nu, &r[0].nu, sizeof(double)) && back[0].kind == 2 &&
              isnan(back[1].nu) && back[1].kind == 1, "unpacked");
    v[1] = 1e300;
    dpc_field_unpack(&inner_table, v, 1, back);
    CHECK(back[0].kind == 2, "an int out of range keeps the field (%d)", back[0].kind);
}

/* A configuration in its fields' names: table order, only the fields that apply and are in the
 * group, enum values by name, numbers shortest round-trip; the needed length when truncated. */
static void test_format_values(void)
{
    dpc_field f[2];
    memcpy(f, inner_fields, sizeof f);
    f[0].when = "kind b";
    dpc_field_table t = DPC_FIELD_TABLE(inner, f);
    inner x = {0.1, 1};
    char buf[64];
    int n = dpc_field_format_values(&t, &x, NULL, ",", buf, sizeof buf);
    CHECK(!strcmp(buf, "nu=0.1,kind=b") && n == 13, "all: %s (%d)", buf, n);
    x.kind = 2;
    dpc_field_format_values(&t, &x, NULL, ",", buf, sizeof buf);
    CHECK(!strcmp(buf, "kind=c"), "nu does not apply to kind c: %s", buf);
    f[1].group = "g";
    x.kind = 1;
    dpc_field_format_values(&t, &x, "g", ",", buf, sizeof buf);
    CHECK(!strcmp(buf, "kind=b"), "group g only: %s", buf);
    outer o = {{0.5, 0}, 3, 1.0 / 3, 1, "x"};
    dpc_field_format_values(&outer_table, &o, NULL, " ", buf, sizeof buf);
    CHECK(!strcmp(buf, "batch=3 delta=0.33333333333333331 flag=1"),
          "nested struct and string left out, 1/3 round-trips: %s", buf);
    char small[8];
    n = dpc_field_format_values(&outer_table, &o, NULL, " ", small, sizeof small);
    CHECK(n == 40 && !strcmp(small, "batch=3"), "truncated: %s, needs %d", small, n);
}

/* The types of uint32_t, char and long (appended after BYTES): a struct of the three, whose
 * table must also declare the padding a long leaves after a char. */
typedef struct narrow {
    uint32_t stream;
    char delim;
    long col;
} narrow;

static const dpc_field narrow_fields[] = {
    {.name = "stream", .type = DPC_FIELD_U32, DPC_FIELD_AT(narrow, stream), .def = 7, .lo = 0,
     .hi = 4294967295.0, .doc = "a stream"},
    {.name = "delim", .type = DPC_FIELD_CHAR, DPC_FIELD_AT(narrow, delim), .def = ',', .lo = 1,
     .hi = 255, .flags = DPC_FIELD_UNSET_ZERO, .doc = "a delimiter"},
    {.name = "col", .type = DPC_FIELD_LONG, DPC_FIELD_AT(narrow, col), .def = -1, .lo = -1000,
     .hi = 1000, .doc = "a column, from the end when negative"},
};
static const dpc_field_table narrow_table = DPC_FIELD_TABLE(narrow, narrow_fields);

static void test_narrow_types(void)
{
    dpc_error e = {0};
    const dpc_field *fs = &narrow_fields[0], *fd = &narrow_fields[1], *fc = &narrow_fields[2];
    CHECK(DPC_FIELD_U32 == 10 && DPC_FIELD_CHAR == 11 && DPC_FIELD_LONG == 12 &&
              DPC_FIELD_BYTES == 9, "appended, the old values kept (ABI)");
    CHECK_OK(dpc_field_table_verify(&narrow_table, &e), &e);
    CHECK(dpc_field_is_numeric(fs) && dpc_field_is_numeric(fd) && dpc_field_is_numeric(fc) &&
              !dpc_field_is_numeric(&outer_fields[4]) && !dpc_field_is_numeric(NULL),
          "numeric: the three new types, not a string");
    narrow n;
    memset(&n, 0x5a, sizeof n);
    dpc_field_defaults(&narrow_table, &n);
    CHECK(n.stream == 7 && n.delim == ',' && n.col == -1, "defaults %u '%c' %ld", n.stream,
          n.delim, n.col);
    CHECK_OK(dpc_field_check(&narrow_table, &n, &e), &e);
    /* the type's limits: exact at the ends, refused one past them, naming the field */
    CHECK_OK(dpc_field_set(fs, &n, 4294967295.0, &e), &e);
    CHECK(n.stream == UINT32_MAX && dpc_field_get(fs, &n) == 4294967295.0, "u32 max");
    CHECK(dpc_field_set(fs, &n, 4294967296.0, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "stream") && strstr(e.msg, "4294967296") && n.stream == UINT32_MAX,
          "2^32 refused, the field kept: %s", e.msg);
    CHECK(dpc_field_set(fs, &n, -1, &e) == DPC_E_INVALID, "a negative stream refused");
    CHECK_OK(dpc_field_set(fd, &n, 233, &e), &e); /* a byte above 127: char's sign aside */
    CHECK(dpc_field_get(fd, &n) == 233 && (unsigned char)n.delim == 233, "byte 233 read back");
    CHECK(dpc_field_set(fd, &n, 256, &e) == DPC_E_INVALID && !strcmp(e.field, "delim"),
          "256 is no byte: %s", e.msg);
    CHECK(dpc_field_set(fd, &n, -1, &e) == DPC_E_INVALID, "-1 is no byte");
    CHECK_OK(dpc_field_set(fc, &n, -9007199254740992.0, &e), &e);
    CHECK(n.col == -9007199254740992L && dpc_field_get(fc, &n) == -9007199254740992.0,
          "long -2^53 exact");
    CHECK(dpc_field_set(fc, &n, -(double)LONG_MIN, &e) == DPC_E_INVALID && !strcmp(e.field, "col"),
          "-LONG_MIN does not fit a long: %s", e.msg);
    CHECK_OK(dpc_field_set(fc, &n, (double)LONG_MIN, &e), &e);
    CHECK(n.col == LONG_MIN, "LONG_MIN exact");
    CHECK(dpc_field_set(fc, &n, 0.5, &e) == DPC_E_INVALID, "a fraction is no long");
    /* ranges: the table's, with its words */
    CHECK(dpc_field_check_value(fc, "", -1001, &e) == DPC_E_INVALID && !strcmp(e.field, "col") &&
              strstr(e.msg, "in [-1000, 1000]") && strstr(e.msg, "-1001"),
          "long out of range: %s", e.msg);
    CHECK(dpc_field_check_value(fd, "", 0, &e) == DPC_OK, "delimiter 0 is unset");
    n.delim = ',';
    n.col = 5;
    n.stream = 3;
    CHECK_OK(dpc_field_check(&narrow_table, &n, &e), &e);
    n.col = 5000;
    CHECK(dpc_field_check(&narrow_table, &n, &e) == DPC_E_INVALID && !strcmp(e.field, "col"),
          "dpc_field_check reads a long: %s", e.msg);
    /* pack and unpack (checkpoint sections): by value, an out-of-type value keeps the field */
    narrow r = {4294967295u, ';', -3}, back;
    memset(&back, 0, sizeof back);
    double v[3];
    dpc_field_pack(&narrow_table, &r, 1, v);
    CHECK(v[0] == 4294967295.0 && v[1] == ';' && v[2] == -3, "packed %g %g %g", v[0], v[1], v[2]);
    dpc_field_unpack(&narrow_table, v, 1, &back);
    CHECK(back.stream == r.stream && back.delim == ';' && back.col == -3, "unpacked");
    v[0] = 4294967296.0;
    dpc_field_unpack(&narrow_table, v, 1, &back);
    CHECK(back.stream == 4294967295u, "a stream past 2^32 - 1 keeps the field");
    /* a size that is not the type's is refused by the proof */
    dpc_field bad[3];
    memcpy(bad, narrow_fields, sizeof bad);
    bad[0].size = 8;
    dpc_field_table t = narrow_table;
    t.fields = bad;
    CHECK(dpc_field_table_verify(&t, &e) == DPC_E_INVALID && !strcmp(e.field, "stream"),
          "a u32 of 8 bytes refused: %s", e.msg);
}

/* A CHAR as front ends write and read it: the character, "space", "tab", "0xNN"; the default
 * of a CHAR row as the character. */
static void test_char_text(void)
{
    char buf[16];
    dpc_error e = {0};
    const dpc_field *fd = &narrow_fields[1];
    dpc_field_format_default(fd, buf, sizeof buf);
    CHECK(!strcmp(buf, ","), "default ',' shown as '%s'", buf);
    for (int c = 1; c < 256; c++) {
        int got = -1;
        dpc_field_format_char(c, buf, sizeof buf);
        CHECK(dpc_field_parse_char(fd, buf, &got, &e) == DPC_OK && got == c,
              "byte %d written '%s' reads back %d", c, buf, got);
    }
    dpc_field_format_char(' ', buf, sizeof buf);
    CHECK(!strcmp(buf, "space"), "' ' (any blank run) is written 'space': '%s'", buf);
    dpc_field_format_char(0xe9, buf, sizeof buf);
    CHECK(!strcmp(buf, "0xe9"), "a high byte in hex: '%s'", buf);
    static const struct { const char *text; int c; } words[] = {
        {"comma", ','}, {"semicolon", ';'}, {"pipe", '|'}, {"tab", '\t'}, {" ", ' '},
        {"0x3B", ';'}};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        int got = -1;
        CHECK(dpc_field_parse_char(fd, words[k].text, &got, &e) == DPC_OK && got == words[k].c,
              "'%s' is byte %d (got %d)", words[k].text, words[k].c, got);
    }
    static const char *const bad[] = {"", "ab", "0x", "0xg1", "0x123", "colons"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int got = -1;
        CHECK(dpc_field_parse_char(fd, bad[k], &got, &e) == DPC_E_INVALID &&
                  !strcmp(e.field, "delim") && got == -1,
              "'%s' refused naming delim: %s", bad[k], e.msg);
    }
}

/* DPC_FIELD_UNSET_NAN: a NAN default ("not given") verifies and NAN passes the range check,
 * while a value outside the range is still refused; without the flag NAN is refused. */
static void test_unset_nan(void)
{
    typedef struct question { double epsilon; } question;
    dpc_field f[1] = {{.name = "epsilon", .type = DPC_FIELD_DOUBLE,
                       DPC_FIELD_AT(question, epsilon), .def = NAN, .lo = 0, .hi = INFINITY,
                       .flags = DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_NAN, .doc = "a budget"}};
    dpc_field_table t = DPC_FIELD_TABLE(question, f);
    dpc_error e = {0};
    CHECK_OK(dpc_field_table_verify(&t, &e), &e);
    question q = {1.0};
    dpc_field_defaults(&t, &q);
    CHECK(isnan(q.epsilon), "the NAN default is written");
    CHECK_OK(dpc_field_check_value(f, "", NAN, &e), &e);
    CHECK(dpc_field_check_value(f, "", -1, &e) == DPC_E_INVALID && !strcmp(e.field, "epsilon"),
          "below the range refused: %s", e.msg);
    f[0].flags = DPC_FIELD_HI_OPEN;
    CHECK(dpc_field_check_value(f, "", NAN, &e) == DPC_E_INVALID, "NAN refused without it");
    CHECK(dpc_field_table_verify(&t, &e) == DPC_E_INVALID && !strcmp(e.field, "epsilon"),
          "a NAN default without the flag refused: %s", e.msg);
}

int main(void)
{
    test_narrow_types();
    test_char_text();
    test_unset_nan();
    test_lookup_defaults();
    test_set_and_ranges();
    test_format_range();
    test_format_enum();
    test_format_example();
    test_verify_refuses();
    test_when();
    test_pack();
    test_format_values();
    return TEST_SUMMARY();
}

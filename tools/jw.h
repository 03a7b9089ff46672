/* jw.h — the CLI's short names for the library's JSON writer (dpcorr/io.h, dpc_json_writer):
 * kept so the many report call sites read as before; the writer itself is the library's. */
#ifndef DPCORR_TOOLS_JW_H
#define DPCORR_TOOLS_JW_H

#include "dpcorr/field.h"
#include "dpcorr/io.h"

typedef dpc_json_writer jw;
#define jw_begin dpc_json_begin
#define jw_begin_line dpc_json_begin_line
#define jw_finish dpc_json_finish
#define jw_obj dpc_json_obj
#define jw_arr dpc_json_arr
#define jw_end dpc_json_end
#define jw_num dpc_json_num
#define jw_int dpc_json_int
#define jw_field dpc_json_field
#define jw_str dpc_json_str
#define jw_bool dpc_json_bool
#define jw_null dpc_json_null
#define jw_raw dpc_json_raw
#define jw_nums dpc_json_nums

#endif

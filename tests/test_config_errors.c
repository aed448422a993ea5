/* tests/test_config_errors.c: unit tests for gate.toml's refusals (gate/config/): every value,
 * key and table gate cannot take is an error naming file:line:col, the key and the fix. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/config/config.h"
#include "gate/config/toml.h"
#include "tests/config_helpers.h"

/* ---- errors ---- */

#define DUR_RANGE "use a duration above 0 and at most 24 h, e.g. \"90 s\""
#define DUR_FIX                                                                                    \
	"write an integer number of seconds or a string such as \"90 s\" (units: ms, s, sec, m, "  \
	"min, h)"
#define DUR_TEXT_FIX                                                                               \
	"write a number and a unit, e.g. \"90 s\" (units: ms, s, sec, m, min, h; a number alone "  \
	"is seconds)"
#define DUR_UNITS "use ms, s, sec, m, min or h"

static void test_duration_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[node]\nboot_timeout = 0",
	         "t.toml:2:16: node.boot_timeout: 0 s is out of range; " DUR_RANGE},
	        {"[node]\nboot_timeout = -5",
	         "t.toml:2:16: node.boot_timeout: -5 s is out of range; " DUR_RANGE},
	        {"[node]\nrpc_timeout = 86401",
	         "t.toml:2:15: node.rpc_timeout: 86401 s is out of range; " DUR_RANGE},
	        {"[node]\nrpc_timeout = 9223372036854775807",
	         "t.toml:2:15: node.rpc_timeout: 9223372036854775807 s is out of "
	         "range; " DUR_RANGE},
	        {"[node]\ntest_timeout = \"25 h\"",
	         "t.toml:2:16: node.test_timeout: \"25 h\" is out of range; " DUR_RANGE},
	        {"[node]\ntest_timeout = \"1441 min\"",
	         "t.toml:2:16: node.test_timeout: \"1441 min\" is out of range; " DUR_RANGE},
	        {"[node]\ntest_timeout = \"86400001 ms\"",
	         "t.toml:2:16: node.test_timeout: \"86400001 ms\" is out of range; " DUR_RANGE},
	        {"[node]\ntest_timeout = \"1e999 s\"",
	         "t.toml:2:16: node.test_timeout: \"1e999 s\" is out of range; " DUR_RANGE},
	        {"[node]\nstop_timeout = \"0 s\"",
	         "t.toml:2:16: node.stop_timeout: \"0 s\" is out of range; " DUR_RANGE},
	        {"[node]\nstop_timeout = \"-5 s\"",
	         "t.toml:2:16: node.stop_timeout: \"-5 s\" is negative; " DUR_RANGE},
	        {"[node]\nstop_timeout = \"99999999999999999999 s\"",
	         "t.toml:2:16: node.stop_timeout: \"99999999999999999999 s\" has too many "
	         "digits; " DUR_RANGE},
	        {"[node]\nboot_timeout = \"5 mins\"",
	         "t.toml:2:16: node.boot_timeout: unknown unit \"mins\" in \"5 mins\"; " DUR_UNITS},
	        {"[node]\nboot_timeout = \"5 S\"",
	         "t.toml:2:16: node.boot_timeout: unknown unit \"S\" in \"5 S\"; " DUR_UNITS},
	        {"[node]\nboot_timeout = \"0x10 s\"", "t.toml:2:16: node.boot_timeout: unknown "
	                                              "unit \"x10 s\" in \"0x10 s\"; " DUR_UNITS},
	        {"[node]\nboot_timeout = \"s\"",
	         "t.toml:2:16: node.boot_timeout: \"s\" is not a duration; " DUR_TEXT_FIX},
	        {"[node]\nboot_timeout = \"\"",
	         "t.toml:2:16: node.boot_timeout: \"\" is not a duration; " DUR_TEXT_FIX},
	        {"[node]\nboot_timeout = \". s\"",
	         "t.toml:2:16: node.boot_timeout: \". s\" is not a duration; " DUR_TEXT_FIX},
	        {"[node]\nboot_timeout = \"0.4 ms\"",
	         "t.toml:2:16: node.boot_timeout: \"0.4 ms\" is out of range; " DUR_RANGE},
	        {"[node]\nboot_timeout = 1.5",
	         "t.toml:2:16: node.boot_timeout: expected a duration, got a float; " DUR_FIX},
	        {"[node]\nboot_timeout = true",
	         "t.toml:2:16: node.boot_timeout: expected a duration, got a boolean; " DUR_FIX},
	        {"[node]\nboot_timeout = [1]",
	         "t.toml:2:16: node.boot_timeout: expected a duration, got an array; " DUR_FIX},
	};
	RUN(cases);
}

#define SIZE_RANGE "use a size of at least 0 B and below 2^62 bytes, e.g. \"1 MB\""
#define SIZE_FIX                                                                                   \
	"write an integer number of bytes or a string such as \"64 MB\" (units: B, kB, MB, GB, "   \
	"KiB, MiB, GiB)"

static void test_size_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[growth]\nfloor = -1",
	         "t.toml:2:9: growth.floor: -1 bytes is out of range; " SIZE_RANGE},
	        {"[growth]\nfloor = 4611686018427387904",
	         "t.toml:2:9: growth.floor: 4611686018427387904 bytes is out of "
	         "range; " SIZE_RANGE},
	        {"[growth]\nfloor = \"4294967296 GiB\"",
	         "t.toml:2:9: growth.floor: \"4294967296 GiB\" is out of range; " SIZE_RANGE},
	        {"[growth]\nfloor = \"999999999999999999 GB\"",
	         "t.toml:2:9: growth.floor: \"999999999999999999 GB\" is out of "
	         "range; " SIZE_RANGE},
	        {"[growth]\nfloor = \"-1 MB\"",
	         "t.toml:2:9: growth.floor: \"-1 MB\" is negative; " SIZE_RANGE},
	        {"[growth]\nfloor = \"1 mb\"", "t.toml:2:9: growth.floor: unknown unit \"mb\" in "
	                                       "\"1 mb\"; use B, kB, MB, GB (1000^n) "
	                                       "or KiB, MiB, GiB (1024^n)"},
	        {"[growth]\nfloor = \"1 TB\"", "t.toml:2:9: growth.floor: unknown unit \"TB\" in "
	                                       "\"1 TB\"; use B, kB, MB, GB (1000^n) "
	                                       "or KiB, MiB, GiB (1024^n)"},
	        {"[growth]\nfloor = \"1000\"",
	         "t.toml:2:9: growth.floor: \"1000\" has no unit; add one of B, kB, MB, GB, KiB, "
	         "MiB, "
	         "GiB, e.g. \"1000 MB\" (an integer without quotes means bytes)"},
	        {"[growth]\nfloor = \"MB\"",
	         "t.toml:2:9: growth.floor: \"MB\" is not a size; " SIZE_FIX},
	        {"[growth]\nfloor = \"1.5 B\"",
	         "t.toml:2:9: growth.floor: \"1.5 B\" is not a whole number of bytes; round it"},
	        {"[growth.code]\nfloor = 1.5",
	         "t.toml:2:9: growth.code.floor: expected a size, got a float; " SIZE_FIX},
	        {"[growth.code]\nfloor = false",
	         "t.toml:2:9: growth.code.floor: expected a size, got a boolean; " SIZE_FIX},
	};
	RUN(cases);
}

#define PCT_RANGE "use a finite percentage of 0 or more, e.g. \"10 %\""
#define PCT_FIX "write a string such as \"10 %\" or a number of percent"

static void test_percent_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[growth]\nmax = -1", "t.toml:2:7: growth.max: -1 % is out of range; " PCT_RANGE},
	        {"[growth]\nmax = -0.5",
	         "t.toml:2:7: growth.max: -0.5 % is out of range; " PCT_RANGE},
	        {"[growth]\nmax = inf",
	         "t.toml:2:7: growth.max: inf % is out of range; " PCT_RANGE},
	        {"[growth]\nmax = nan",
	         "t.toml:2:7: growth.max: nan % is out of range; " PCT_RANGE},
	        {"[growth]\nmax = \"-1 %\"",
	         "t.toml:2:7: growth.max: \"-1 %\" is negative; " PCT_RANGE},
	        {"[growth]\nmax = \"10\"",
	         "t.toml:2:7: growth.max: \"10\" has no % sign; write \"10 %\""},
	        {"[growth]\nmax = \"10 percent\"", "t.toml:2:7: growth.max: unknown unit "
	                                           "\"percent\" in \"10 percent\"; percentages end "
	                                           "in %"},
	        {"[growth]\nmax = \"%\"",
	         "t.toml:2:7: growth.max: \"%\" is not a percentage; " PCT_FIX},
	        {"[growth]\nmax = \"1e3 %\"", "t.toml:2:7: growth.max: unknown unit \"e3 %\" in "
	                                      "\"1e3 %\"; percentages end in %"},
	        {"[growth.atom]\nmax = true",
	         "t.toml:2:7: growth.atom.max: expected a percentage, got a boolean; " PCT_FIX},
	};
	RUN(cases);
}

static void test_unknown_keys(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[node]\nboot_timout = 5",
	         "t.toml:2:1: node.boot_timout: unknown key; did you mean \"boot_timeout\"?"},
	        {"[node]\n  Boot_Timeout = 5",
	         "t.toml:2:3: node.Boot_Timeout: unknown key; did you mean \"boot_timeout\"?"},
	        {"[node]\n\"boot timeout\" = 5",
	         "t.toml:2:1: node.\"boot timeout\": unknown key; did you mean \"boot_timeout\"?"},
	        {"[node]\nmixenv = 'x'",
	         "t.toml:2:1: node.mixenv: unknown key; did you mean \"mix_env\"?"},
	        {"[node]\ncookie = 'x'", "t.toml:2:1: node.cookie: unknown key; [node] takes "
	                                 "mix_env, erl_flags, boot_timeout, "
	                                 "rpc_timeout, test_timeout, stop_timeout, "
	                                 "settle_timeout"},
	        {"[output]\njunit_path = 'x'",
	         "t.toml:2:1: output.junit_path: unknown key; [output] takes junit"},
	        {"[nodes]\n", "t.toml:1:2: nodes: unknown key; did you mean \"node\"?"},
	        {"outptu.junit = 'x'", "t.toml:1:1: outptu: unknown key; did you mean \"output\"?"},
	        {"colour = 1",
	         "t.toml:1:1: colour: unknown key; the configuration has only the tables [node], "
	         "[output], [growth], [ets], [binary], [process], [atom], [modules], [allocator], "
	         "[baseline], [attribution], [ports], [persistent_term], [run], [severity], "
	         "[attention], [rss], [peak] and [structure]"},
	        /* every table is suggested, those added after the first ones too */
	        {"[modules_]\n", "t.toml:1:2: modules_: unknown key; did you mean \"modules\"?"},
	        {"[structures]\n",
	         "t.toml:1:2: structures: unknown key; did you mean \"structure\"?"},
	        {"[ports]\nmax_open = 10",
	         "t.toml:2:1: ports.max_open: unknown key; did you mean \"max_opened\"?"},
	        {"[growth]\nmaxx = 1",
	         "t.toml:2:1: growth.maxx: unknown key; did you mean \"max\"?"},
	        {"[growth]\nlive_total = true",
	         "t.toml:2:1: growth.live_total: unknown key; did you mean \"live_totals\"?"},
	        {"[growth]\nlimit = 1",
	         "t.toml:2:1: growth.limit: unknown key; [growth] takes max, floor, live_totals, "
	         "total, "
	         "processes, processes_used, system, atom, atom_used, binary, code, ets"},
	        {"[growth.binery]\n",
	         "t.toml:1:9: growth.binery: unknown category; did you mean \"binary\"?"},
	        {"[growth.atoms]\nmax = 1\n",
	         "t.toml:1:9: growth.atoms: unknown category; did you mean \"atom\"?"},
	        {"[growth.heap]\n",
	         "t.toml:1:9: growth.heap: unknown category; use one of total, processes, "
	         "processes_used, system, atom, atom_used, binary, code, ets"},
	        {"[growth.code]\nfloor_bytes = 1", "t.toml:2:1: growth.code.floor_bytes: unknown "
	                                           "key; [growth.code] takes enabled, max, "
	                                           "floor"},
	        {"[growth.code]\nenable = true",
	         "t.toml:2:1: growth.code.enable: unknown key; did you mean \"enabled\"?"},
	        /* the first problem in file order is the one reported */
	        {"[node]\nmix_env = 'x'\nbad = 1\nboot_timeout = 0\n",
	         "t.toml:3:1: node.bad: unknown key; [node] takes mix_env, erl_flags, "
	         "boot_timeout, "
	         "rpc_timeout, test_timeout, stop_timeout, settle_timeout"},
	};
	RUN(cases);
}

static void test_wrong_types_and_strings(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"node = 1", "t.toml:1:8: node: expected a table, got an integer; write [node] "
	                     "with its keys below it"},
	        {"[[node]]\n", "t.toml:1:1: node: expected a table, got an array; write [node] "
	                       "with its keys below it"},
	        {"output = 'x.xml'", "t.toml:1:10: output: expected a table, got a string; write "
	                             "[output] with its keys "
	                             "below it"},
	        {"[growth]\ncode = 5", "t.toml:2:8: growth.code: expected a table, got an integer; "
	                               "write [growth.code] with "
	                               "enabled, max and floor below it"},
	        {"[node]\nmix_env = 5", "t.toml:2:11: node.mix_env: expected a string, got an "
	                                "integer; e.g. mix_env = \"test\""},
	        {"[node]\nmix_env = \"\"",
	         "t.toml:2:11: node.mix_env: must not be empty; e.g. mix_env = \"test\""},
	        {"[node]\nmix_env = \"a\\u0000b\"",
	         "t.toml:2:11: node.mix_env: contains a NUL character (\\u0000); remove it"},
	        {"[node]\nerl_flags = ['+S', '4']",
	         "t.toml:2:13: node.erl_flags: expected a string, got an array; e.g. erl_flags = "
	         "\"+S 4\""},
	        {"[output]\njunit = ''", "t.toml:2:9: output.junit: must not be empty; e.g. junit "
	                                 "= \"_build/gate/junit.xml\""},
	        {"[growth]\nlive_totals = \"yes\"", "t.toml:2:15: growth.live_totals: expected a "
	                                            "boolean, got a string; write true or false, "
	                                            "without quotes"},
	        {"[growth.code]\nenabled = 1", "t.toml:2:11: growth.code.enabled: expected a "
	                                       "boolean, got an integer; write true or "
	                                       "false, without quotes"},
	};
	RUN(cases);

	/* an empty erl_flags is fine: no extra flags */
	struct config cfg = {0};
	load_kv(&cfg, "[node]", "erl_flags", "''");
	assert_string_equal(cfg.erl_flags, "");
	config_clear(&cfg);
}

static void test_toml_errors_are_prefixed(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[node]\nmix_env = 'x'\nmix_env = 'y'\n",
	         "t.toml:3:1: duplicate key mix_env: already defined at 2:1"},
	        {"[node]\nboot_timeout = 1979-05-27\n",
	         "t.toml:2:16: dates are not supported here; write it as a string, e.g. "
	         "\"1979-05-27\""},
	        {"[node]\nmix_env = test\n", "t.toml:2:11: expected a value, found 'test'; strings "
	                                     "must be quoted, booleans are true or "
	                                     "false"},
	};
	RUN(cases);
}

#define OFF_HINT "; or \"off\" for no limit"

static void test_rule_unknown_keys_and_types(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[atoms]\n", "t.toml:1:2: atoms: unknown key; did you mean \"atom\"?"},
	        {"[allocators]\n",
	         "t.toml:1:2: allocators: unknown key; did you mean \"allocator\"?"},
	        {"[baselin]\n", "t.toml:1:2: baselin: unknown key; did you mean \"baseline\"?"},
	        {"[processes]\n", "t.toml:1:2: processes: unknown key; did you mean \"process\"?"},
	        {"[ets]\nmax_totl = 1",
	         "t.toml:2:1: ets.max_totl: unknown key; did you mean \"max_total\"?"},
	        {"[ets]\ntables = 1",
	         "t.toml:2:1: ets.tables: unknown key; did you mean \"table\"?"},
	        {"[ets]\nlimit = 1",
	         "t.toml:2:1: ets.limit: unknown key; [ets] takes max_total, max_left_alive, "
	         "left_alive_floor, table"},
	        {"[binary]\nmax_refs = 1",
	         "t.toml:2:1: binary.max_refs: unknown key; [binary] takes max_refs_per_process, "
	         "max_bytes_per_process"},
	        {"[process]\nmax_mailbx = 1",
	         "t.toml:2:1: process.max_mailbx: unknown key; did you mean \"max_mailbox\"?"},
	        {"[process]\nmailbox = 1",
	         "t.toml:2:1: process.mailbox: unknown key; [process] takes max_born, max_mailbox, "
	         "max_memory, max_heap"},
	        {"[atom]\npertest = 1",
	         "t.toml:2:1: atom.pertest: unknown key; did you mean \"per_test\"?"},
	        {"[allocator]\nfloor = 1",
	         "t.toml:2:1: allocator.floor: unknown key; [allocator] takes max_fragmentation, "
	         "waste_floor"},
	        {"[baseline]\nnotes = 'x'",
	         "t.toml:2:1: baseline.notes: unknown key; [baseline] takes path, ref, notes_ref, "
	         "require, skip_ci, max, floor, trend_window, trend_sigma, trend_min"},
	        {"[baseline]\ntrend_windows = 3",
	         "t.toml:2:1: baseline.trend_windows: unknown key; did you mean \"trend_window\"?"},
	        {"ets = 1", "t.toml:1:7: ets: expected a table, got an integer; write [ets] with "
	                    "its keys below it"},
	        {"[[binary]]\n",
	         "t.toml:1:1: binary: expected a table, got an array; write [binary] with its keys "
	         "below it"},
	        {"[baseline]\nrequire = 'yes'",
	         "t.toml:2:11: baseline.require: expected a boolean, got a string; write true or "
	         "false, without quotes"},
	        {"[baseline]\nskip_ci = 0",
	         "t.toml:2:11: baseline.skip_ci: expected a boolean, got an integer; write true or "
	         "false, without quotes"},
	};
	RUN(cases);
}

#define COUNT_FIX(ex) "write a whole number without quotes, e.g. " ex

/* Sizes and counts of the rule tables. */
static void test_rule_value_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        /* sizes that may be off */
	        {"[ets]\nmax_total = true",
	         "t.toml:2:13: ets.max_total: expected a size, got a boolean; " SIZE_FIX OFF_HINT},
	        {"[ets]\nmax_total = \"Off\"",
	         "t.toml:2:13: ets.max_total: \"Off\" is not a size; " SIZE_FIX OFF_HINT},
	        {"[ets]\nmax_total = -1",
	         "t.toml:2:13: ets.max_total: -1 bytes is out of range; " SIZE_RANGE OFF_HINT},
	        {"[binary]\nmax_bytes_per_process = \"10 mb\"",
	         "t.toml:2:25: binary.max_bytes_per_process: unknown unit \"mb\" in \"10 mb\"; use "
	         "B, "
	         "kB, MB, GB (1000^n) or KiB, MiB, GiB (1024^n)" OFF_HINT},
	        {"[process]\nmax_memory = \"100\"",
	         "t.toml:2:14: process.max_memory: \"100\" has no unit; add one of B, kB, MB, GB, "
	         "KiB, "
	         "MiB, GiB, e.g. \"100 MB\" (an integer without quotes means bytes)" OFF_HINT},
	        /* sizes that may not */
	        {"[ets]\nleft_alive_floor = 'off'",
	         "t.toml:2:20: ets.left_alive_floor: \"off\" is not a size; " SIZE_FIX},
	        {"[allocator]\nwaste_floor = 1.5",
	         "t.toml:2:15: allocator.waste_floor: expected a size, got a float; " SIZE_FIX},
	        {"[baseline]\nfloor = \"-1 MB\"",
	         "t.toml:2:9: baseline.floor: \"-1 MB\" is negative; " SIZE_RANGE},
	        /* counts */
	        {"[process]\nmax_born = \"100\"",
	         "t.toml:2:12: process.max_born: expected a whole number, got a string; " COUNT_FIX(
	                 "100") OFF_HINT},
	        {"[process]\nmax_born = 1.5",
	         "t.toml:2:12: process.max_born: expected a whole number, got a float; " COUNT_FIX(
	                 "100") OFF_HINT},
	        {"[process]\nmax_mailbox = -1",
	         "t.toml:2:15: process.max_mailbox: -1 is out of range; use a whole number of at "
	         "least 0, e.g. 10000" OFF_HINT},
	        {"[process]\nmax_mailbox = 4611686018427387904",
	         "t.toml:2:15: process.max_mailbox: 4611686018427387904 is out of range; use a "
	         "whole "
	         "number of at most 4611686018427387903, e.g. 10000" OFF_HINT},
	        {"[binary]\nmax_refs_per_process = [1]",
	         "t.toml:2:24: binary.max_refs_per_process: expected a whole number, got an array; "
	         "" COUNT_FIX("50000") OFF_HINT},
	        {"[ets]\nmax_left_alive = -2", "t.toml:2:18: ets.max_left_alive: -2 is out of "
	                                       "range; use a whole number of at least "
	                                       "0, e.g. 0" OFF_HINT},
	        {"[atom]\nmax_growth = '10 000'",
	         "t.toml:2:14: atom.max_growth: expected a whole number, got a string; " COUNT_FIX(
	                 "10000") OFF_HINT},
	        {"[atom]\nper_test = 'off'",
	         "t.toml:2:12: atom.per_test: expected a whole number, got a string; " COUNT_FIX(
	                 "5")},
	        {"[atom]\nper_test = -1", "t.toml:2:12: atom.per_test: -1 is out of range; use a "
	                                  "whole number of at least 0, "
	                                  "e.g. 5"},
	        {"[baseline]\ntrend_window = 1",
	         "t.toml:2:16: baseline.trend_window: 1 is out of range; use a whole number of at "
	         "least 2, e.g. 10"},
	        {"[baseline]\ntrend_window = 10001", "t.toml:2:16: baseline.trend_window: 10001 is "
	                                             "out of range; use a whole number of at "
	                                             "most 10000, e.g. 10"},
	        {"[baseline]\ntrend_window = 2.0", "t.toml:2:16: baseline.trend_window: expected a "
	                                           "whole number, got a float; " COUNT_FIX("10")},
	};
	RUN(cases);
}

/* Percentages and plain numbers of the rule tables, and the edges that pass. */
static void test_rule_number_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        /* percentages */
	        {"[atom]\nmax_usage = \"101 %\"",
	         "t.toml:2:13: atom.max_usage: 101 % is out of range; use a percentage from 0 to "
	         "100 %, e.g. \"80 %\"" OFF_HINT},
	        {"[allocator]\nmax_fragmentation = 100.5",
	         "t.toml:2:21: allocator.max_fragmentation: 100.5 % is out of range; use a "
	         "percentage from 0 to 100 %, e.g. \"75 %\"" OFF_HINT},
	        {"[allocator]\nmax_fragmentation = \"75\"",
	         "t.toml:2:21: allocator.max_fragmentation: \"75\" has no % sign; write \"75 "
	         "%\"" OFF_HINT},
	        {"[atom]\nmax_usage = -1",
	         "t.toml:2:13: atom.max_usage: -1 % is out of range; " PCT_RANGE OFF_HINT},
	        {"[baseline]\nmax = \"-5 %\"",
	         "t.toml:2:7: baseline.max: \"-5 %\" is negative; " PCT_RANGE},
	        {"[baseline]\ntrend_min = 'off'",
	         "t.toml:2:13: baseline.trend_min: \"off\" is not a percentage; " PCT_FIX},
	        /* plain numbers */
	        {"[baseline]\ntrend_sigma = -1", "t.toml:2:15: baseline.trend_sigma: -1 is out of "
	                                         "range; use a finite number of 0 or "
	                                         "more, e.g. 3.0"},
	        {"[baseline]\ntrend_sigma = inf", "t.toml:2:15: baseline.trend_sigma: inf is out "
	                                          "of range; use a finite number of 0 or "
	                                          "more, e.g. 3.0"},
	        {"[baseline]\ntrend_sigma = nan", "t.toml:2:15: baseline.trend_sigma: nan is out "
	                                          "of range; use a finite number of 0 or "
	                                          "more, e.g. 3.0"},
	        {"[baseline]\ntrend_sigma = '3'", "t.toml:2:15: baseline.trend_sigma: expected a "
	                                          "number, got a string; write a number "
	                                          "without quotes, e.g. 3.0"},
	};
	RUN(cases);

	/* the edges that pass */
	struct config cfg = {0};
	load_ok(&cfg, "atom.max_usage = '100 %'\nallocator.max_fragmentation = 0\n"
	              "baseline.trend_window = 10000\nbaseline.trend_sigma = 0\n"
	              "process.max_mailbox = 4611686018427387903\n");
	assert_true(cfg.rules.atom.max_usage_pct == 100.0);
	assert_true(cfg.rules.allocator.max_fragmentation_pct == 0.0);
	assert_int_equal(cfg.rules.baseline.trend_window, 10000);
	assert_true(cfg.rules.baseline.trend_sigma == 0.0);
	assert_false(signbit(cfg.rules.baseline.trend_sigma));
	assert_int_equal(cfg.rules.process.max_mailbox, INT64_C(4611686018427387903));
	config_clear(&cfg);
	load_ok(&cfg, "baseline.trend_sigma = -0.0\nbaseline.trend_window = 2\n");
	assert_false(signbit(cfg.rules.baseline.trend_sigma));
	config_clear(&cfg);
}

#define PATH_EX "e.g. path = \".gate/baseline.json\""
#define REF_EX "e.g. ref = \"origin/main\""
#define NOTES_EX "e.g. notes_ref = \"refs/notes/gate\""

static void test_baseline_strings(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[baseline]\npath = ''", "t.toml:2:8: baseline.path: must not be empty; " PATH_EX},
	        {"[baseline]\npath = 1",
	         "t.toml:2:8: baseline.path: expected a string, got an integer; " PATH_EX},
	        {"[baseline]\npath = '/tmp/b.json'",
	         "t.toml:2:8: baseline.path: \"/tmp/b.json\" is absolute; write a path inside the "
	         "repository, " PATH_EX},
	        {"[baseline]\npath = '../b.json'", "t.toml:2:8: baseline.path: \"../b.json\" "
	                                           "leaves the repository; write a path inside "
	                                           "it, " PATH_EX},
	        {"[baseline]\npath = 'a/../../b.json'",
	         "t.toml:2:8: baseline.path: \"a/../../b.json\" leaves the repository; write a "
	         "path "
	         "inside it, " PATH_EX},
	        {"[baseline]\npath = 'a/..'", "t.toml:2:8: baseline.path: \"a/..\" leaves the "
	                                      "repository; write a path inside it, "
	                                      "" PATH_EX},
	        {"[baseline]\npath = \"a\\u0000b\"",
	         "t.toml:2:8: baseline.path: contains a NUL character (\\u0000); remove it"},
	        {"[baseline]\nref = ''", "t.toml:2:7: baseline.ref: must not be empty; " REF_EX},
	        {"[baseline]\nref = 'origin main'", "t.toml:2:7: baseline.ref: \"origin main\" is "
	                                            "not a valid git ref: it contains ' '; "
	                                            "" REF_EX},
	        {"[baseline]\nref = 'HEAD~1'", "t.toml:2:7: baseline.ref: \"HEAD~1\" is not a "
	                                       "valid git ref: it contains '~'; " REF_EX},
	        {"[baseline]\nref = 'a..b'", "t.toml:2:7: baseline.ref: \"a..b\" is not a valid "
	                                     "git ref: it contains \"..\"; " REF_EX},
	        {"[baseline]\nref = 'main@{1}'", "t.toml:2:7: baseline.ref: \"main@{1}\" is not a "
	                                         "valid git ref: it contains \"@{\"; "
	                                         "" REF_EX},
	        {"[baseline]\nref = 'origin/'", "t.toml:2:7: baseline.ref: \"origin/\" is not a "
	                                        "valid git ref: it starts or ends with "
	                                        "/; " REF_EX},
	        {"[baseline]\nref = 'a//b'", "t.toml:2:7: baseline.ref: \"a//b\" is not a valid "
	                                     "git ref: it contains \"//\"; " REF_EX},
	        {"[baseline]\nref = 'origin/.main'",
	         "t.toml:2:7: baseline.ref: \"origin/.main\" is not a valid git ref: a part of it "
	         "starts with a dot; " REF_EX},
	        {"[baseline]\nref = 'main.lock'", "t.toml:2:7: baseline.ref: \"main.lock\" is not "
	                                          "a valid git ref: it ends with .lock; "
	                                          "" REF_EX},
	        {"[baseline]\nref = 'main.'", "t.toml:2:7: baseline.ref: \"main.\" is not a valid "
	                                      "git ref: it ends with a dot; " REF_EX},
	        {"[baseline]\nref = \"a\\tb\"",
	         "t.toml:2:7: baseline.ref: \"a\tb\" is not a valid git ref: it contains a control "
	         "character; " REF_EX},
	        {"[baseline]\nnotes_ref = 'gate'", "t.toml:2:13: baseline.notes_ref: \"gate\" is "
	                                           "not a full ref; write it under refs/, "
	                                           "" NOTES_EX},
	        {"[baseline]\nnotes_ref = 'refs/notes/a b'",
	         "t.toml:2:13: baseline.notes_ref: \"refs/notes/a b\" is not a valid git ref: it "
	         "contains ' '; " NOTES_EX},
	        {"[baseline]\nnotes_ref = 'refs/notes/x:y'",
	         "t.toml:2:13: baseline.notes_ref: \"refs/notes/x:y\" is not a valid git ref: it "
	         "contains ':'; " NOTES_EX},
	};
	RUN(cases);

	struct config cfg = {0};
	load_ok(&cfg,
	        "[baseline]\npath = 'a..b/c...json'\nref = 'refs/remotes/origin/release-1.2'\n"
	        "notes_ref = 'refs/notes/gate/ci'\n");
	assert_string_equal(cfg.rules.baseline.path, "a..b/c...json");
	assert_string_equal(cfg.rules.baseline.ref, "refs/remotes/origin/release-1.2");
	assert_string_equal(cfg.rules.baseline.notes_ref, "refs/notes/gate/ci");
	config_clear(&cfg);
}

#define TABLE_FIX "write [[ets.table]] (two brackets) above each table's name and limits"

static void test_ets_table_errors(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
	        {"[ets]\ntable = 1",
	         "t.toml:2:9: ets.table: expected an array of tables, got an integer; " TABLE_FIX},
	        {"[ets.table]\nname = 'x'\nmax_size = 1\n",
	         "t.toml:1:1: ets.table: expected an array of tables, got a table; " TABLE_FIX},
	        {"ets.table = [1]",
	         "t.toml:1:14: ets.table[0]: expected a table, got an integer; " TABLE_FIX},
	        {"[[ets.table]]\nmax_bytes = 1\n", "t.toml:1:1: ets.table[0]: has no name; add "
	                                           "name = \"corpus_*\" (a glob on the ETS "
	                                           "table name)"},
	        {"[[ets.table]]\nname = 'x'\n[[ets.table]]\nname = 'y'\nmax_size = 1\n",
	         "t.toml:1:1: ets.table[0]: sets no limit; add max_bytes, max_size or max_growth"},
	        {"[[ets.table]]\nname = 'x'\nmax_bytes = 'off'\n",
	         "t.toml:1:1: ets.table[0]: sets no limit; add max_bytes, max_size or max_growth"},
	        {"[[ets.table]]\nname = 'x'\nmax_bytes = 1\n[[ets.table]]\nmax_size = 2\nname = "
	         "'x'\n",
	         "t.toml:6:8: ets.table[1].name: \"x\" is already limited by ets.table[0]; merge "
	         "the "
	         "two entries"},
	        {"[[ets.table]]\nname = ''\n",
	         "t.toml:2:8: ets.table[0].name: must not be empty; e.g. name = \"corpus_*\""},
	        {"[[ets.table]]\nname = 5\n",
	         "t.toml:2:8: ets.table[0].name: expected a string, got an integer; e.g. name = "
	         "\"corpus_*\""},
	        {"[[ets.table]]\nnam = 'x'\n",
	         "t.toml:2:1: ets.table[0].nam: unknown key; did you mean \"name\"?"},
	        {"[[ets.table]]\nname = 'x'\nrows = 1\n",
	         "t.toml:3:1: ets.table[0].rows: unknown key; [[ets.table]] takes name, max_bytes, "
	         "max_size, max_growth"},
	        {"[[ets.table]]\nname = 'a'\nmax_size = 1\n[[ets.table]]\nname = 'b'\nmax_size = "
	         "-1\n",
	         "t.toml:6:12: ets.table[1].max_size: -1 is out of range; use a whole number of at "
	         "least 0, e.g. 100000" OFF_HINT},
	        {"[[ets.table]]\nname = 'a'\nmax_growth = -5\n",
	         "t.toml:3:14: ets.table[0].max_growth: -5 % is out of range; " PCT_RANGE OFF_HINT},
	        {"[[ets.table]]\nname = 'a'\nmax_bytes = '2 MB '\nmax_bytes = 3\n",
	         "t.toml:4:1: duplicate key max_bytes: already defined at 3:1"},
	        /* the first problem in file order is the one reported, even before the name */
	        {"[[ets.table]]\nmax_size = true\n",
	         "t.toml:2:12: ets.table[0].max_size: expected a whole number, got a "
	         "boolean; " COUNT_FIX("100000") OFF_HINT},
	};
	RUN(cases);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_duration_errors),
	        cmocka_unit_test(test_size_errors),
	        cmocka_unit_test(test_percent_errors),
	        cmocka_unit_test(test_unknown_keys),
	        cmocka_unit_test(test_wrong_types_and_strings),
	        cmocka_unit_test(test_toml_errors_are_prefixed),
	        cmocka_unit_test(test_rule_unknown_keys_and_types),
	        cmocka_unit_test(test_rule_value_errors),
	        cmocka_unit_test(test_rule_number_errors),
	        cmocka_unit_test(test_baseline_strings),
	        cmocka_unit_test(test_ets_table_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

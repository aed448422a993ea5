/* tests/fuzz/fuzz.h: what the libFuzzer targets share: a reader that turns the fuzzer's bytes
 * into numbers and hostile strings, and a builder of the model (findings, test results, run
 * metadata, snapshots) from those bytes, so that a target for another writer is one small
 * file: build the model with fuzz_model_make, hand it to the writer, check its output.
 *
 * Built only by `make fuzz` (clang, -fsanitize=fuzzer,address,undefined); see
 * tests/fuzz/README.md. Every target aborts (a crash to libFuzzer) when its oracle fails.
 */
#ifndef GATE_TESTS_FUZZ_H
#define GATE_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "ci/report/junit.h"
#include "model/finding.h"
#include "model/tests.h"

/* The fuzzer's input, consumed from the front. Past the end every read gives 0 / "". */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
	int longs; /* long names made so far: at most 4 an input, the first may be 100 kB */
};

uint8_t fuzz_u8(struct fuzz_in *in);
int64_t fuzz_i64(struct fuzz_in *in);
/* A malloc'd NUL-terminated string: bytes from the input (invalid UTF-8, controls, ANSI
 * escapes and all), or one of the known-hostile texts ("]]>", "</script>", "\x1b[2J",
 * surrogates, overlong forms, a 100 000-byte name, ...), or a mix. NULL sometimes, where
 * the model allows NULL (nullable true). Aborts when out of memory. */
char *fuzz_str(struct fuzz_in *in, int nullable);

/* Everything a report writer is given. */
struct fuzz_model {
	struct findings findings;
	struct test_run run;
	struct report_data meta; /* the JUnit file's fields; its strings are owned here */
	struct snapshot snap;
	char *strs[8]; /* the meta strings, freed by fuzz_model_clear */
};

/* Builds a model from the input: up to 8 findings, 12 test results, one snapshot with up to
 * 8 processes, groups, tables and allocators (figures in the range the decoders let
 * through), and the run's metadata. */
void fuzz_model_make(struct fuzz_model *m, const uint8_t *data, size_t size);
void fuzz_model_clear(struct fuzz_model *m);

/* 0 when s[0..n) is valid UTF-8 (no surrogates, no overlong forms); with terminal, also no
 * C0 control but '\n', no DEL and no C1 control. Else -1 with *at the offending offset. */
int fuzz_utf8_scan(const unsigned char *s, size_t n, size_t *at, int terminal);

/* Aborts with a message on stderr: what libFuzzer reports as a crash. */
_Noreturn void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

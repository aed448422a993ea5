/* ci/store/baseline_file.h: the baseline file (.gate/baseline.json) and the history summary (a git
 * note), as JSON with jansson: deterministic output, strict reading, atomic writes.
 *
 * The file, format version 1 (keys sorted, 2-space indent, integers only, trailing newline):
 *   { "allocators": { "binary_alloc": { "blocks_size": N, "carriers_size": N }, ... },
 *     "atom_count": N, "commit": "hex" | null, "elixir": "1.14.0" | null,
 *     "ets": { "TABLE": { "memory": N, "size": N }, ... }, "gate": "0.1.0" | null,
 *     "memory": { "atom": N, "binary": N, ... }, "otp": "25" | null, "process_count": N,
 *     "test_count": N, "timestamp": "2026-12-02T12:00:00Z", "version": 1 }
 * The summary is the same object on one line without "allocators" and "ets".
 * Readers ignore keys they do not know (and memory categories this gate does not have), so
 * version 1 can grow; they refuse a higher "version" (written by a newer gate).
 *
 * Errors: functions return BASELINE_OK (0) or a negative enum baseline_rc, with err holding
 * "NAME: what is wrong" (err may be NULL). Ownership: **out strings are malloc'd and the
 * caller's to free; struct baseline *out is filled in a zeroed struct the caller clears.
 */
#ifndef GATE_CI_STORE_BASELINE_FILE_H
#define GATE_CI_STORE_BASELINE_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "rules/baseline.h"

/* Cap on a baseline file or note read from outside. */
#define BASELINE_FILE_MAX (16 * 1024 * 1024)

enum baseline_rc {
	BASELINE_OK = 0,
	BASELINE_ERROR = -1,   /* could not read/write/parse: the caller exits 2 */
	BASELINE_MISSING = -2, /* no baseline at that place: not an error for `gate run` */
};

/* Flags for the writers (baseline_write, baseline_git_commit). */
enum baseline_write_flags {
	/* replace an existing file even when it is not a baseline this gate can read (corrupt,
	 * truncated, from a newer gate); without it such a file is never overwritten */
	BASELINE_WRITE_FORCE = 1u << 0,
};

/* The file's text: deterministic for equal input, ends with "\n". *out is malloc'd and
 * NUL-terminated, *len its length (len may be NULL). Fails on allocation failure or a
 * string that is not valid UTF-8 (an ETS table name, say). */
int baseline_format(char **out, size_t *len, const struct baseline *b, char *err, size_t errlen);

/* The one-line summary stored as a git note (no ETS tables, no allocators; ends with "\n"). */
int baseline_summary_format(char **out, const struct baseline *b, char *err, size_t errlen);

/* The baseline as a JSON object, the very content baseline_format writes (baseline_format
 * prints it), so that a JSON writer can embed it without printing and parsing it back. A new
 * reference, the caller's to json_decref; NULL with err set when b cannot be written (the
 * same refusals and messages as baseline_format). */
json_t *baseline_json(const struct baseline *b, char *err, size_t errlen);
/* The same for the summary (baseline_summary_format's content). */
json_t *baseline_summary_json(const struct baseline *b, char *err, size_t errlen);

/* Parses a baseline file's text (len bytes, need not be NUL-terminated; at most
 * BASELINE_FILE_MAX). name says where the text is from in messages ("origin/main:.gate/
 * baseline.json"). Refuses invalid JSON (with line:column), truncated text, wrong types,
 * negative figures, a missing or higher "version". On failure out is left zeroed. */
int baseline_parse(struct baseline *out, const char *text, size_t len, const char *name, char *err,
                   size_t errlen);

/* Parses a summary (a note): as baseline_parse, "ets" and "allocators" not required. */
int baseline_summary_parse(struct baseline *out, const char *text, size_t len, const char *name,
                           char *err, size_t errlen);

/* Reads and parses the file at path. BASELINE_MISSING (err: "no baseline at PATH") when
 * path does not exist; BASELINE_ERROR when it is a directory or not a regular file, larger
 * than BASELINE_FILE_MAX, unreadable or not a valid baseline. */
int baseline_read_file(struct baseline *out, const char *path, char *err, size_t errlen);

/* Writes b to path atomically (temp file beside it, fsync, rename, fsync of the directory),
 * creating missing parent directories. An existing path must be a regular file holding a
 * baseline this gate can read, unless flags has BASELINE_WRITE_FORCE; a directory is
 * always refused. On failure the temp file is removed and path is left as it was. */
int baseline_write(const char *path, const struct baseline *b, unsigned flags, char *err,
                   size_t errlen);

/* Checks that the bytes about to be replaced (text, len; the existing file or the blob at
 * HEAD) are a baseline this gate can read, so that a newer gate's file or one edited into
 * something else is never overwritten silently. BASELINE_OK, or BASELINE_ERROR with err
 * saying why and how to force it. */
int baseline_check_replaceable(const char *text, size_t len, const char *name, char *err,
                               size_t errlen);

#endif

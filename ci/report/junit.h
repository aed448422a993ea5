/* ci/report/junit.h: the JUnit XML report: memory findings and ExUnit results, for CI readers.
 *
 * The report validates against the Jenkins xUnit schema (junit-10.xsd, tests/junit/validate.sh)
 * once the testcase file/line attributes, which GitLab and GitHub readers use, are removed. Strings
 * from the test suite are made safe first: invalid UTF-8 becomes U+FFFD, characters XML 1.0
 * forbids are written visibly as "\xNN", ANSI colour escapes are dropped, failure bodies are
 * capped at JUNIT_BODY_MAX bytes. Nothing here keeps a pointer to its arguments.
 */
#ifndef GATE_CI_REPORT_JUNIT_H
#define GATE_CI_REPORT_JUNIT_H

#include <stddef.h>
#include <stdint.h>

#include "model/finding.h"
#include "model/tests.h"
#include "rules/repeat.h"

/* Cap on the text of one <failure>/<error>/<skipped> body; longer text is cut and says so. */
#define JUNIT_BODY_MAX (64 * 1024)
/* Cap on a message="..." attribute (the first line of the message). */
#define JUNIT_ATTR_MAX 1024

/* One node of a cluster run (gate run --cluster): its own gate.memory suite. */
struct junit_node {
	const char *name;                /* the node, e.g. app_b@127.0.0.1 */
	const struct findings *findings; /* its rules; may be NULL */
	const char *error;               /* non-NULL when the node failed or left the run: an
	                                    error testcase "gate.node[NAME]" / "node" says this */
	int partition; /* `gate merge`: the suite is partition k's (a property mix.test.partition
	                  of the suite); 0: a cluster node */
	int64_t seed;  /* and that partition's ExUnit seed (the run's is not used then) */
};

struct junit_meta {
	const char *hostname; /* <testsuite hostname>; NULL: this machine's name */
	int64_t timestamp; /* unix seconds of the run start, written as UTC "2026-12-02T12:00:00" */
	const char *project;  /* <testsuites name="gate: PROJECT">; NULL: name="gate" */
	const char *node;     /* node name, a <property> of the gate.memory suite; may be NULL */
	double memory_time_s; /* time attributed to the gate.memory suite */
	const char
	        *error; /* non-NULL when gate could not finish: a gate.run suite with one
	                   testcase (classname "gate.run", name "gate") whose <error> says this */
	const struct junit_node *nodes; /* cluster runs: one suite "gate.memory[NODE]" per node,
	                                   classnames "gate.memory.RULE[NODE]", in place of the
	                                   one gate.memory suite (findings is then not used) */
	size_t nnodes;
	const struct repeat_data
	        *repeat; /* --repeat: per-run figures as gate.memory's <properties>
	                    (gate.repeat.runs, gate.repeat.run.K.CAT[.delta]); may be NULL */
	const char
	        *file_root; /* testcases' file= are made relative to this directory (the git
	                       repository's root, as CI reporters link them); NULL: as recorded */
};

/* Writes the report to path atomically: creates the missing parent directories, writes a
 * temp file beside path, fsyncs it and renames it over path. findings and run may be NULL
 * (nothing to report); meta may be NULL (all defaults).
 * Returns 0, or -1 with err holding "PATH: what failed: why" (err may be NULL). On failure the
 * temp file is removed and an existing file at path is left as it was. */
int junit_write(const char *path, const struct findings *findings, const struct test_run *run,
                const struct junit_meta *meta, char *err, size_t errlen);

#endif

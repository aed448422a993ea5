/* gate/run/confirm_step.c: the culprit's test file run alone (gate/run/confirm_step.h). */
#include "gate/run/confirm_step.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate/node/clock.h"
#include "gate/node/signals.h"
#include "gate/run/pipeline.h"
#include "model/figures.h"
#include "model/verdict.h"
#include "rules/reproduce.h"

/* The confirming run's own runs: run 1 warms up, runs 2 and 3 are judged. */
#define CONFIRM_RUNS 3
/* A confirming gate that was asked to stop gets this long to stop its node. */
#define CONFIRM_STOP_MS 30000
/* Set in the confirming gate's environment: it never confirms in its turn. */
#define CONFIRM_ENV "GATE_CONFIRMING"

static bool is_failing(const struct finding *f)
{
	return f->verdict == VERDICT_FAIL && !f->warned && !(f->show & SHOW_MORE);
}

/* Adds text to every failing finding (with culprit: those naming it only). */
static int tell(struct run *r, const char *culprit, const char *text)
{
	for (size_t i = 0; i < r->findings.count; i++) {
		struct finding *f = &r->findings.items[i];
		if (!is_failing(f) ||
		    (culprit && (!f->culprit || strcmp(f->culprit, culprit) != 0)))
			continue;
		if (finding_part_add(f, PART_CONFIRM, false, "; ", text) < 0) {
			snprintf(r->err, sizeof(r->err), "out of memory adding the confirmation");
			return -1;
		}
	}
	return 0;
}

/* Why it does not run, NULL when it does; *culprit the one culprit module, *file its file. */
static const char *why_not(const struct run *r, const char **culprit, const char **file)
{
	*culprit = *file = NULL;
	if (r->opts->attach)
		return "--attach (a node gate did not start)";
	if (r->partitions > 0)
		return "a partition of a --partitions run (merge them, then run the culprit alone)";
	bool rebar = r->work == &rebar_mode_workload;
	if (r->work != &suite_mode_workload && !rebar)
		return "not a suite's tests (mix test, or a rebar3 project's EUnit and Common "
		       "Test)";
	for (size_t i = 0; i < r->findings.count; i++) {
		const struct finding *f = &r->findings.items[i];
		if (!is_failing(f))
			continue;
		if (!f->culprit)
			continue;
		if (*culprit && strcmp(*culprit, f->culprit) != 0)
			return "the findings name more than one culprit test module";
		*culprit = f->culprit;
		if (f->file && !*file)
			*file = f->file;
	}
	if (!*culprit)
		return "no culprit test module is named";
	/* a rebar3 project's culprit is selected by its name (--module, --suite) */
	if (!rebar &&
	    (!*file || strlen(*file) < 5 || strcmp(*file + strlen(*file) - 4, ".exs") != 0))
		return "the culprit's test file is not known";
	return NULL;
}

/* The module a culprit's growth needs: the one that started what it grew (said in its
 * finding: "started by M)"), else the module that ran just before it. */
static void needs_text(char *buf, size_t len, const struct run *r, const char *culprit)
{
	static const char tag[] = "started by ";
	buf[0] = '\0';
	for (size_t i = 0; i < r->findings.count && !buf[0]; i++) {
		const struct finding *f = &r->findings.items[i];
		const char *s = is_failing(f) && f->message ? strstr(f->message, tag) : NULL;
		while (s && strncmp(s + strlen(tag), "test module ", 12) == 0)
			s = strstr(s + 1, tag);
		const char *end = s ? strchr(s, ')') : NULL;
		if (s && end && f->culprit && strcmp(f->culprit, culprit) == 0 &&
		    !memchr(s, ';', (size_t)(end - s)) && !memchr(s, '"', (size_t)(end - s)))
			snprintf(buf, len, "%.*s", (int)(end - s - (int)strlen(tag)),
			         s + strlen(tag));
	}
	for (size_t i = 1; i < r->tests.nmodules && !buf[0]; i++)
		if (r->tests.modules[i].module &&
		    strcmp(r->tests.modules[i].module, culprit) == 0) {
			const char *m = r->tests.modules[i - 1].module;
			snprintf(buf, len, "%s", strncmp(m, "Elixir.", 7) == 0 ? m + 7 : m);
		}
	if (!buf[0])
		snprintf(buf, len, "the test modules that ran before it");
}

/* Runs the confirming gate; its exit status, or -1 with why (a timeout, it could not start). */
static int run_child(struct run *r, char *const *argv, const char *log, char *why, size_t len)
{
	/* this very gate: its path read before the fork (a tool that runs gate, valgrind,
	 * answers it with gate's own path, where exec of /proc/self/exe would be the tool) */
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(why, len, "it could not start (its path: %s)", strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, len, "it could not start (%s)", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		setenv(CONFIRM_ENV, "1", 1);
		/* its reports are its own: nothing of it reaches the CI's */
		unsetenv("GITHUB_STEP_SUMMARY");
		unsetenv("GITHUB_OUTPUT");
		unsetenv("GITHUB_ACTIONS");
		execv(exe, argv);
		_exit(127);
	}
	long long deadline = clock_ms() + r->cfg.confirm_timeout_ms;
	long long stop_by = 0;
	int st;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			snprintf(why, len, "it was lost (%s)", strerror(errno));
			return -1;
		}
		long long now = clock_ms();
		if (!stop_by && (now > deadline || signals_caught)) {
			kill(pid, SIGTERM);
			stop_by = now + CONFIRM_STOP_MS;
		} else if (stop_by && now > stop_by) {
			kill(pid, SIGKILL);
			stop_by = now + 3600000;
		}
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (stop_by) {
		snprintf(why, len, "%s",
		         signals_caught ? "gate was interrupted"
		                        : "it ran past [run] confirm_timeout");
		return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The category f's structure is said in: the first it explains bytes in of ets, processes,
 * atoms, code, then binary (a table's rows or a process's heap hold binaries too, but the
 * structure is the table or the process); MEM_CAT_COUNT when it explains none. */
static enum mem_cat narrowest(const struct finding *f)
{
	static const enum mem_cat order[] = {MEM_ETS, MEM_PROCESSES_USED, MEM_ATOM_USED, MEM_CODE,
	                                     MEM_BINARY};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (f->explains[order[i]] > 0)
			return order[i];
	return MEM_CAT_COUNT;
}

/* How category cat grew in the confirming run's first (warm-up) run: its iterations' run 1
 * less their before; -1 when they do not say. */
static int64_t warm_growth(json_t *root, enum mem_cat cat)
{
	json_t *it = json_object_get(root, "iterations");
	json_t *m0 = json_object_get(json_array_get(it, 0), "memory");
	json_t *m1 = json_object_get(json_array_get(it, 1), "memory");
	json_t *a = json_object_get(m0, mem_cat_name(cat)),
	       *b = json_object_get(m1, mem_cat_name(cat));
	if (!json_is_integer(a) || !json_is_integer(b))
		return -1;
	return (int64_t)(json_integer_value(b) - json_integer_value(a));
}

/* What the confirming run said of f's structure: 1 it grew in each judged run (*grew: by how
 * much in each), 2 it grew in the warm-up run only (*grew: by how much, its narrowest
 * category's growth: at least half of what it grew in the first run), 0 it did not grow,
 * -1 its result could not be read. */
static int child_verdict(const char *json, const struct finding *f, int64_t *grew)
{
	json_error_t e;
	json_t *root = json_load_file(json, 0, &e);
	if (!root)
		return -1;
	json_t *fs = json_object_get(root, "findings");
	int rc = json_is_array(fs) ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < json_array_size(fs); i++) {
		json_t *o = json_array_get(fs, i);
		const char *v = json_string_value(json_object_get(o, "verdict"));
		const char *key = json_string_value(json_object_get(o, "structure_key"));
		const char *rule = json_string_value(json_object_get(o, "rule"));
		const char *subject = json_string_value(json_object_get(o, "subject"));
		if (!v || strcasecmp(v, "fail") != 0)
			continue;
		bool same = f->structure_key ? key && strcmp(key, f->structure_key) == 0
		                             : rule && subject && f->rule && f->subject &&
		                                       strcmp(rule, f->rule) == 0 &&
		                                       strcmp(subject, f->subject) == 0;
		if (same) {
			*grew = json_integer_value(json_object_get(o, "delta")) /
			        (CONFIRM_RUNS - 1);
			rc = 1;
		}
	}
	enum mem_cat cat = narrowest(f);
	if (rc == 0 && cat != MEM_CAT_COUNT) {
		int64_t w = warm_growth(root, cat);
		if (w > 0 && w >= f->explains[cat] / 2) {
			*grew = w;
			rc = 2;
		}
	}
	json_decref(root);
	return rc;
}

/* Runs it and says what it found, in every failing finding of the culprit. */
static int confirm_run(struct run *r, const char *culprit, const char *file)
{
	char dir[PATH_MAX + 32], json[PATH_MAX + 64], junit[PATH_MAX + 64], log[PATH_MAX + 64];
	char timeout[32], why[256], text[2048], needs[512];
	snprintf(dir, sizeof(dir), "%s/_build/gate/confirm", r->project);
	char parent[PATH_MAX + 32];
	snprintf(parent, sizeof(parent), "%s/_build/gate", r->project);
	(void)mkdir(parent, 0755);
	(void)mkdir(dir, 0755);
	snprintf(json, sizeof(json), "%s/run.json", dir);
	snprintf(junit, sizeof(junit), "%s/junit.xml", dir);
	snprintf(log, sizeof(log), "%s/gate.log", dir);
	(void)unlink(json);
	snprintf(timeout, sizeof(timeout), "%d",
	         r->cfg.confirm_timeout_ms < 1000 ? 1 : r->cfg.confirm_timeout_ms / 1000);
	/* the culprit alone, as the reproduce line selects it (rules/reproduce.h) */
	enum reproduce_runner runner =
	        r->work == &rebar_mode_workload ? REPRODUCE_REBAR : REPRODUCE_MIX;
	char selbuf[PATH_MAX + 64];
	const char *sel[2];
	size_t nsel =
	        reproduce_select(runner, r->project, culprit, file, 0, selbuf, sizeof(selbuf), sel);
	const char *rel = selbuf; /* what the texts name: the test file, or the module */
	const char *fixed[] = {"gate", "run",    "-C", r->project, "-q",  "--repeat",
	                       "3",    "--json", json, "--junit",  junit, "--test-timeout",
	                       timeout};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
	char **argv = calloc(nfixed + r->opts->ntest_args + 12, sizeof(*argv));
	if (!argv) {
		snprintf(r->err, sizeof(r->err), "out of memory confirming the culprit");
		return -1;
	}
	size_t n = 0;
	for (size_t i = 0; i < nfixed; i++)
		argv[n++] = (char *)fixed[i];
	const char *opt[][2] = {{"-c", r->opts->config_path},
	                        {"--runner", r->opts->runner},
	                        {"--elixir", r->opts->elixir},
	                        {"--erl", r->opts->erl}};
	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (opt[i][1]) {
			argv[n++] = (char *)opt[i][0];
			argv[n++] = (char *)opt[i][1];
		}
	argv[n++] = "--";
	for (size_t i = 0; i < nsel; i++)
		argv[n++] = (char *)sel[i];
	for (size_t i = 0; i < r->opts->ntest_args;) {
		size_t skip =
		        reproduce_selecting(runner, r->opts->test_args, r->opts->ntest_args, i);
		if (skip)
			i += skip;
		else
			argv[n++] = r->opts->test_args[i++];
	}
	argv[n] = NULL;
	run_progress(r, "confirming: %s alone in a fresh node, --repeat %d", rel, CONFIRM_RUNS);
	long long t0 = clock_ms();
	int status = run_child(r, argv, log, why, sizeof(why));
	free(argv);
	run_progress(r, "confirming: done in %.1f s (exit %d)", (double)(clock_ms() - t0) / 1000.0,
	             status);
	if (status < 0 || status >= 2) {
		if (status >= 2)
			snprintf(why, sizeof(why), "it could not run (exit %d, see %s)", status,
			         log);
		snprintf(text, sizeof(text), "not confirmed alone: %s", why);
		return tell(r, culprit, text);
	}
	needs_text(needs, sizeof(needs), r, culprit);
	for (size_t i = 0; i < r->findings.count; i++) {
		struct finding *f = &r->findings.items[i];
		if (!is_failing(f) || !f->culprit || strcmp(f->culprit, culprit) != 0)
			continue;
		int64_t growth = 0;
		int v = child_verdict(json, f, &growth);
		char grew[32];
		model_bytes_format(grew, sizeof(grew), growth);
		const char *what = f->structure ? f->structure : f->subject ? f->subject : "it";
		if (v == 1)
			snprintf(text, sizeof(text),
			         "confirmed alone: %s grows %s by +%s in each run", rel, what,
			         grew);
		else if (v == 2)
			snprintf(text, sizeof(text),
			         "confirmed alone, once: %s grows %s in its first run only (%s "
			         "+%s), "
			         "not in the %d runs after it: a growth that stops (a table or a "
			         "state "
			         "filled once per key), not one with every run",
			         rel, what, mem_cat_name(narrowest(f)), grew, CONFIRM_RUNS - 1);
		else if (v == 0)
			snprintf(text, sizeof(text),
			         "not reproduced alone: it needs what ran before it (%s)", needs);
		else
			snprintf(text, sizeof(text),
			         "not confirmed alone: its result is unreadable (%s)", json);
		if (finding_part_add(f, PART_CONFIRM, false, "; ", text) < 0) {
			snprintf(r->err, sizeof(r->err), "out of memory adding the confirmation");
			return -1;
		}
	}
	return 0;
}

int confirm_step(struct run *r)
{
	if (!(r->opts->confirm || r->cfg.confirm) || getenv(CONFIRM_ENV))
		return 0;
	struct verdict_tally vt = model_verdict_tally(&r->findings, &r->tests);
	if (vt.rules == 0)
		return 0; /* no failing memory rule: nothing to confirm, nothing spent */
	const char *culprit, *file;
	const char *no = why_not(r, &culprit, &file);
	if (no) {
		char text[512];
		snprintf(text, sizeof(text), "confirm: skipped, %s", no);
		run_progress(r, "%s", text);
		return tell(r, NULL, text);
	}
	/* the first run's node is not needed any more: the confirming one gets the machine */
	session_end(&r->ses);
	return confirm_run(r, culprit, file);
}

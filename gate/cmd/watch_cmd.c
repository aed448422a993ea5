/* gate/cmd/watch_cmd.c: `gate watch --attach NODE`: the production monitoring pattern for
 * staging and soak nodes.
 *
 * Every interval one light snapshot (erlang:memory and the system counts: no GC, no walk
 * over the processes) becomes one line of JSON (stdout or --out, appended) or the whole
 * --format openmetrics file (Prometheus text, replaced atomically each time, for
 * node_exporter's textfile collector). A category above its rolling average by the margin
 * (rules/watch_alert.h) is an alert: a line on stderr and, at most once per window, a
 * drill-down (the deep snapshot without GC: the top processes and ETS tables) on stderr and
 * in the JSON line. The probe is loaded with its watchdog, as for `gate run --attach`: it is
 * removed at the end, on SIGINT/SIGTERM, and by the watchdog when gate is killed. A sample
 * that times out is reported and skipped, and its reply, should it come later, is dropped
 * (every reply carries its call's reference) and counted in each line's "late", never read as
 * another sample's; a broken connection ends the watch (exit 2), or with
 * --reconnect is a line too, and gate connects again (the probe loaded afresh) at each next
 * sample until the node answers: every sample number has its line either way.
 * Exit: 0 no alert, 1 alerts (or at the first with --exit-on-alert), 2 could not run,
 * 128+signal when interrupted.
 */
#include "gate/cmd/watch_cmd.h"

#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/atomic.h"
#include "gate/config/interval.h"
#include "gate/config/units.h"
#include "gate/error.h"
#include "gate/exit.h"
#include "gate/node/clock.h"
#include "gate/node/signals.h"
#include "gate/probe/session.h"
#include "model/figures.h"
#include "model/snapshot.h"
#include "rules/watch_alert.h"

static const char help[] =
        "usage: gate watch --attach NODE [--cookie-file F] [options]\n"
        "\n"
        "Watches a running node (staging, a soak test, production): every --interval one light\n"
        "snapshot (erlang:memory and process, ETS table, atom and port counts; no GC, no walk\n"
        "over processes) as one line of JSON, or as Prometheus text for node_exporter's\n"
        "textfile collector. A category above its rolling average by --margin (and --floor) is\n"
        "an alert: a line on stderr with a drill-down (top processes and ETS tables, taken at\n"
        "most once per window). The probe is removed when gate stops, even when killed.\n"
        "\n"
        "options:\n"
        "      --attach NODE       the node, name@host (long or short names)\n"
        "      --cookie-file F     its cookie (else $GATE_COOKIE, else ~/.erlang.cookie)\n"
        "      --interval DUR      between samples (default 60s; e.g. 250ms, 5s, 2m)\n"
        "      --count N           stop after N samples\n"
        "      --for DUR           stop after this long (e.g. 24h); default: until interrupted\n"
        "      --out FILE          JSON Lines appended to FILE (default stdout); with\n"
        "                          --format openmetrics the file replaced at every sample\n"
        "      --format F          jsonl (default) or openmetrics (needs --out)\n"
        "      --window N          samples in the rolling average (default 10)\n"
        "      --margin PCT        alert above the average by this percent (default 20)\n"
        "      --floor SIZE        ... and by more than this many bytes, e.g. 1000000 or 1MB\n"
        "                          (default 1000000)\n"
        "      --exit-on-alert     stop at the first alert (exit 1)\n"
        "      --top N             processes and tables in a drill-down (default 5)\n"
        "      --timeout DUR       one sample's limit (default 10s); a late sample is skipped,\n"
        "                          its reply dropped when it comes and counted (\"late\")\n"
        "      --reconnect         a broken connection (the node restarted or dropped gate)\n"
        "                          does not end the watch: each sample until the node is back\n"
        "                          is a line with \"error\" and \"connected\": false, and gate\n"
        "                          connects again at every sample (the window starts afresh)\n"
        "  -q, --quiet             no progress lines\n"
        "  -h, --help              this help\n"
        "\n"
        "examples:\n"
        "  gate watch --attach app@10.0.0.5 --interval 60s --for 24h --out watch.jsonl\n"
        "  gate watch --attach app@host --format openmetrics \\\n"
        "             --out /var/lib/node_exporter/textfile/gate.prom\n"
        "exit codes: 0 no alert, 1 an alert, 2 could not run, 130/143 interrupted\n";

struct watch_opts {
	const char *attach, *cookie_file, *out;
	bool openmetrics, exit_on_alert, quiet, reconnect;
	int64_t interval_ms, for_ms, timeout_ms, floor;
	long count, window, top;
	double margin;
};

static long long wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int usage(const char *fmt, const char *arg)
{
	return gate_usage_error("watch ", fmt, arg);
}

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static json_t *mem_json(const struct snapshot *s)
{
	json_t *o = json_object();
	for (int c = 0; o && c < MEM_CAT_COUNT; c++)
		if (s->have[c])
			json_object_set_new(o, mem_cat_name((enum mem_cat)c),
			                    json_integer((json_int_t)s->mem[c]));
	return o;
}

static int by_memory(const void *a, const void *b)
{
	int64_t x = ((const struct proc_info *)a)->memory,
	        y = ((const struct proc_info *)b)->memory;
	return x < y ? 1 : x > y ? -1 : 0;
}

static int ets_by_memory(const void *a, const void *b)
{
	int64_t x = ((const struct ets_info *)a)->memory, y = ((const struct ets_info *)b)->memory;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Text from the node for the terminal: control characters become '?'. */
static void safe(FILE *out, const char *s)
{
	for (; s && *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/* The drill-down: the deep snapshot's top processes and tables, on stderr and as JSON. */
static json_t *drilldown(struct snapshot *d, long top, const char *node)
{
	char b[32];
	qsort(d->procs, d->nprocs, sizeof(*d->procs), by_memory);
	qsort(d->ets, d->nets, sizeof(*d->ets), ets_by_memory);
	json_t *o = json_object(), *ps = json_array(), *ts = json_array();
	fprintf(stderr, "gate watch: drill-down of %s: top processes by memory:\n", node);
	for (size_t i = 0; i < d->nprocs && i < (size_t)top; i++) {
		const struct proc_info *p = &d->procs[i];
		model_bytes_format(b, sizeof(b), p->memory);
		fputs("    ", stderr);
		safe(stderr, p->name ? p->name : p->initial_call);
		fputs(" (", stderr);
		safe(stderr, p->pid);
		fprintf(stderr, ") %s, mailbox %lld\n", b, (long long)p->message_queue_len);
		json_array_append_new(ps, json_pack("{s:s?, s:s?, s:s?, s:I, s:I, s:I}", "pid",
		                                    p->pid, "name", p->name, "initial_call",
		                                    p->initial_call, "memory",
		                                    (json_int_t)p->memory, "message_queue_len",
		                                    (json_int_t)p->message_queue_len, "bin_bytes",
		                                    (json_int_t)p->bin_bytes));
	}
	fprintf(stderr, "gate watch: drill-down of %s: largest ETS tables:\n", node);
	for (size_t i = 0; i < d->nets && i < (size_t)top; i++) {
		const struct ets_info *t = &d->ets[i];
		model_bytes_format(b, sizeof(b), t->memory);
		fputs("    ", stderr);
		safe(stderr, t->name);
		fprintf(stderr, ", %lld rows, %s, owner ", (long long)t->size, b);
		safe(stderr, t->owner_name ? t->owner_name : t->owner_pid);
		fputc('\n', stderr);
		json_array_append_new(ts, json_pack("{s:s?, s:I, s:I, s:s?, s:s?}", "name", t->name,
		                                    "size", (json_int_t)t->size, "memory",
		                                    (json_int_t)t->memory, "owner_pid",
		                                    t->owner_pid, "owner_name", t->owner_name));
	}
	json_object_set_new(o, "processes", ps);
	json_object_set_new(o, "ets", ts);
	return o;
}

/* A label value for Prometheus text: backslash, double quote and newline escaped. */
static void prom_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*s, f);
	}
}

/* The whole exposition for one sample, replaced atomically. */
static int write_openmetrics(const char *path, const struct snapshot *s, const char *node,
                             const struct watch_alert *al, size_t nal, long alerts_total, char *err,
                             size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		errtext_set(err, errlen, NULL, "%s: out of memory", path);
		return -1;
	}
	fputs("# HELP erlang_memory_bytes erlang:memory() by category, taken by gate watch (no "
	      "GC).\n# TYPE erlang_memory_bytes gauge\n",
	      f);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		if (!s->have[c])
			continue;
		fputs("erlang_memory_bytes{node=\"", f);
		prom_label(f, node);
		fprintf(f, "\",category=\"%s\"} %lld\n", mem_cat_name((enum mem_cat)c),
		        (long long)s->mem[c]);
	}
	static const struct {
		const char *name, *help;
		size_t off;
	} counts[] = {
	        {"erlang_process_count", "processes alive",
	         offsetof(struct snapshot, process_count)},
	        {"erlang_ets_count", "ETS tables", offsetof(struct snapshot, ets_count)},
	        {"erlang_atom_count", "atoms", offsetof(struct snapshot, atom_count)},
	        {"erlang_port_count", "ports", offsetof(struct snapshot, port_count)},
	};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		fprintf(f, "# HELP %s %s.\n# TYPE %s gauge\n%s{node=\"", counts[i].name,
		        counts[i].help, counts[i].name, counts[i].name);
		prom_label(f, node);
		fprintf(f, "\"} %lld\n",
		        (long long)*(const int64_t *)((const char *)s + counts[i].off));
	}
	fputs("# HELP gate_watch_alert 1 when the category is above its rolling average by the "
	      "margin in this sample.\n# TYPE gate_watch_alert gauge\n",
	      f);
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		bool on = false;
		for (size_t i = 0; i < nal; i++)
			on |= al[i].cat == (enum mem_cat)c;
		if (!s->have[c])
			continue;
		fputs("gate_watch_alert{node=\"", f);
		prom_label(f, node);
		fprintf(f, "\",category=\"%s\"} %d\n", mem_cat_name((enum mem_cat)c), on);
	}
	fputs("# HELP gate_watch_alerts_total Alerts since gate watch started.\n"
	      "# TYPE gate_watch_alerts_total counter\ngate_watch_alerts_total{node=\"",
	      f);
	prom_label(f, node);
	fprintf(f, "\"} %ld\n", alerts_total);
	if (fclose(f) != 0) {
		free(buf);
		errtext_set(err, errlen, NULL, "%s: out of memory", path);
		return -1;
	}
	int rc = atomic_file_replace_report(path, buf, len, err, errlen);
	free(buf);
	return rc;
}

static int write_line(FILE *out, json_t *line, char *err, size_t errlen, const char *path)
{
	char *text = json_dumps(line, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	int rc = fprintf(out, "%s\n", text) < 0 || fflush(out) != 0 ? -1 : 0;
	free(text);
	if (rc < 0)
		errtext_set(err, errlen, NULL, "%s: %s", path ? path : "stdout", strerror(errno));
	return rc;
}

/* One sample that came back: its line, the alerts against the rolling window, a drill-down
 * on an alert (at most one per window). Returns 0, or -1 with err (the openmetrics file). */
static int watch_sample(const struct watch_opts *o, struct session *ses, struct watch_window *win,
                        const struct snapshot *s, json_t *line, long *alerts, long *since_drill,
                        char *err, size_t errlen)
{
	char serr[1024];
	struct watch_alert al[MEM_CAT_COUNT];
	size_t nal = watch_window_check(win, s->mem, s->have, o->margin, o->floor, al);
	watch_window_push(win, s->mem, s->have);
	(*since_drill)++;
	json_object_set_new(line, "t", json_integer((json_int_t)s->taken_at_ms));
	json_object_set_new(line, "memory", mem_json(s));
	json_object_set_new(line, "process_count", json_integer(s->process_count));
	json_object_set_new(line, "ets_count", json_integer(s->ets_count));
	json_object_set_new(line, "atom_count", json_integer(s->atom_count));
	json_object_set_new(line, "port_count", json_integer(s->port_count));
	json_t *ja = json_array();
	for (size_t k = 0; k < nal; k++) {
		char v[32], a[32];
		model_bytes_format(v, sizeof(v), al[k].value);
		model_bytes_format(a, sizeof(a), al[k].average);
		fprintf(stderr,
		        "gate watch: ALERT %s: %s is %s, %.1f %% above its rolling "
		        "average %s over the last %zu samples (margin %.1f %%)\n",
		        ses->name, mem_cat_name(al[k].cat), v, al[k].over_pct, a,
		        win->n > 0 ? win->n - 1 : 0, o->margin);
		json_array_append_new(
		        ja, json_pack("{s:s, s:I, s:I, s:f}", "category", mem_cat_name(al[k].cat),
		                      "value", (json_int_t)al[k].value, "average",
		                      (json_int_t)al[k].average, "over_pct", al[k].over_pct));
	}
	json_object_set_new(line, "alerts", ja);
	*alerts += nal ? 1 : 0;
	if (nal && *since_drill >= o->window) {
		struct snapshot d = {0};
		struct probe_snapshot_opts dso = {.gc = false, .deep = true, .top = (int)o->top};
		ses->phase = "taking the drill-down";
		if (probe_snapshot(&ses->conn, &dso, (int)o->timeout_ms, &d, serr, sizeof(serr)) ==
		    EIC_OK) {
			json_object_set_new(line, "drilldown", drilldown(&d, o->top, ses->name));
			*since_drill = 0;
		} else {
			fprintf(stderr, "gate watch: drill-down skipped: %s\n", serr);
		}
		snapshot_clear(&d);
	} else if (nal) {
		fprintf(stderr,
		        "gate watch: drill-down not repeated within %ld samples "
		        "of the last one\n",
		        o->window);
	}
	if (o->openmetrics &&
	    write_openmetrics(o->out, s, ses->name, al, nal, *alerts, err, errlen) < 0)
		return -1;
	return 0;
}

/* --reconnect: the session ended and opened again (attach, the probe loaded afresh), within
 * one sample's timeout. Returns 0, or -1 with err (the node is still away). */
static int watch_reconnect(const struct watch_opts *o, struct session *ses, char *err,
                           size_t errlen)
{
	struct session_opts so = ses->o;
	so.boot_timeout_ms = (int)o->timeout_ms;
	session_end(ses);
	session_init(ses, &so);
	snprintf(ses->name, sizeof(ses->name), "%s", so.attach); /* the lines name it meanwhile */
	ses->phase = "connecting again";
	if (session_open(ses, err, errlen) < 0) {
		session_end(ses); /* nothing of a half-open session kept to the next try */
		return -1;
	}
	return 0;
}

/* Until the grid's next sample at next: the connection kept alive, or (down) a plain wait in
 * slices, so that a signal ends it. Returns 0, or -1 with err when the connection broke and
 * the watch does not reconnect; *down is set when it broke and it does. */
static int watch_wait(const struct watch_opts *o, struct session *ses, long long next, bool *down,
                      char *err, size_t errlen)
{
	ses->phase = "waiting for the next sample";
	long long wait = next - clock_ms();
	if (wait > 0 && !*down && eic_idle(&ses->conn, (int)wait, err, errlen) != EIC_OK) {
		if (!o->reconnect || signals_caught)
			return -1;
		fprintf(stderr, "gate watch: the connection to %s broke: %s; connecting again\n",
		        ses->name, err);
		*down = true;
	}
	while (*down && !signals_caught && (wait = next - clock_ms()) > 0) {
		struct timespec ts = {.tv_nsec = (wait < 200 ? wait : 200) * 1000000L};
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* One sample's reply, or with --reconnect while the node is away, the try to connect again. */
static int watch_take(const struct watch_opts *o, struct session *ses, bool *down,
                      struct watch_window *win, long *since_drill, long *reconnects,
                      struct snapshot *s, char *serr, size_t serrlen)
{
	if (*down) {
		if (watch_reconnect(o, ses, serr, serrlen) < 0)
			return EIC_ERROR;
		*down = false;
		(*reconnects)++;
		watch_window_init(win, (size_t)o->window); /* another node's figures: afresh */
		*since_drill = o->window;
		fprintf(stderr, "gate watch: connected to %s again (reconnect %ld)\n", ses->name,
		        *reconnects);
	}
	struct probe_snapshot_opts so = {.gc = false, .deep = false};
	ses->phase = "taking a sample";
	return probe_snapshot(&ses->conn, &so, (int)o->timeout_ms, s, serr, serrlen);
}

static int watch_loop(const struct watch_opts *o, struct session *ses, FILE *out, long *alerts,
                      char *err, size_t errlen)
{
	static struct watch_window win; /* ~90 kB at the largest window: not on the stack */
	long since_drill = o->window;   /* samples since the last drill-down */
	long reconnects = 0;
	unsigned long late = 0; /* replies that came after their sample's timeout, dropped */
	bool down = false;      /* --reconnect: the connection broke, gate connects again */
	long long start = clock_ms();
	watch_window_init(&win, (size_t)o->window);
	for (long i = 0; !o->count || i < o->count; i++) {
		long long t = clock_ms();
		if (o->for_ms && t - start >= o->for_ms)
			break;
		struct snapshot s = {0};
		char serr[1024];
		int rc = watch_take(o, ses, &down, &win, &since_drill, &reconnects, &s, serr,
		                    sizeof(serr));
		json_t *line = json_object();
		if (!line) {
			snapshot_clear(&s);
			errtext_set(err, errlen, NULL, "out of memory");
			return -1;
		}
		json_object_set_new(line, "node", json_string(ses->name));
		json_object_set_new(line, "sample", json_integer(i + 1));
		/* read off the channel before a reconnect can start a new one */
		late += ses->conn.late;
		ses->conn.late = 0;
		json_object_set_new(line, "late", json_integer((json_int_t)late));
		if (rc == EIC_TIMEOUT || rc == EIC_BADRPC) {
			/* keeps going: a busy node answers the next one */
			fprintf(stderr, "gate watch: sample %ld of %s skipped: %s\n", i + 1,
			        ses->name, serr);
			json_object_set_new(line, "t", json_integer((json_int_t)wall_ms()));
			json_object_set_new(line, "error", json_string(serr));
		} else if (rc != EIC_OK && o->reconnect && !signals_caught) {
			if (!down)
				fprintf(stderr,
				        "gate watch: sample %ld: the connection to %s broke: "
				        "%s; connecting again\n",
				        i + 1, ses->name, serr);
			down = true;
			json_object_set_new(line, "t", json_integer((json_int_t)wall_ms()));
			json_object_set_new(line, "error", json_string(serr));
			json_object_set_new(line, "connected", json_false());
		} else if (rc != EIC_OK) {
			json_decref(line);
			errtext_set(err, errlen, NULL, "%s", serr);
			return -1;
		} else if (watch_sample(o, ses, &win, &s, line, alerts, &since_drill, err, errlen) <
		           0) {
			snapshot_clear(&s);
			json_decref(line);
			return -1;
		}
		snapshot_clear(&s);
		if (!o->openmetrics && write_line(out, line, err, errlen, o->out) < 0) {
			json_decref(line);
			return -1;
		}
		json_decref(line);
		if (*alerts && o->exit_on_alert)
			break;
		if (o->count && i + 1 >= o->count)
			break;
		/* the next sample on the grid start + k x interval; the connection kept alive */
		long long next = start + (long long)(i + 1) * o->interval_ms;
		if (o->for_ms && next - start >= o->for_ms)
			break;
		if (watch_wait(o, ses, next, &down, err, errlen) < 0)
			return -1;
	}
	if (reconnects)
		fprintf(stderr, "gate watch: %ld reconnect%s\n", reconnects,
		        reconnects == 1 ? "" : "s");
	return 0;
}

/* --floor: bytes as gate.toml writes a size, a bare number (bytes) or a string with a unit
 * ("1 MB"), through the one grammar (gate/config/units.h). */
static int parse_size_opt(const char *name, const char *v, int64_t *out)
{
	char err[512];
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	bool bare = end != v && !*end && errno == 0;
	if (bare ? units_check_size(n, v, err, sizeof(err)) == 0
	         : units_parse_size(v, out, err, sizeof(err)) == 0) {
		if (bare)
			*out = n;
		return 0;
	}
	gate_usage_error("watch ", "%s %s: %s", name, v, err);
	return -1;
}

/* --margin: a percentage, "20", "20%" or "20 %", as gate.toml takes one (units.h). */
static int parse_percent_opt(const char *name, const char *v, double *out)
{
	char err[512];
	char *end;
	errno = 0;
	double n = strtod(v, &end);
	bool bare = end != v && !*end && errno == 0; /* a number alone: 20, 2.5, 1e2 */
	if (bare ? units_check_percent(n, err, sizeof(err)) == 0
	         : units_parse_percent(v, &n, err, sizeof(err)) == 0) {
		if (n <= 100000) {
			*out = n;
			return 0;
		}
		snprintf(err, sizeof(err), "above 100000 %%; give a margin from 0 to 100000 %%");
	}
	gate_usage_error("watch ", "%s %s: %s", name, v, err);
	return -1;
}

/* The command line into *op. Returns -1 to go on, or the exit code (--help, a usage error). */
static int parse_args(int argc, char **argv, struct watch_opts *op)
{
	static const struct option longopts[] = {
	        {"attach", required_argument, NULL, 'a'},
	        {"cookie-file", required_argument, NULL, 'k'},
	        {"interval", required_argument, NULL, 'i'},
	        {"count", required_argument, NULL, 'n'},
	        {"for", required_argument, NULL, 'f'},
	        {"out", required_argument, NULL, 'o'},
	        {"format", required_argument, NULL, 'F'},
	        {"window", required_argument, NULL, 'w'},
	        {"margin", required_argument, NULL, 'm'},
	        {"floor", required_argument, NULL, 'l'},
	        {"exit-on-alert", no_argument, NULL, 'x'},
	        {"top", required_argument, NULL, 't'},
	        {"timeout", required_argument, NULL, 'T'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"reconnect", no_argument, NULL, 'r'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	*op = (struct watch_opts){.interval_ms = 60000,
	                          .timeout_ms = 10000,
	                          .floor = 1000000,
	                          .window = 10,
	                          .top = 5,
	                          .margin = 20.0};
	struct watch_opts *o = op;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': o->attach = optarg; break;
		case 'k': o->cookie_file = optarg; break;
		case 'o': o->out = optarg; break;
		case 'x': o->exit_on_alert = true; break;
		case 'q': o->quiet = true; break;
		case 'r': o->reconnect = true; break;
		case 'i':
			if (interval_parse(optarg, 10, 86400000, &o->interval_ms) < 0)
				return usage(
				        "--interval %s: expected a duration from 10ms to 24h, e.g. "
				        "60s",
				        optarg);
			break;
		case 'f':
			if (interval_parse(optarg, 1, 366LL * 86400000, &o->for_ms) < 0)
				return usage("--for %s: expected a duration, e.g. 24h or 90m",
				             optarg);
			break;
		case 'T':
			if (interval_parse(optarg, 10, 3600000, &o->timeout_ms) < 0)
				return usage("--timeout %s: expected a duration from 10ms to 1h, "
				             "e.g. 10s",
				             optarg);
			break;
		case 'n':
			if (parse_long(optarg, 1, 100000000, &o->count) < 0)
				return usage("--count %s: expected a number of samples, e.g. 60",
				             optarg);
			break;
		case 'w':
			if (parse_long(optarg, 1, WATCH_WINDOW_MAX, &o->window) < 0)
				return usage(
				        "--window %s: expected a number of samples from 1 to 1000",
				        optarg);
			break;
		case 't':
			if (parse_long(optarg, 1, 100, &o->top) < 0)
				return usage("--top %s: expected a count from 1 to 100", optarg);
			break;
		case 'l':
			if (parse_size_opt("--floor", optarg, &o->floor) < 0)
				return GATE_EXIT_ERROR;
			break;
		case 'm':
			if (parse_percent_opt("--margin", optarg, &o->margin) < 0)
				return GATE_EXIT_ERROR;
			break;
		case 'F':
			if (strcmp(optarg, "openmetrics") == 0)
				o->openmetrics = true;
			else if (strcmp(optarg, "jsonl") != 0)
				return usage("--format %s: expected jsonl or openmetrics", optarg);
			break;
		case 'h': fputs(help, stdout); return GATE_EXIT_PASS;
		case ':': return usage("option %s needs a value", argv[optind - 1]);
		default: return usage("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage("unexpected argument %s", argv[optind]);
	if (!o->attach)
		return usage("%s", "gate watch needs --attach NODE, e.g. --attach app@127.0.0.1");
	if (o->openmetrics && !o->out)
		return usage("%s",
		             "--format openmetrics writes a file: give it with --out FILE, e.g. "
		             "the textfile collector's directory/gate.prom");
	return -1;
}

int watch_cmd_main(int argc, char **argv)
{
	struct watch_opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;

	FILE *out = stdout;
	char err[4096];
	if (o.out && !o.openmetrics && !(out = fopen(o.out, "a"))) {
		return gate_error("--out %s: %s; give a writable file", o.out, strerror(errno));
	}
	struct session_opts so = {
	        .attach = o.attach,
	        .cookie_file = o.cookie_file,
	        .boot_timeout_ms = 30000,
	        .rpc_timeout_ms = (int)(o.timeout_ms > 30000 ? o.timeout_ms : 30000),
	        .stop_timeout_ms = 10000,
	        .quiet = o.quiet,
	        .fresh_names = true, /* every call goes through probe_entry() */
	};
	struct session ses;
	long alerts = 0;
	int code = GATE_EXIT_ERROR;
	signals_install();
	session_init(&ses, &so);
	if (session_open(&ses, err, sizeof(err)) < 0 ||
	    watch_loop(&o, &ses, out, &alerts, err, sizeof(err)) < 0) {
		if (signals_caught) {
			code = GATE_EXIT_SIGNAL(signals_caught);
		} else {
			session_explain(&ses, err, sizeof(err));
			gate_error("%s", err);
		}
		goto out;
	}
	code = signals_caught ? GATE_EXIT_SIGNAL(signals_caught)
	       : alerts       ? GATE_EXIT_FAIL
	                      : GATE_EXIT_PASS;
	if (alerts)
		fprintf(stderr, "gate watch: %ld sample%s alerted\n", alerts,
		        alerts == 1 ? "" : "s");
out:
	session_end(&ses);
	if (out != stdout)
		fclose(out);
	return code;
}

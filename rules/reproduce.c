/* rules/reproduce.c: the command that reproduces a failing finding (see reproduce.h). */
#include "rules/reproduce.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A test file or directory a mix test run named: the reproduction names the culprit's instead. */
static bool test_path(const char *a)
{
	if (strcmp(a, "test") == 0 || strncmp(a, "test/", 5) == 0)
		return true;
	const char *exs = strstr(a, ".exs");
	if (!exs)
		return false;
	for (const char *p = exs + 4; *p; p++)
		if (*p != ':' && (*p < '0' || *p > '9'))
			return false;
	return *a != '-';
}

/* Appends a, single-quoted when a shell would split or expand it. */
static size_t put_arg(char *buf, size_t len, size_t o, const char *a)
{
	bool plain = *a != '\0';
	for (const char *p = a; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./"
		            ":=+,@%",
		            *p))
			plain = false;
	if (o + 1 >= len)
		return o;
	if (plain)
		return o + (size_t)snprintf(buf + o, len - o, " %s", a);
	o += (size_t)snprintf(buf + o, len - o, " '");
	for (const char *p = a; *p && o + 5 < len; p++)
		o += (size_t)(*p == '\'' ? snprintf(buf + o, len - o, "'\\''")
		                         : snprintf(buf + o, len - o, "%c", *p));
	if (o + 1 < len)
		o += (size_t)snprintf(buf + o, len - o, "'");
	return o;
}

size_t reproduce_select(enum reproduce_runner runner, const char *project, const char *culprit,
                        const char *file, int line, char *buf, size_t len, const char *sel[2])
{
	if (!len)
		return 0;
	if (runner == REPRODUCE_REBAR) {
		if (!culprit || !*culprit)
			return 0;
		size_t n = strlen(culprit);
		sel[0] = n > 6 && strcmp(culprit + n - 6, "_SUITE") == 0 ? "--suite" : "--module";
		snprintf(buf, len, "%s", culprit);
		sel[1] = buf;
		return 2;
	}
	if (!file)
		return 0;
	size_t pl = project ? strlen(project) : 0;
	while (pl > 1 && project[pl - 1] == '/')
		pl--;
	if (pl && strncmp(file, project, pl) == 0 && file[pl] == '/')
		file += pl + 1;
	if (line > 0)
		snprintf(buf, len, "%s:%d", file, line);
	else
		snprintf(buf, len, "%s", file);
	sel[0] = buf;
	return 1;
}

size_t reproduce_selecting(enum reproduce_runner runner, char *const *args, size_t n, size_t i)
{
	if (i >= n)
		return 0;
	const char *a = args[i];
	if (runner == REPRODUCE_MIX)
		return test_path(a) ? 1 : 0;
	static const char *const flags[] = {"--module", "--suite", "--group", "--case"};
	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		size_t fl = strlen(flags[k]);
		if (strncmp(a, flags[k], fl) != 0)
			continue;
		if (a[fl] == '=')
			return 1;
		if (a[fl] == '\0')
			return i + 1 < n ? 2 : 1;
	}
	return 0;
}

void reproduce_line(char *buf, size_t len, const struct reproduce_cmd *cmd, const char *culprit,
                    const char *file, int line)
{
	char where[1100];
	const char *sel[2];
	if (!len)
		return;
	size_t ns = reproduce_select(cmd->runner, cmd->project, culprit, file, line, where,
	                             sizeof(where), sel);
	size_t o = (size_t)snprintf(buf, len, "%s --", cmd->prefix ? cmd->prefix : "gate run");
	for (size_t i = 0; i < ns && o < len; i++)
		o = put_arg(buf, len, o, sel[i]);
	for (size_t i = 0; i < cmd->ntest_args && o < len;) {
		size_t skip = reproduce_selecting(cmd->runner, cmd->test_args, cmd->ntest_args, i);
		if (skip) {
			i += skip;
			continue;
		}
		o = put_arg(buf, len, o, cmd->test_args[i++]);
	}
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

int reproduce_annotate(struct findings *out, const struct reproduce_cmd *cmd)
{
	char text[2048];
	for (size_t i = 0; i < out->count; i++) {
		struct finding *f = &out->items[i];
		if (f->verdict != VERDICT_FAIL || (f->show & SHOW_MORE) || !f->culprit ||
		    finding_has_part(f, PART_REPRODUCE, NULL))
			continue;
		if (cmd->runner == REPRODUCE_MIX && (!f->file || !ends_with(f->file, ".exs")))
			continue;
		int n = snprintf(text, sizeof(text), "reproduce: ");
		reproduce_line(text + n, sizeof(text) - (size_t)n, cmd, f->culprit, f->file,
		               f->culprit_test ? f->line : 0);
		if (finding_part_add(f, PART_REPRODUCE, false, "; ", text) < 0)
			return -1;
	}
	return 0;
}

/* rules/reproduce.c: the command that reproduces a failing finding (see reproduce.h). */
#include "rules/reproduce.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A test file or directory the run named: the reproduction names the culprit's instead. */
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

void reproduce_line(char *buf, size_t len, const struct reproduce_cmd *cmd, const char *file,
                    int line)
{
	char where[1100];
	if (!len)
		return;
	size_t pl = cmd->project ? strlen(cmd->project) : 0;
	while (pl > 1 && cmd->project[pl - 1] == '/')
		pl--;
	if (file && pl && strncmp(file, cmd->project, pl) == 0 && file[pl] == '/')
		file += pl + 1;
	if (line > 0)
		snprintf(where, sizeof(where), "%s:%d", file ? file : "?", line);
	else
		snprintf(where, sizeof(where), "%s", file ? file : "?");
	size_t o = (size_t)snprintf(buf, len, "%s --", cmd->prefix ? cmd->prefix : "gate run");
	o = put_arg(buf, len, o < len ? o : len, where);
	for (size_t i = 0; i < cmd->ntest_args && o < len; i++)
		if (!test_path(cmd->test_args[i]))
			o = put_arg(buf, len, o, cmd->test_args[i]);
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
		    !f->file || !ends_with(f->file, ".exs") ||
		    finding_has_part(f, PART_REPRODUCE, NULL))
			continue;
		int n = snprintf(text, sizeof(text), "reproduce: ");
		reproduce_line(text + n, sizeof(text) - (size_t)n, cmd, f->file,
		               f->culprit_test ? f->line : 0);
		if (finding_part_add(f, PART_REPRODUCE, false, "; ", text) < 0)
			return -1;
	}
	return 0;
}

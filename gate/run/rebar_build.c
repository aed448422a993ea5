/* gate/run/rebar_build.c: a rebar3 project compiled and its code paths read (see
 * rebar_build.h). */
#include "gate/run/rebar_build.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/errtext.h"
#include "base/grow.h"
#include "gate/node/signals.h"

/* rebar3's output is kept up to this (a project's compile warnings); past it, the start */
#define REBAR_OUT_MAX (4u << 20)

void rebar_paths_clear(struct rebar_paths *p)
{
	for (size_t i = 0; p->paths && i < p->n; i++)
		free(p->paths[i]);
	free(p->paths);
	p->paths = NULL;
	p->n = 0;
}

/* The text without ANSI colour sequences, in place. */
static void strip_ansi(char *s)
{
	char *w = s;
	for (char *r = s; *r;) {
		if (r[0] == '\033' && r[1] == '[') {
			r += 2;
			while (*r && !((*r >= 'A' && *r <= 'Z') || (*r >= 'a' && *r <= 'z')))
				r++;
			if (*r)
				r++;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

/* rebar3's progress lines, which say nothing of a failure */
static bool info_line(const char *l, size_t len)
{
	static const char *const info[] = {"===> Verifying dependencies",
	                                   "===> Analyzing applications", "===> Fetching ",
	                                   "===> Compiling "};
	if (len >= 7 && memcmp(l + len - 7, " failed", 7) == 0)
		return false;
	for (size_t i = 0; i < sizeof(info) / sizeof(info[0]); i++)
		if (strncmp(l, info[i], strlen(info[i])) == 0)
			return true;
	return len == 0;
}

/* err: what rebar3 said, less its progress lines */
static void failure_text(char *out, const char *project, int status, char *err, size_t errlen)
{
	strip_ansi(out);
	struct textbuf b = {.limit = REBAR_OUT_MAX};
	for (char *l = out; *l;) {
		size_t len = strcspn(l, "\n");
		size_t t = len;
		while (t && (l[t - 1] == '\r' || l[t - 1] == ' '))
			t--;
		if (!info_line(l, t)) {
			if (b.len)
				textbuf_add(&b, "\n", 1);
			textbuf_add(&b, l, t);
		}
		l += len + (l[len] == '\n');
	}
	const char *said = b.s && b.len ? b.s : "it printed nothing";
	size_t slen = strlen(said);
	errtext_set(err, errlen, NULL, "rebar3 as test compile failed in %s (exit status %d): %s%s",
	            project, status, slen > 3000 ? said + slen - 3000 : said,
	            strstr(said, "rebar3") ? "" : "; fix the project so that rebar3 compiles it");
	textbuf_free(&b);
}

/* The code paths: rebar3 path's line (the output's last), split on blanks. */
static int split_paths(char *line, struct rebar_paths *out)
{
	size_t cap = 0;
	for (char *p = line; *p;) {
		p += strspn(p, " \t\r\n");
		if (!*p)
			break;
		size_t len = strcspn(p, " \t\r\n");
		if (out->n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			char **np = realloc(out->paths, nc * sizeof(*np));
			if (!np)
				return -1;
			out->paths = np;
			cap = nc;
		}
		if (!(out->paths[out->n] = strndup(p, len)))
			return -1;
		out->n++;
		p += len;
	}
	return 0;
}

int rebar_build(const char *project, bool quiet, struct rebar_paths *out, char *err, size_t errlen)
{
	const char *rebar3 = getenv("GATE_REBAR3");
	if (!rebar3 || !*rebar3)
		rebar3 = "rebar3";
	memset(out, 0, sizeof(*out));
	int pfd[2], ready[2];
	if (pipe2(pfd, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0) {
		errtext_set(err, errlen, NULL, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		errtext_set(err, errlen, NULL, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(pfd[1], 2) < 0 ||
		    chdir(project) < 0) {
			int e = errno;
			(void)!write(ready[1], &e, sizeof(e));
			_exit(127);
		}
		execlp(rebar3, rebar3, "as", "test", "do", "compile,", "path", (char *)NULL);
		int e = errno;
		(void)!write(ready[1], &e, sizeof(e));
		_exit(127);
	}
	close(pfd[1]);
	close(ready[1]);
	int child_errno = 0;
	bool exec_failed =
	        read(ready[0], &child_errno, sizeof(child_errno)) == (ssize_t)sizeof(child_errno);
	close(ready[0]);
	struct textbuf b = {.limit = REBAR_OUT_MAX};
	char chunk[8192];
	ssize_t got;
	while ((got = read(pfd[0], chunk, sizeof(chunk))) != 0) {
		if (got < 0) {
			if (errno != EINTR)
				break;
			/* gate was told to stop: so is rebar3, whose output still drains */
			if (signals_caught)
				kill(pid, SIGTERM);
			continue;
		}
		textbuf_add(&b, chunk, (size_t)got);
	}
	close(pfd[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int rc = -1;
	if (signals_caught) {
		errtext_set(err, errlen, NULL, "interrupted by %s while compiling %s with rebar3",
		            strsignal(signals_caught), project);
		goto out;
	}
	if (exec_failed) {
		if (child_errno == ENOENT && !strchr(rebar3, '/'))
			errtext_set(err, errlen, NULL,
			            "cannot run %s: not found on PATH; install rebar3 (Debian: "
			            "apt-get install rebar3; GitHub: erlef/setup-beam with "
			            "rebar3-version), fix PATH, or set GATE_REBAR3 to its path",
			            rebar3);
		else
			errtext_set(err, errlen, NULL, "cannot run %s in %s: %s", rebar3, project,
			            strerror(child_errno));
		goto out;
	}
	textbuf_add(&b, "\n", 1); /* NUL-terminated, also when rebar3 printed nothing */
	if (b.oom || !b.s) {
		errtext_set(err, errlen, NULL, "out of memory reading rebar3's output");
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		failure_text(b.s, project,
		             WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), err,
		             errlen);
		goto out;
	}
	/* the last line is rebar3 path's; the lines before it are the compile's */
	char *end = b.s + strlen(b.s);
	while (end > b.s && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	char *last = strrchr(b.s, '\n');
	char *paths = last ? last + 1 : b.s;
	if (last)
		*last = '\0';
	if (!quiet && last && *b.s)
		fprintf(stderr, "%s\n", b.s);
	strip_ansi(paths);
	if (split_paths(paths, out) < 0) {
		errtext_set(err, errlen, NULL, "out of memory reading the code paths");
		goto out;
	}
	if (out->n == 0 || out->paths[0][0] != '/') {
		errtext_set(err, errlen, NULL,
		            "rebar3 as test path in %s gave no code paths (it printed \"%.200s\")",
		            project, paths);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		rebar_paths_clear(out);
	textbuf_free(&b);
	return rc;
}

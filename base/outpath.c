/* base/outpath.c: an output path inside the project must not lead out of it (base/outpath.h). */
#include "base/outpath.h"

#include "base/errtext.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool inside(const char *project, const char *p)
{
	size_t n = strlen(project);
	if (n == 1 && project[0] == '/')
		return true;
	return strncmp(p, project, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* path made absolute against the current directory, with "." and ".." resolved as text. */
static int lexical(char *out, size_t len, const char *path)
{
	char buf[PATH_MAX * 2];
	if (path[0] == '/') {
		snprintf(buf, sizeof(buf), "%s", path);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return -1;
		snprintf(buf, sizeof(buf), "%s/%s", cwd, path);
	}
	size_t o = 0;
	out[0] = '\0';
	for (char *save = NULL, *part = strtok_r(buf, "/", &save); part;
	     part = strtok_r(NULL, "/", &save)) {
		if (strcmp(part, ".") == 0)
			continue;
		if (strcmp(part, "..") == 0) {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			out[o] = '\0';
			continue;
		}
		int n = snprintf(out + o, len - o, "/%s", part);
		if (n < 0 || (size_t)n >= len - o)
			return -1;
		o += (size_t)n;
	}
	if (o == 0)
		snprintf(out, len, "/");
	return 0;
}

/* Where path really leads: the realpath of its deepest existing ancestor directory, then
 * the rest as spelled; the file itself followed when it is a symlink. */
static int resolved(char *out, size_t len, const char *abs)
{
	struct stat st;
	char file[PATH_MAX];
	if (lstat(abs, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (realpath(abs, file)) {
			snprintf(out, len, "%s", file);
			return 0;
		}
		/* a dangling link: where its target would be created */
		char target[PATH_MAX], base[PATH_MAX * 2 + 2];
		ssize_t n = readlink(abs, target, sizeof(target) - 1);
		if (n < 0)
			return -1;
		target[n] = '\0';
		if (target[0] == '/') {
			snprintf(base, sizeof(base), "%s", target);
		} else {
			snprintf(base, sizeof(base), "%s", abs);
			*strrchr(base, '/') = '\0';
			size_t bl = strlen(base);
			snprintf(base + bl, sizeof(base) - bl, "/%s", target);
		}
		char lex[PATH_MAX * 2];
		if (lexical(lex, sizeof(lex), base) < 0)
			return -1;
		return resolved(out, len, lex);
	}
	char dir[PATH_MAX * 2];
	snprintf(dir, sizeof(dir), "%s", abs);
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			return -1;
		if (slash == dir) {
			dir[1] = '\0';
		} else {
			*slash = '\0';
		}
		if (realpath(dir, file)) {
			const char *rest = abs + strlen(dir);
			if (strcmp(dir, "/") == 0)
				rest = abs;
			snprintf(out, len, "%s%s", strcmp(file, "/") == 0 ? "" : file, rest);
			return 0;
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return -1;
		if (strcmp(dir, "/") == 0)
			return -1;
	}
}

int outpath_check(const char *project, const char *path, const char *what, char *err, size_t errlen)
{
	if (strcmp(path, "-") == 0) /* stdout (--json -) */
		return 0;
	char lex[PATH_MAX * 2], real[PATH_MAX * 3];
	if (lexical(lex, sizeof(lex), path) < 0) {
		errtext_set(err, errlen, NULL, "%s %s: cannot make the path absolute: %s", what,
		            path, strerror(errno ? errno : ENAMETOOLONG));
		return -1;
	}
	if (!inside(project, lex))
		return 0; /* spelled outside the project: asked for */
	if (resolved(real, sizeof(real), lex) < 0) {
		errtext_set(err, errlen, NULL, "%s %s: cannot resolve the path: %s", what, path,
		            strerror(errno ? errno : EINVAL));
		return -1;
	}
	if (inside(project, real))
		return 0;
	errtext_set(err, errlen, NULL,
	            "%s %s leads outside the project %s through a symlink (to %s); "
	            "gate does not write outside the project through a symlink: remove the link, "
	            "give the real place as an absolute path, or pass --allow-outside",
	            what, path, project, real);
	return -1;
}

/* base/json_stdout.c: `--json -` keeps stdout for the JSON document alone (json_stdout.h). */
#include "base/json_stdout.h"

#include "base/atomic.h"
#include "base/errtext.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int json_fd = -1; /* the real stdout, once reserved */

bool json_stdout_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "--json=-") == 0 ||
		    (strcmp(argv[i], "--json") == 0 && i + 1 < argc &&
		     strcmp(argv[i + 1], "-") == 0))
			return true;
	}
	return false;
}

int json_stdout_reserve(char *err, size_t errlen)
{
	if (json_fd >= 0)
		return 0;
	fflush(stdout);
	int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0) {
		errtext_set(err, errlen, "--json -", "cannot keep stdout for the JSON: %s",
		            strerror(errno));
		return -1;
	}
	if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		errtext_set(err, errlen, "--json -", "cannot send the other output to stderr: %s",
		            strerror(errno));
		close(fd);
		return -1;
	}
	json_fd = fd;
	return 0;
}

int json_stdout_write(const char *text, size_t len, char *err, size_t errlen)
{
	fflush(stdout);
	if (write_all(json_fd >= 0 ? json_fd : STDOUT_FILENO, text, len) < 0) {
		errtext_set(err, errlen, "stdout", "write failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}

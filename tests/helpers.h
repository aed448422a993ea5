/* tests/helpers.h: small helpers the cmocka tests share (header-only: each test is one
 * program). */
#ifndef GATE_TESTS_HELPERS_H
#define GATE_TESTS_HELPERS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* rm -rf path, read-only directories included. */
static inline void rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		chmod(path, 0700);
		DIR *d = opendir(path);
		if (d) {
			struct dirent *e;
			while ((e = readdir(d))) {
				if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
					continue;
				char sub[1024];
				snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
				rm_rf(sub);
			}
			closedir(d);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

#endif

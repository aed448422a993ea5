/* ci/git/git2_lib.c: libgit2 opened on first use (git2_lib.h). */
#include "ci/git/git2_lib.h"

#include <stdbool.h>
#include <string.h>

#include "base/lazylib.h"

#ifndef GATE_DIRECT_LIBS

struct git2_api git2_api;

#define GIT2_NAME(f) #f,
static const char *const git2_names[] = {GIT2_FUNCS(GIT2_NAME)};
#define GIT2_COUNT (sizeof(git2_names) / sizeof(git2_names[0]))
static void *git2_slots[GIT2_COUNT];
_Static_assert(sizeof(struct git2_api) == sizeof(git2_slots),
               "one table slot per function of GIT2_FUNCS");

/* the soname of the libgit2 whose headers gate is compiled with */
static struct lazylib git2_lazy = LAZYLIB_INIT(
        "libgit2.so." LIBGIT2_SOVERSION,
        "libgit2 (Debian: apt-get install libgit2-" LIBGIT2_SOVERSION "; Alpine: apk add libgit2)",
        git2_names, git2_slots, GIT2_COUNT);

int git2_lib_load(char *err, size_t errlen)
{
	static bool copied; /* once: a test may have put a function of its own in the table */
	if (lazylib_open(&git2_lazy, err, errlen) < 0)
		return -1;
	/* a function pointer is the size and form of a data pointer here, as dlsym assumes */
	if (!copied)
		memcpy(&git2_api, git2_slots, sizeof(git2_api));
	copied = true;
	return 0;
}

#else

int git2_lib_load(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return 0;
}

#endif

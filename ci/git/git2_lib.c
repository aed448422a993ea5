/* ci/git/git2_lib.c: libgit2 opened on first use (git2_lib.h). */
#include "ci/git/git2_lib.h"

#include "base/lazylib.h"

#ifndef GATE_DIRECT_LIBS

struct git2_api git2_api;

#define GIT2_NAME(f) #f,
static const char *const git2_names[] = {GIT2_FUNCS(GIT2_NAME)};
#define GIT2_COUNT (sizeof(git2_names) / sizeof(git2_names[0]))
_Static_assert(sizeof(struct git2_api) == GIT2_COUNT * sizeof(void *),
               "one table slot per function of GIT2_FUNCS");

/* the soname of the libgit2 whose headers gate is compiled with */
static struct lazylib git2_lazy = LAZYLIB_INIT(
        "libgit2.so." LIBGIT2_SOVERSION,
        "libgit2 (Debian: apt-get install libgit2-" LIBGIT2_SOVERSION "; Alpine: apk add libgit2)",
        git2_names, &git2_api, GIT2_COUNT);

int git2_lib_load(char *err, size_t errlen)
{
	return lazylib_open(&git2_lazy, err, errlen);
}

#else

int git2_lib_load(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return 0;
}

#endif

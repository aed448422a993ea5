/* base/lazylib.h: a shared library opened on first use (dlopen), not when gate starts.
 *
 * libgit2 and libxml2 with what they need (OpenSSL, Kerberos, libssh2, mbedTLS, ICU and the
 * C++ runtime: 23 more libraries) cost every gate process 11 ms to map and relocate before
 * main, on this machine a third of gate's own share of a 1 000-test run, though most runs
 * write the JUnit file only at the end and read git only where a repository is. A build that
 * links them (make release, statically; GATE_DIRECT_LIBS) calls them directly and never
 * opens anything.
 *
 * A struct lazylib names the library by its soname and lists the symbols to resolve, in the
 * order of the table of function pointers they fill; lazylib_open() loads and resolves them
 * all once (later calls return the first call's outcome, and leave the table as it is: a
 * test may have put a function of its own in it) and is safe to call from several threads:
 * one loads, the others wait for it. A library that cannot be opened, or lacks a symbol,
 * leaves the table NULL and says so in err ("cannot load SONAME: why; install PACKAGE"). */
#ifndef GATE_BASE_LAZYLIB_H
#define GATE_BASE_LAZYLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct lazylib {
	const char *soname;       /* "libgit2.so.1.5" */
	const char *package;      /* what to install when it is missing, for the error */
	const char *const *names; /* the symbols, n of them */
	void *table;              /* n function pointers, the i-th set to names[i]'s address */
	size_t n;
	/* the state, zero-initialised with the rest (PTHREAD_MUTEX_INITIALIZER) */
	pthread_mutex_t lock;
	int state; /* 0 not tried, 1 loaded, -1 failed */
	void *handle;
	char why[512];
};

#define LAZYLIB_INIT(soname_, package_, names_, table_, n_)                                        \
	{                                                                                          \
		.soname = (soname_), .package = (package_), .names = (names_), .table = (table_),  \
		.n = (n_), .lock = PTHREAD_MUTEX_INITIALIZER                                       \
	}

/* Loads l once. Returns 0, or -1 with err (may be NULL) saying which library, why and what
 * to install. */
int lazylib_open(struct lazylib *l, char *err, size_t errlen);

/* The address of the symbol name (a variable, say) in l, once lazylib_open() loaded it;
 * NULL otherwise or when l has no such symbol. */
void *lazylib_symbol(struct lazylib *l, const char *name);

/* Loads the n libraries in a detached thread of their own, so that a later
 * lazylib_open() finds them loaded: for a process that is about to wait (for a node to boot,
 * for a suite to run). Best effort: a failure is said by the lazylib_open() that needs it. */
void lazylib_warm(struct lazylib *const *libs, size_t n);

#endif

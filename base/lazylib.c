/* base/lazylib.c: shared libraries opened on first use (lazylib.h). */
#include "base/lazylib.h"
#include "base/thread.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"

static int load(struct lazylib *l)
{
	/* RTLD_NOW: a symbol the library lacks is found here, not in the middle of a report */
	void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(l->why, sizeof(l->why), "cannot load %s: %s; install %s", l->soname,
		         e ? e : "unknown error", l->package);
		return -1;
	}
	for (size_t i = 0; i < l->n; i++) {
		dlerror();
		void *p = dlsym(h, l->names[i]);
		if (!p) {
			snprintf(l->why, sizeof(l->why),
			         "%s has no %s: it is not the library gate was built against; "
			         "install %s, or rebuild gate against the one installed",
			         l->soname, l->names[i], l->package);
			memset(l->table, 0, l->n * sizeof(p));
			dlclose(h);
			return -1;
		}
		/* a function pointer is the size and form of a data pointer here, as dlsym assumes
		 */
		memcpy((char *)l->table + i * sizeof(p), &p, sizeof(p));
	}
	/* never closed: the table points into it for the rest of the process */
	l->handle = h;
	return 0;
}

int lazylib_open(struct lazylib *l, char *err, size_t errlen)
{
	pthread_mutex_lock(&l->lock);
	if (l->state == 0)
		l->state = load(l) == 0 ? 1 : -1;
	int state = l->state;
	pthread_mutex_unlock(&l->lock);
	if (state < 0) {
		errtext_set(err, errlen, NULL, "%s", l->why);
		return -1;
	}
	return 0;
}

void *lazylib_symbol(struct lazylib *l, const char *name)
{
	pthread_mutex_lock(&l->lock);
	void *h = l->state == 1 ? l->handle : NULL;
	pthread_mutex_unlock(&l->lock);
	return h ? dlsym(h, name) : NULL;
}

struct warm {
	struct lazylib *const *libs;
	size_t n;
};

static void *warm_main(void *arg)
{
	struct warm *w = arg;
	for (size_t i = 0; i < w->n; i++)
		(void)lazylib_open(w->libs[i], NULL, 0);
	free(w);
	return NULL;
}

void lazylib_warm(struct lazylib *const *libs, size_t n)
{
	struct warm *w = malloc(sizeof(*w));
	if (!w)
		return;
	*w = (struct warm){libs, n};
	if (thread_start(NULL, true, warm_main, w) < 0)
		free(w);
}

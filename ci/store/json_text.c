/* ci/store/json_text.c: a jansson document as a file's text (see json_text.h). */
#include "ci/store/json_text.h"

#include <stdlib.h>
#include <string.h>

char *json_text(const json_t *root, size_t flags, size_t *len)
{
	char *text = json_dumps(root, flags);
	if (!text)
		return NULL;
	size_t n = strlen(text);
	char *with_nl = realloc(text, n + 2);
	if (!with_nl) {
		free(text);
		return NULL;
	}
	with_nl[n] = '\n';
	with_nl[n + 1] = '\0';
	if (len)
		*len = n + 1;
	return with_nl;
}

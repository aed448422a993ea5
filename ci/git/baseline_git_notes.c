/* ci/git/baseline_git_notes.c: each run's summary kept as a git note on the commit it measured,
 * and the notes read back along the first parents as the history the trend rule needs. */
#include "ci/git/baseline_git.h"
#include "ci/git/baseline_git_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/git/git2_lib.h"
#include <jansson.h>

#include "base/grow.h"

/* ---- notes ---- */

/* "gate" -> "refs/notes/gate", as git notes --ref does; NULL -> the default. */
static void notes_ref_name(char *out, size_t len, const char *notes_ref)
{
	if (!notes_ref || !*notes_ref)
		notes_ref = BASELINE_DEFAULT_NOTES_REF;
	if (strncmp(notes_ref, "refs/", 5) == 0)
		snprintf(out, len, "%s", notes_ref);
	else if (strncmp(notes_ref, "notes/", 6) == 0)
		snprintf(out, len, "refs/%s", notes_ref);
	else
		snprintf(out, len, "refs/notes/%s", notes_ref);
}

static int parse_commit_id(git_oid *out, const char *hex, char *err, size_t errlen)
{
	if (!hex || strlen(hex) != GIT_OID_HEXSZ || git_oid_fromstr(out, hex) < 0) {
		set_err(err, errlen, "\"%s\" is not a full commit id", hex ? hex : "(null)");
		return BASELINE_ERROR;
	}
	return BASELINE_OK;
}

/* Stores text as the note of commit under notes_ref. */
static int note_create(struct baseline_repo *repo, const char *notes_ref, const char *commit,
                       const char *text, bool overwrite, char *err, size_t errlen);

int baseline_git_note_write(struct baseline_repo *repo, const char *notes_ref, const char *commit,
                            const struct baseline *b, bool overwrite, char *err, size_t errlen)
{
	char *text = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (baseline_summary_format(&text, b, err, errlen) != BASELINE_OK)
		return BASELINE_ERROR;
	int rc = note_create(repo, notes_ref, commit, text, overwrite, err, errlen);
	free(text);
	return rc;
}

int baseline_git_note_write_parts(struct baseline_repo *repo, const char *notes_ref,
                                  const char *commit, const struct baseline *whole,
                                  const struct baseline *const *parts, const int *ks, size_t n,
                                  char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	json_t *root = baseline_summary_json(whole, err, errlen);
	json_t *map = json_object();
	int bad = !root || !map;
	for (size_t i = 0; !bad && i < n; i++) {
		char key[16];
		snprintf(key, sizeof(key), "%d", ks[i]);
		json_t *p = baseline_summary_json(parts[i], err, errlen);
		bad = !p || json_object_set_new(map, key, p) < 0;
	}
	if (!bad)
		bad = json_object_set_new(root, "partitions", map) < 0;
	else
		json_decref(map);
	char *text = bad ? NULL : json_dumps(root, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(root);
	if (!text) {
		if (!err || !err[0])
			set_err(err, errlen, "out of memory writing the note");
		return BASELINE_ERROR;
	}
	size_t len = strlen(text);
	char *line = realloc(text, len + 2);
	if (!line) {
		free(text);
		set_err(err, errlen, "out of memory writing the note");
		return BASELINE_ERROR;
	}
	memcpy(line + len, "\n", 2);
	int rc = note_create(repo, notes_ref, commit, line, false, err, errlen);
	free(line);
	return rc;
}

static int note_create(struct baseline_repo *repo, const char *notes_ref, const char *commit,
                       const char *text, bool overwrite, char *err, size_t errlen)
{
	char ref[256];
	git_oid id, note_id;
	git_signature *sig = NULL;
	git_commit *c = NULL;
	int rc = BASELINE_ERROR, grc;

	notes_ref_name(ref, sizeof(ref), notes_ref);
	if (!git_reference_is_valid_name(ref)) {
		set_err(err, errlen, "notes ref %s is not a valid reference name", ref);
		return BASELINE_ERROR;
	}
	if (parse_commit_id(&id, commit, err, errlen) < 0)
		return BASELINE_ERROR;
	grc = git_commit_lookup(&c, repo->repo, &id);
	if (grc < 0) {
		bgit_fail(err, errlen, grc, NULL, "cannot add a note to %.7s", commit);
		goto out;
	}
	if (bgit_signature(&sig, repo->repo, err, errlen) < 0)
		goto out;
	grc = git_note_create(&note_id, repo->repo, ref, sig, sig, &id, text, overwrite);
	if (grc == GIT_EEXISTS) {
		set_err(err, errlen,
		        "commit %.7s already has a note in %s; remove it (git notes "
		        "--ref %s remove %.7s) or overwrite it",
		        commit, ref, ref, commit);
		goto out;
	}
	if (grc < 0) {
		bgit_fail(err, errlen, grc, NULL, "cannot write the note of %.7s in %s", commit,
		          ref);
		goto out;
	}
	rc = BASELINE_OK;
out:
	git_signature_free(sig);
	git_commit_free(c);
	return rc;
}

/* the summary of partition k in a merged run's note (its "partitions" object), as
 * text for baseline_summary_parse; *text NULL when the note is no merged run's (then it is
 * read whole). BASELINE_MISSING when it is a merged run's without partition k, or when k is 0
 * (the whole suite's figures are the note's own). */
static int note_partition(char **text, const char *msg, size_t len, int k)
{
	*text = NULL;
	if (!strstr(msg, "\"partitions\""))
		return BASELINE_OK;
	json_t *root = json_loadb(msg, len, 0, NULL);
	json_t *parts = root ? json_object_get(root, "partitions") : NULL;
	if (!json_is_object(parts)) {
		json_decref(root);
		return BASELINE_OK;
	}
	char key[16];
	snprintf(key, sizeof(key), "%d", k);
	json_t *mine = k > 0 ? json_object_get(parts, key) : NULL;
	if (k > 0 && mine)
		*text = json_dumps(mine, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(root);
	return k == 0 ? BASELINE_OK : *text ? BASELINE_OK : BASELINE_MISSING;
}

/* BASELINE_MISSING when id has no note in ref (or, partition > 0, a merged run's note has no
 * summary of that partition). */
static int note_read_part(struct baseline *out, git_repository *repo, const char *ref,
                          const git_oid *id, int partition, char *err, size_t errlen);

static int note_read(struct baseline *out, git_repository *repo, const char *ref, const git_oid *id,
                     char *err, size_t errlen)
{
	return note_read_part(out, repo, ref, id, 0, err, errlen);
}

static int note_read_part(struct baseline *out, git_repository *repo, const char *ref,
                          const git_oid *id, int partition, char *err, size_t errlen)
{
	git_note *note = NULL;
	char hex[BASELINE_OID_HEX], name[512];
	bgit_oid_hex(hex, id);
	int grc = git_note_read(&note, repo, ref, id);
	if (grc == GIT_ENOTFOUND) {
		set_err(err, errlen, "commit %.7s has no note in %s", hex, ref);
		return BASELINE_MISSING;
	}
	if (grc < 0)
		return bgit_fail(err, errlen, grc, NULL, "cannot read the note of %.7s in %s", hex,
		                 ref);
	const char *msg = git_note_message(note);
	size_t len = msg ? strlen(msg) : 0;
	snprintf(name, sizeof(name), "note %s of %.7s", ref, hex);
	char *part = NULL;
	int rc =
	        partition > 0 ? note_partition(&part, msg ? msg : "", len, partition) : BASELINE_OK;
	if (rc == BASELINE_MISSING)
		set_err(err, errlen, "the note of %.7s in %s has no figures of partition %d", hex,
		        ref, partition);
	else if (part)
		rc = baseline_summary_parse(out, part, strlen(part), name, err, errlen);
	else
		rc = baseline_summary_parse(out, msg ? msg : "", len, name, err, errlen);
	free(part);
	git_note_free(note);
	return rc;
}

int baseline_git_note_read(struct baseline *out, struct baseline_repo *repo, const char *notes_ref,
                           const char *commit, char *err, size_t errlen)
{
	char ref[256];
	git_oid id;
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	notes_ref_name(ref, sizeof(ref), notes_ref);
	if (parse_commit_id(&id, commit, err, errlen) < 0)
		return BASELINE_ERROR;
	return note_read(out, repo->repo, ref, &id, err, errlen);
}

/* ---- history ---- */

void baseline_history_clear(struct baseline_history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->count; i++)
		baseline_clear(&h->items[i]);
	free(h->items);
	free(h->noted);
	memset(h, 0, sizeof(*h));
}

/* The capacities of the history's two arrays (they grow apart when one allocation fails). */
struct history_caps {
	size_t items, noted;
};

static int history_push(struct baseline_history *h, struct history_caps *cap, struct baseline *b,
                        const git_oid *noted)
{
	if (GROW(h->items, cap->items, h->count + 1, 16) < 0 ||
	    GROW(h->noted, cap->noted, h->count + 1, 16) < 0)
		return -1;
	h->items[h->count] = *b;
	bgit_oid_hex(h->noted[h->count], noted);
	h->count++;
	memset(b, 0, sizeof(*b));
	return 0;
}

/* Collected newest first; the trend rule and the listing want oldest first. */
static void history_reverse(struct baseline_history *h)
{
	for (size_t i = 0, j = h->count ? h->count - 1 : 0; i < j; i++, j--) {
		struct baseline t = h->items[i];
		h->items[i] = h->items[j];
		h->items[j] = t;
		char hex[BASELINE_OID_HEX];
		memcpy(hex, h->noted[i], sizeof(hex));
		memcpy(h->noted[i], h->noted[j], sizeof(hex));
		memcpy(h->noted[j], hex, sizeof(hex));
	}
}

/* Walks the first parents from c (taken over: freed here) and collects the notes under ref,
 * newest first. */
static int history_walk(struct baseline_history *out, git_repository *r, const char *ref,
                        git_commit *c, size_t max_entries, size_t max_walk, int partition,
                        char *err, size_t errlen)
{
	struct history_caps cap = {0};
	int rc = BASELINE_ERROR, grc;
	bool shallow = git_repository_is_shallow(r) == 1;
	while (c && out->walked < max_walk && (!max_entries || out->count < max_entries)) {
		struct baseline b;
		char why[512];
		out->walked++;
		int nrc = note_read_part(&b, r, ref, git_commit_id(c), partition, why, sizeof(why));
		if (nrc == BASELINE_OK) {
			if (history_push(out, &cap, &b, git_commit_id(c)) < 0) {
				baseline_clear(&b);
				set_err(err, errlen, "out of memory");
				goto out;
			}
		} else if (nrc == BASELINE_ERROR) {
			/* one bad note must not hide the others: count it, keep the newest reason
			 */
			if (!out->unreadable)
				snprintf(out->unreadable_why, sizeof(out->unreadable_why), "%s",
				         why);
			out->unreadable++;
		}
		if (git_commit_parentcount(c) == 0)
			break;
		git_commit *p = NULL;
		grc = git_commit_parent(&p, c, 0);
		if (grc == GIT_ENOTFOUND && shallow) {
			out->shallow_end = true; /* the clone's history ends here */
			break;
		}
		if (grc < 0) {
			char hex[BASELINE_OID_HEX];
			bgit_oid_hex(hex, git_commit_id(c));
			bgit_fail(err, errlen, grc,
			          "the clone may be incomplete: fetch more history",
			          "cannot read the parent of %.7s", hex);
			goto out;
		}
		git_commit_free(c);
		c = p;
	}
	rc = BASELINE_OK;
out:
	git_commit_free(c);
	return rc;
}

int baseline_git_history(struct baseline_history *out, struct baseline_repo *repo,
                         const char *notes_ref, const char *from, size_t max_entries,
                         size_t max_walk, char *err, size_t errlen)
{
	return baseline_git_history_partition(out, repo, notes_ref, from, max_entries, max_walk, 0,
	                                      err, errlen);
}

int baseline_git_history_partition(struct baseline_history *out, struct baseline_repo *repo,
                                   const char *notes_ref, const char *from, size_t max_entries,
                                   size_t max_walk, int partition, char *err, size_t errlen)
{
	git_repository *r = repo->repo;
	git_commit *c = NULL;
	git_reference *nref = NULL;
	char ref[256];

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	if (!from || !*from)
		from = "HEAD";
	if (!max_walk)
		max_walk = BASELINE_HISTORY_MAX_WALK;
	notes_ref_name(ref, sizeof(ref), notes_ref);

	int grc = git_reference_lookup(&nref, r, ref);
	if (grc == GIT_ENOTFOUND) {
		out->notes_ref_missing = true;
		return BASELINE_OK;
	}
	if (grc < 0)
		return bgit_fail(err, errlen, grc, NULL, "cannot read the notes ref %s", ref);
	git_reference_free(nref);
	if (strcmp(from, "HEAD") == 0 && git_repository_head_unborn(r) == 1)
		return BASELINE_OK;

	grc = bgit_resolve_commit(&c, r, from);
	if (grc < 0)
		return bgit_fail(err, errlen, grc, NULL, "cannot resolve %s for the history", from);
	if (history_walk(out, r, ref, c, max_entries, max_walk, partition, err, errlen) !=
	    BASELINE_OK) {
		baseline_history_clear(out);
		return BASELINE_ERROR;
	}
	history_reverse(out);
	return BASELINE_OK;
}

int baseline_history_format_json(char **out, const struct baseline_history *h, char *err,
                                 size_t errlen)
{
	json_t *arr = json_array();
	*out = NULL;
	if (!arr)
		goto oom;
	for (size_t i = 0; i < h->count; i++) {
		json_t *o = baseline_summary_json(&h->items[i], err, errlen);
		if (!o) {
			json_decref(arr);
			return BASELINE_ERROR;
		}
		if (json_object_set_new(o, "noted_commit", json_string(h->noted[i])) < 0) {
			json_decref(o);
			json_decref(arr);
			goto oom;
		}
		if (json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			goto oom;
		}
	}
	char *s = json_dumps(arr, JSON_SORT_KEYS | JSON_INDENT(2));
	json_decref(arr);
	if (!s)
		goto oom;
	if (text_append(&s, "\n") < 0) {
		free(s);
		goto oom;
	}
	*out = s;
	return BASELINE_OK;
oom:
	set_err(err, errlen, "out of memory");
	return BASELINE_ERROR;
}

/* gate/config/config_template.c: `gate config init`: the short gate.toml a project starts from,
 * and its write, which never replaces a file (config.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/errtext.h"
#include "gate/config/config.h"

/* Every value at its default (tests/test_config_template.c loads it and compares it with
 * config_default's): writing the file changes nothing until someone edits it. [growth.code]
 * is written because [growth] max and floor replace code's wider defaults otherwise. */
const char config_template[] =
        "# gate.toml: the memory limits gate applies to this project's test suite.\n"
        "# Written by `gate config init`, every value at its default: change what you need.\n"
        "# Every key is optional; a key left out keeps its default. All keys, their defaults and\n"
        "# what they do: `gate config reference` (docs/configuration.md in gate's source).\n"
        "# `gate config check gate.toml` validates this file and prints the configuration in "
        "effect.\n"
        "# Sizes: \"512 kB\", \"64 MB\", \"1 GiB\" or bytes; percents: \"10 %\"; many limits "
        "also take \"off\".\n"
        "\n"
        "# The growth rule: a memory category (processes_used, ets, binary, ...) fails when it "
        "grew\n"
        "# by more than max percent of its figure before the run AND by more than floor.\n"
        "[growth]\n"
        "# Default \"10 %\", for every category without a [growth.CATEGORY] table of its own.\n"
        "max = \"10 %\"\n"
        "# Default \"1 MB\": smaller growth never fails, so that tiny categories cannot alarm.\n"
        "floor = \"1 MB\"\n"
        "\n"
        "# Code grows as the suite loads its modules, hence a wider limit: default \"50 %\" and\n"
        "# \"16 MB\" (without this table, [growth] max and floor above would replace them).\n"
        "[growth.code]\n"
        "max = \"50 %\"\n"
        "floor = \"16 MB\"\n"
        "\n"
        "# ETS tables created during the run and still alive after it (a table per test never\n"
        "# deleted): at most max_left_alive of them may hold left_alive_floor or more each.\n"
        "[ets]\n"
        "# Default 0.\n"
        "max_left_alive = 0\n"
        "# Default \"1 MB\": smaller tables (caches created on first use) never count.\n"
        "left_alive_floor = \"1 MB\"\n"
        "\n"
        "[process]\n"
        "# Processes born during the run and still alive after it (workers nobody stops).\n"
        "# Default 100.\n"
        "max_born = 100\n"
        "# Messages waiting in one process's mailbox after the run. Default 10000.\n"
        "max_mailbox = 10000\n"
        "# The memory of one process after GC. Default \"100 MB\".\n"
        "max_memory = \"100 MB\"\n"
        "\n"
        "# The baseline: the main branch's figures, committed by `gate baseline update "
        "--commit`.\n"
        "[baseline]\n"
        "# Where it is read from, HEAD when that ref does not exist. Default \"origin/main\".\n"
        "ref = \"origin/main\"\n"
        "# A figure fails when it is more than max above its baseline AND more than floor.\n"
        "# Defaults \"20 %\" and \"1 MB\".\n"
        "max = \"20 %\"\n"
        "floor = \"1 MB\"\n"
        "# true: a missing baseline fails the gate instead of skipping the baseline rule.\n"
        "# Default false.\n"
        "require = false\n"
        "\n"
        "# Severity: \"error\" (the default) fails the gate, \"warn\" reports a rule's "
        "findings\n"
        "# without failing it, e.g. while a team adopts gate:\n"
        "# [severity]\n"
        "# ets = \"warn\"\n";

static int refuse_existing(const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (S_ISDIR(st->st_mode))
		errtext_set(err, errlen, path,
		            "is a directory; give the path of the file to write, e.g. %s/gate.toml",
		            path);
	else
		errtext_set(err, errlen, path,
		            "already exists, and gate config init never writes over a file: remove "
		            "it first, or pass another FILE (gate config init FILE)");
	return -1;
}

/* The new name on disk for good, as atomic.c does after its rename; best effort. */
static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

int config_template_write(const char *path, char *err, size_t errlen)
{
	struct atomic_file t = {0};
	struct stat st;

	if (lstat(path, &st) == 0)
		return refuse_existing(path, &st, err, errlen);
	if (errno != ENOENT && errno != ENOTDIR) {
		errtext_set(err, errlen, path, "cannot look for it: %s", strerror(errno));
		return -1;
	}
	if (atomic_file_write(&t, path, config_template, strlen(config_template), false, err,
	                      errlen) < 0)
		return -1;
	/* link(2), not rename(2): it refuses a name that exists, so that a file created since the
	 * look above is not replaced either; the temp name is then removed */
	if (link(t.tmp, path) == 0) {
		sync_dir(t.dir);
		atomic_file_abort(&t);
		return 0;
	}
	int why = errno;
	if (why == EEXIST && lstat(path, &st) == 0) {
		atomic_file_abort(&t);
		return refuse_existing(path, &st, err, errlen);
	}
	if (why == EPERM || why == EOPNOTSUPP || why == ENOSYS || why == EMLINK)
		return atomic_file_commit(&t, err, errlen); /* no hard links there: the rename */
	errtext_set(err, errlen, path, "cannot create it from %s: %s", t.tmp, strerror(why));
	atomic_file_abort(&t);
	return -1;
}

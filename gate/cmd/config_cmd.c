/* gate/cmd/config_cmd.c: `gate config check`, `init` and `reference`: a gate.toml read and
 * printed as gate understands it, a short one written to start from, and the reference of
 * every key. */
#include "gate/cmd/config_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gate/config/config.h"
#include "gate/error.h"
#include "gate/exit.h"

static const char config_help[] =
        "usage: gate config check [FILE]\n"
        "       gate config init [FILE]\n"
        "       gate config reference\n"
        "\n"
        "  check      validates FILE (default: gate.toml in the current directory) and prints\n"
        "             the effective configuration, defaults included, as TOML\n"
        "  init       writes a short commented FILE (default: gate.toml in the current\n"
        "             directory) with the limits teams change most, every value at its\n"
        "             default; never writes over an existing file\n"
        "  reference  prints every table and key of gate.toml as Markdown: its type, default,\n"
        "             example and what it does (docs/configuration.md)\n"
        "\n"
        "exit codes: 0 done, 2 the file is invalid or could not be read or written\n";

/* argv[2], the subcommand's optional FILE: def when absent; NULL once the help is printed
 * (*rc 0) or a usage error reported (*rc 2). */
static const char *file_arg(int argc, char **argv, const char *def, int *rc)
{
	*rc = GATE_EXIT_PASS;
	if (argc > 3) {
		*rc = gate_usage_error("config ", "unexpected argument %s", argv[3]);
		return NULL;
	}
	const char *path = argc == 3 ? argv[2] : def;
	if (path[0] != '-' || strcmp(path, "-") == 0)
		return path;
	if (strcmp(path, "--help") == 0 || strcmp(path, "-h") == 0)
		fputs(config_help, stdout);
	else
		*rc = gate_usage_error("config ", "unknown option %s", path);
	return NULL;
}

static int config_check(int argc, char **argv)
{
	int rc;
	const char *path = file_arg(argc, argv, "gate.toml", &rc);
	if (!path)
		return rc;
	struct config cfg;
	char err[2048];
	if (config_default(&cfg) < 0 || config_load(&cfg, path, err, sizeof(err)) < 0) {
		config_clear(&cfg);
		return gate_error("%s", err);
	}
	fprintf(stderr, "gate: %s is valid\n", path);
	config_print(&cfg, stdout);
	config_clear(&cfg);
	return GATE_EXIT_PASS;
}

static int config_init(int argc, char **argv)
{
	int rc;
	const char *path = file_arg(argc, argv, "gate.toml", &rc);
	if (!path)
		return rc;
	if (strcmp(path, "-") == 0)
		return gate_usage_error("config ", "init writes a file: give its path, not -");
	char err[2048];
	if (config_template_write(path, err, sizeof(err)) < 0)
		return gate_error("%s", err);
	size_t lines = 0;
	for (const char *p = config_template; *p; p++)
		lines += *p == '\n';
	fprintf(stderr,
	        "gate: wrote %s (%zu lines, every value at its default): edit it, then check it "
	        "with gate config check %s\n",
	        path, lines, path);
	return GATE_EXIT_PASS;
}

static int config_reference_cmd(int argc, char **argv)
{
	if (argc > 2) {
		if (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0) {
			fputs(config_help, stdout);
			return GATE_EXIT_PASS;
		}
		return gate_usage_error("config ", "unexpected argument %s", argv[2]);
	}
	if (config_reference(stdout) < 0)
		return gate_error("config reference: out of memory");
	if (fflush(stdout) != 0 || ferror(stdout))
		return gate_error("config reference: cannot write to stdout: %s", strerror(errno));
	return GATE_EXIT_PASS;
}

int config_cmd_main(int argc, char **argv)
{
	if (argc < 2)
		return gate_usage_error("config ", "%s",
		                        "config needs a subcommand: check, init, reference");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(config_help, stdout);
		return GATE_EXIT_PASS;
	}
	if (strcmp(argv[1], "check") == 0)
		return config_check(argc, argv);
	if (strcmp(argv[1], "init") == 0)
		return config_init(argc, argv);
	if (strcmp(argv[1], "reference") == 0)
		return config_reference_cmd(argc, argv);
	return gate_usage_error("config ",
	                        "unknown config subcommand %s (expected: check, init, reference)",
	                        argv[1]);
}

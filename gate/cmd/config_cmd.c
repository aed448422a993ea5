/* gate/cmd/config_cmd.c: `gate config check`: a gate.toml read and printed as gate
 * understands it. */
#include "gate/cmd/config_cmd.h"

#include <stdio.h>
#include <string.h>

#include "gate/config/config.h"
#include "gate/error.h"
#include "gate/exit.h"

static const char config_help[] =
        "usage: gate config check [FILE]\n"
        "\n"
        "Validates FILE (default: gate.toml in the current directory) and prints the effective\n"
        "configuration, defaults included, as TOML.\n";

int config_cmd_main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc < 2)
			return gate_usage_error("config ", "%s",
			                        "config needs a subcommand: check");
		fputs(config_help, stdout);
		return GATE_EXIT_PASS;
	}
	if (strcmp(argv[1], "check") != 0)
		return gate_usage_error("config ", "unknown config subcommand %s (expected: check)",
		                        argv[1]);
	if (argc > 3)
		return gate_usage_error("config ", "unexpected argument %s", argv[3]);
	const char *path = argc == 3 ? argv[2] : "gate.toml";
	if (path[0] == '-' && strcmp(path, "-") != 0) {
		if (strcmp(path, "--help") == 0 || strcmp(path, "-h") == 0) {
			fputs(config_help, stdout);
			return GATE_EXIT_PASS;
		}
		return gate_usage_error("config ", "unknown option %s", path);
	}
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

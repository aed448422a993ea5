/* gate/cmd/hook_cmd.h: `gate hook install|uninstall`: gate as a git pre-push or pre-commit hook
 * (ci/git/hook.h does the work). */
#ifndef GATE_HOOK_CMD_H
#define GATE_HOOK_CMD_H

/* argv[0] is "hook". Returns the exit code. */
int hook_cmd_main(int argc, char **argv);

#endif

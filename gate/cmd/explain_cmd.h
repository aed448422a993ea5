/* gate/cmd/explain_cmd.h: `gate explain RULE`: what a rule measures, its usual causes and its
 * usual fixes (rules/explain.h); `--list` the rules, `--markdown` all of them as
 * docs/findings.md holds them. */
#ifndef GATE_EXPLAIN_CMD_H
#define GATE_EXPLAIN_CMD_H

int explain_cmd_main(int argc, char **argv);

#endif

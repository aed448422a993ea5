/* gate/node/node_erl.h: the command line of the node gate starts for an Erlang (rebar3) project:
 * `erl` with the project's code paths and a bootstrap in Erlang that serves gate's pipe pair as
 * the Mix bootstrap of node.c does (see node.h), ready at once (the project was compiled by
 * rebar3 before the node starts). */
#ifndef GATE_NODE_ERL_H
#define GATE_NODE_ERL_H

#include <stddef.h>

/* The argv of the node: erl (NULL: "erl" from PATH), erl_flags split on blanks in place (the
 * caller's copy to cut), -pa and the code paths, the bootstrap. NULL-terminated and malloc'd;
 * the strings are borrowed. Returns NULL when out of memory. */
char **node_erl_argv(const char *erl, const char *const *code_paths, size_t ncode_paths,
                     char *erl_flags);

#endif

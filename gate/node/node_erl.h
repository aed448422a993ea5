/* gate/node/node_erl.h: the command line of the node gate starts for an Erlang (rebar3) project:
 * `erl` with the project's code paths and a bootstrap in Erlang that serves gate's pipe pair as
 * the Mix bootstrap of node.c does (see node.h), ready at once (the project was compiled by
 * rebar3 before the node starts). */
#ifndef GATE_NODE_ERL_H
#define GATE_NODE_ERL_H

#include <stddef.h>

#include "gate/node/node.h"

/* The argv of the node (NULL-terminated, malloc'd; the strings are borrowed from opts and
 * erl_flags, split on blanks in place: erl_flags is the caller's copy to cut). Returns NULL when
 * out of memory. */
char **node_erl_argv(const struct node_opts *opts, char *erl_flags);

#endif

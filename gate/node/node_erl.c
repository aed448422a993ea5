/* gate/node/node_erl.c: the node of an Erlang (rebar3) project: erl, its code paths and the
 * bootstrap in Erlang (see node_erl.h). */
#include "gate/node/node_erl.h"

#include <stdlib.h>
#include <string.h>

/* The bootstrap, as node.c's boot_serve in Erlang: a process that opens gate's pipe pair as a
 * port (fd 3: requests and the lifeline, fd 4: replies), reads the first frame
 * ({gate_boot, Name | none, Cookie, Unset, Preload}: distribution started under that name and
 * cookie when gate asked for it; Unset and Preload are the Mix node's and ignored), then serves
 * each {call, Id, M, F, A} in a process of its own, answering {gate_reply, Id, Result} as rpc
 * would. The project is compiled and on the code path already: the node is ready as soon as the
 * frame is read ({gate_ready}). End-of-file on fd 3 (gate is gone) halts the node. */
static const char boot_erl[] =
        "P = spawn(fun() -> register(gate_node_boot, self()), "
        "L = open_port({fd, 3, 4}, [binary, {packet, 4}, eof]), "
        "O = fun(T) -> port_command(L, term_to_binary(T)) end, "
        "receive {L, {data, B}} -> "
        "{gate_boot, N, C, _, _} = binary_to_term(B), "
        "case N of none -> ok; _ -> case net_kernel:start([N, longnames]) of "
        "{ok, _} -> erlang:set_cookie(C); "
        "E -> io:format(standard_error, \"cannot start distribution as ~s: ~p~n\", [N, E]), "
        "erlang:halt(1) end end; "
        "{L, eof} -> erlang:halt(3) end, "
        "W = fun W() -> receive "
        "{L, {data, B2}} -> {call, I, M, F, A} = binary_to_term(B2), "
        "spawn(fun() -> O({gate_reply, I, try apply(M, F, A) catch throw:T -> T; "
        "exit:X -> {badrpc, {'EXIT', X}}; "
        "error:X:S -> {badrpc, {'EXIT', {X, S}}} end}) end), W(); "
        "gate_booted -> O({gate_ready}), W(); "
        "{L, eof} -> erlang:halt(3); "
        "_ -> W() end end, "
        "W() end), P ! gate_booted.";

char **node_erl_argv(const char *erl, const char *const *code_paths, size_t ncode_paths,
                     char *erl_flags)
{
	size_t nflags = 0;
	for (char *p = erl_flags; p && *p;) {
		p += strspn(p, " \t\n");
		if (!*p)
			break;
		nflags++;
		p += strcspn(p, " \t\n");
	}
	size_t n = 4 + nflags + 1 + ncode_paths + 2 + 1;
	char **argv = calloc(n, sizeof(*argv));
	if (!argv)
		return NULL;
	size_t k = 0;
	argv[k++] = (char *)(erl ? erl : "erl");
	argv[k++] = "-noshell";
	argv[k++] = "-noinput";
	for (char *p = erl_flags; p && *p;) {
		p += strspn(p, " \t\n");
		if (!*p)
			break;
		argv[k++] = p;
		p += strcspn(p, " \t\n");
		if (*p)
			*p++ = '\0';
	}
	if (ncode_paths) {
		argv[k++] = "-pa";
		for (size_t i = 0; i < ncode_paths; i++)
			argv[k++] = (char *)code_paths[i];
	}
	argv[k++] = "-eval";
	argv[k++] = (char *)boot_erl;
	argv[k] = NULL;
	return argv;
}

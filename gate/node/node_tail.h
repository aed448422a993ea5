/* gate/node/node_tail.h: the started node's stderr, passed through to gate's and its tail kept.
 *
 * When a node gate starts dies while booting, the reason is what Mix printed on stderr
 * ("** (Mix) ..."): the tail is quoted in gate's error (console and JUnit) with a hint. One
 * tail per process (gate starts at most one node). A thread copies the pipe to fd 2 as it
 * comes, so the node never blocks on it, and keeps the last NODE_TAIL_BYTES. Signals are
 * blocked in that thread: they stay the main thread's.
 */
#ifndef GATE_NODE_TAIL_H
#define GATE_NODE_TAIL_H

#include <stddef.h>

#define NODE_TAIL_BYTES 4096

/* Creates the pipe and starts the thread. Returns the write end for the node's stderr
 * (close it in gate once the node has it: node_tail_started), or -1 (errno set): the node
 * then keeps gate's stderr and errors quote nothing. */
int node_tail_start(void);

/* Closes gate's copy of the write end, so the thread sees end-of-file once the node and
 * everything it started are gone. */
void node_tail_started(void);

/* Copies what is left in the pipe to stderr and stops the thread (it does not wait for
 * processes that escaped the node's group and still hold the pipe). A no-op when not started. */
void node_tail_stop(void);

/* The last max_lines non-blank lines of the tail, joined with "; ", control characters and
 * ANSI colours removed, into out (truncated at the front to fit). "" when there is none. */
void node_tail_text(char *out, size_t len, int max_lines);

/* A hint for what the tail says Mix failed on ("" when it says nothing gate knows):
 * dependencies not fetched, an Elixir older than the project declares. */
const char *node_tail_hint(const char *tail);

#endif

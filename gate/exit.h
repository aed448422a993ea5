/* gate/exit.h: gate's exit codes, the one place they are defined. CI must tell "no" from
 * "couldn't": 1 is a verdict about the code under test, 2 says gate itself could not run. */
#ifndef GATE_EXIT_H
#define GATE_EXIT_H

enum gate_exit {
	GATE_EXIT_PASS = 0,  /* every memory rule and every test passed */
	GATE_EXIT_FAIL = 1,  /* a memory rule or a test failed */
	GATE_EXIT_ERROR = 2, /* could not run: usage, config, node, git, I/O */
};

/* A run ended by SIGINT or SIGTERM exits with the shell's convention, 128 + the signal. */
#define GATE_EXIT_SIGNAL(sig) (128 + (sig))

#endif

/* tests/bench/hwm.c: gate's own peak RSS for make bench-scale, preloaded into gate alone.
 *
 * GNU time's %M is the largest RSS of the process and of every child it waited for: gate's
 * node (through its subreaper) is one, so %M says the node's peak, not gate's. This library,
 * preloaded with LD_PRELOAD, writes gate's own VmHWM (the peak RSS of gate's address space,
 * /proc/self/status) to $GATE_BENCH_HWM when gate exits. The constructor drops LD_PRELOAD
 * from the environment so that the processes gate starts (the node, its shell wrappers) do
 * not load it, and the destructor writes only in the process that loaded it first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pid_t hwm_pid;

__attribute__((constructor)) static void hwm_start(void)
{
	hwm_pid = getpid();
	unsetenv("LD_PRELOAD");
}

__attribute__((destructor)) static void hwm_write(void)
{
	const char *path = getenv("GATE_BENCH_HWM");
	char line[256];
	FILE *in, *out;

	if (!path || getpid() != hwm_pid || !(in = fopen("/proc/self/status", "r")))
		return;
	while (fgets(line, sizeof(line), in))
		if (strncmp(line, "VmHWM:", 6) == 0 && (out = fopen(path, "w"))) {
			fputs(line + 6, out); /* "  123456 kB" */
			fclose(out);
		}
	fclose(in);
}

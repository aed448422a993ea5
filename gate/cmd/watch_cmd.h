/* gate/cmd/watch_cmd.h: `gate watch`: light snapshots of a running node at an interval, as JSON
 * Lines or Prometheus text, with alerts against the rolling average. */
#ifndef GATE_WATCH_CMD_H
#define GATE_WATCH_CMD_H

int watch_cmd_main(int argc, char **argv);

#endif

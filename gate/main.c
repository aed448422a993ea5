/* gate/main.c: the entry point; everything else lives in the library the tests link. */
#include "gate/cmd/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}

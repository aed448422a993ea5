/* base/outpath.h: where gate may write. An output path inside the project must not lead out of
 * it through a symlink (a link planted in _build/ or .gate/ by a test, a dependency or a
 * pull request would otherwise aim gate's writes at any file the CI user can write).
 *
 * Policy: a path whose spelled-out form (made absolute against the current directory,
 * "." and ".." resolved as text) lies inside the project must still lie inside it once
 * every symlink along it is resolved: its existing parent directories, and the file itself
 * when it is a symlink. A path spelled outside the project (an absolute path, or a relative
 * one that leaves it) was asked for explicitly and is not checked. --allow-outside turns the
 * check off.
 */
#ifndef GATE_BASE_OUTPATH_H
#define GATE_BASE_OUTPATH_H

#include <stddef.h>

/* project is a realpath. what names the output in messages ("the JUnit report"). Returns 0
 * when path may be written, or -1 with err saying where the symlink leads and what to do. */
int outpath_check(const char *project, const char *path, const char *what, char *err,
                  size_t errlen);

#endif

#!/bin/sh
# integrations/pre-commit.sh: the entry of .pre-commit-hooks.yaml: builds gate from this checkout when
# needed (GATE_BIN: use that gate instead) and runs `gate run ARGS...` from the directory
# the pre-commit framework starts hooks in, the repository's root.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${GATE_BIN:-}" ]; then
	exec "$GATE_BIN" run "$@"
fi
if ! make -s -q -C "$here" build/gate 2>/dev/null; then
	make -s -C "$here" build/gate >&2 || {
		echo "gate: error: cannot build gate in $here: install its libraries (GATE_DEPS=run sh $here/integrations/deps.sh, with the erl and elixir of your project on PATH) or set GATE_BIN" >&2
		exit 2
	}
fi
exec "$here/build/gate" run "$@"

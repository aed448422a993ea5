#!/bin/sh
# tests/bench/run.sh: `make bench`: gate's overhead as ratios measured within one run (this
# machine is shared and noisy, so no absolute times are asserted anywhere).
#   overhead: wall time of `gate run` vs a bare `MIX_ENV=test mix test` on the clean fixture,
#   runs interleaved, medians compared. Target <= 1.10x.
#   attribution: default gate run (module-level attribution) vs gate run
#   --no-attribution (target <= 1.05x), and gate run --per-test vs --no-attribution, on the
#   clean fixture and on a generated suite of 2 000 small tests (20 modules, half async).
# usage: tests/bench/run.sh [ROUNDS]   (default 7)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
gate="$root/${GATE_BUILD:-build}/gate"
rounds=${1:-7}
work=$(mktemp -d "${TMPDIR:-/tmp}/gate-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cp -r "$root/tests/fixtures/clean" "$work/clean"
cd "$work/clean"
export MIX_ENV=test LC_ALL=C
mix compile >/dev/null 2>&1 # both sides start from a compiled project

now_ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

: >"$work/bare"
: >"$work/gate"
: >"$work/noattr"
: >"$work/pertest"
i=0
while [ "$i" -lt "$rounds" ]; do
	t=$(now_ms); mix test >/dev/null 2>&1 || true; echo $(($(now_ms) - t)) >>"$work/bare"
	t=$(now_ms); "$gate" run -q -C . >/dev/null 2>&1 || true; echo $(($(now_ms) - t)) >>"$work/gate"
	t=$(now_ms); "$gate" run -q -C . --no-attribution >/dev/null 2>&1 || true; echo $(($(now_ms) - t)) >>"$work/noattr"
	t=$(now_ms); "$gate" run -q -C . --per-test >/dev/null 2>&1 || true; echo $(($(now_ms) - t)) >>"$work/pertest"
	i=$((i + 1))
done
bare=$(median <"$work/bare")
g=$(median <"$work/gate")
echo "bench: bare mix test runs (ms): $(tr '\n' ' ' <"$work/bare")"
echo "bench: gate run runs (ms):      $(tr '\n' ' ' <"$work/gate")"
awk -v b="$bare" -v g="$g" 'BEGIN { printf "bench: overhead gate run / mix test = %.3fx (medians %s ms / %s ms over '"$rounds"' rounds, target <= 1.10x)\n", g / b, g, b }'
na=$(median <"$work/noattr")
pt=$(median <"$work/pertest")
echo "bench: gate run --no-attribution runs (ms): $(tr '\n' ' ' <"$work/noattr")"
echo "bench: gate run --per-test runs (ms):       $(tr '\n' ' ' <"$work/pertest")"
awk -v a="$g" -v n="$na" 'BEGIN { printf "bench: attribution (module) gate run / gate run --no-attribution = %.3fx (medians %s ms / %s ms over '"$rounds"' rounds, target <= 1.05x)\n", a / n, a, n }'
awk -v p="$pt" -v n="$na" 'BEGIN { printf "bench: attribution (per test) gate run --per-test / gate run --no-attribution = %.3fx (medians %s ms / %s ms over '"$rounds"' rounds)\n", p / n, p, n }'

# The same three on many small tests: 2 000 tests in 20 modules, 10 async and 10 sync, where
# the cost per test edge (module mode: async tests' light snapshots; per test: two GCs) shows.
mkdir -p "$work/many/lib" "$work/many/test"
cat >"$work/many/mix.exs" <<'EOF'
defmodule Many.MixProject do
  use Mix.Project
  def project, do: [app: :many, version: "0.1.0", elixir: "~> 1.14", deps: []]
end
EOF
echo 'defmodule Many do def work(n), do: Enum.sum(1..n) end' >"$work/many/lib/many.ex"
echo 'ExUnit.start()' >"$work/many/test/test_helper.exs"
cat >"$work/many/test/many_test.exs" <<'EOF'
for m <- 1..20 do
  defmodule Module.concat(Many, "T#{m}Test") do
    use ExUnit.Case, async: rem(m, 2) == 0
    for t <- 1..100 do
      test "work #{t}", do: assert(Many.work(unquote(t) * 10) > 0)
    end
  end
end
EOF
cd "$work/many"
mix compile >/dev/null 2>&1
: >"$work/m_gate"
: >"$work/m_noattr"
: >"$work/m_pertest"
i=0
while [ "$i" -lt "$rounds" ]; do
	t=$(now_ms); "$gate" run -q -C . >/dev/null 2>&1 || true; echo $(($(now_ms) - t)) >>"$work/m_gate"
	t=$(now_ms); "$gate" run -q -C . --no-attribution >/dev/null 2>&1 || true; echo $(($(now_ms) - t)) >>"$work/m_noattr"
	t=$(now_ms); "$gate" run -q -C . --per-test >/dev/null 2>&1 || true; echo $(($(now_ms) - t)) >>"$work/m_pertest"
	i=$((i + 1))
done
mg=$(median <"$work/m_gate")
mn=$(median <"$work/m_noattr")
mp=$(median <"$work/m_pertest")
echo "bench: 2 000 small tests: gate run (ms):           $(tr '\n' ' ' <"$work/m_gate")"
echo "bench: 2 000 small tests: --no-attribution (ms):   $(tr '\n' ' ' <"$work/m_noattr")"
echo "bench: 2 000 small tests: --per-test (ms):         $(tr '\n' ' ' <"$work/m_pertest")"
awk -v a="$mg" -v n="$mn" 'BEGIN { printf "bench: 2 000 small tests: attribution (module) / --no-attribution = %.3fx (medians %s ms / %s ms, target <= 1.05x)\n", a / n, a, n }'
awk -v p="$mp" -v n="$mn" 'BEGIN { printf "bench: 2 000 small tests: attribution (per test) / --no-attribution = %.3fx (medians %s ms / %s ms)\n", p / n, p, n }'

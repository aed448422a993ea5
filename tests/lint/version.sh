#!/bin/sh
# tests/lint/version.sh: gate's version is written once, so that a new version is a one-line
# change. It lives in integrations/mix/VERSION (one line, X.Y.Z), because a Hex package and a
# sparse git dependency carry only the Mix package's directory; VERSION at the root is a
# symbolic link to it, read by the Makefile (gate --version, JSON, baselines, the release
# binary's name), the GitHub action and the e2e cases, while the package's mix.exs reads its
# own. No other tracked file may spell the version. Not spelling it:
#   - Markdown (the READMEs, CHANGELOG.md): documentation and history, whose install lines
#     a reader copies as they are;
#   - a release tag (v and the version) in the YAML CI templates and hook manifest, which
#     their users pin as it is;
#   - an Erlang process id (<0.1.0>), and a Mix project's own version: the projects gate is
#     run on (examples/, tests/fixtures/, and app: :name, version: "..." in a script);
#   - test data and format examples, where a version is a recorded value (a run result's or
#     a baseline's "gate" field, the reports drawn from it): the unit tests and their
#     fixtures (tests/*.[ch]), the goldens, the fuzz corpus, and the stored formats' headers.
# usage: sh tests/lint/version.sh [FILE...]   (default: git ls-files); exit 1 names each line
set -u

root=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
src=integrations/mix/VERSION
# the files the list above leaves out: the source and its link, Markdown, the projects gate
# is run on, test data
skip="^(VERSION|$src)\$|\\.md\$|^examples/|^tests/fixtures/|^tests/[^/]*\\.[ch]\$|^tests/golden/|^tests/fuzz/corpus/|^ci/store/baseline_file\\.h\$|^rules/baseline\\.h\$"
bad=0
if [ -L "$root/$src" ] || [ ! -f "$root/$src" ]; then
	echo "version: $src: missing or not a regular file: it is where gate's version is written (one line, X.Y.Z)" >&2
	exit 1
fi
version=$(cat "$root/$src")
if ! printf '%s\n' "$version" | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+' || [ "$(wc -l <"$root/$src")" -ne 1 ]; then
	echo "version: $src: holds '$version', not one line X.Y.Z" >&2
	exit 1
fi
if [ "$(readlink "$root/VERSION")" != "$src" ]; then
	echo "version: VERSION: is not a symbolic link to $src (an editor or sed -i may have replaced it with a copy): rm VERSION && ln -s $src VERSION" >&2
	bad=1
fi

. "$root/tests/lint/text_files.sh"
[ $# -gt 0 ] || cd "$root" || exit 2
files=$(text_files version '' "$@") || exit 2

v=$(printf '%s' "$version" | sed 's/\./\\./g')
spelled="(^|[^0-9.])$v([^0-9.]|\\.([^0-9]|\$)|\$)"
strip() {
	sed -E "s/<[0-9]+\\.[0-9]+\\.[0-9]+>//g; s/(app: :[a-z0-9_]+, version: )\"[^\"]*\"/\\1/g${tag:+; s/$tag([^0-9.]|\$)/\\1/g}" "$1"
}
checked=0
for f in $files; do
	printf '%s\n' "$f" | grep -Eq "$skip" && continue
	checked=$((checked + 1))
	tag=''
	case "$f" in *.yml | *.yaml) tag="v$v" ;; esac
	# process ids, Mix projects' own versions and, in YAML, release tags taken out; the
	# line numbers kept
	strip "$f" | grep -nE "$spelled" |
		while IFS= read -r hit; do
			echo "version: $f:${hit%%:*}: spells gate's version $version (${hit#*:}): read it from VERSION (the Makefile's GATE_VERSION, mix.exs's version, gate/version.h's GATE_VERSION) instead" >&2
		done
	strip "$f" | grep -qE "$spelled" && bad=1
done
[ "$bad" -eq 0 ] && echo "version: ok ($version, written once in $src; $checked text files spell it nowhere else)"
exit "$bad"

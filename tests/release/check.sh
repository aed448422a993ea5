#!/bin/sh
# tests/release/check.sh: checks a release binary (make release runs it before naming the
# binary, .ci/run and the e2e case release_binary_static again): its dynamic dependencies are
# the C library's own objects and nothing else (ldd and the ELF's NEEDED entries), it runs and
# `--version` says "gate VERSION" and that it is a release binary. Prints the newest glibc
# symbol version it needs (the oldest glibc it runs on).
#
#   sh tests/release/check.sh BIN VERSION     exit 0: fine; 1: a check failed (said on stderr)
set -u
bin=$1
want=$2
fail=0
bad() {
	echo "release check: $bin: $*" >&2
	fail=1
}
[ -x "$bin" ] || { echo "release check: $bin: not an executable file" >&2; exit 1; }
# the C library's objects: libc, libm, the dynamic loader (and on glibc before 2.34 libpthread,
# libdl and librt, which are part of it since)
libc_only='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|(/lib64/|/lib/|/usr/lib/[a-z0-9_-]*/)?ld-linux[a-z0-9_.-]*\.so\.[0-9])$'
ldd "$bin" >"$bin.ldd" 2>&1 || bad "ldd failed: $(cat "$bin.ldd")"
awk '{ print $1 }' "$bin.ldd" | while read -r lib; do
	echo "$lib" | grep -Eq "$libc_only" || echo "$lib"
done >"$bin.extra"
[ ! -s "$bin.extra" ] || bad "linked dynamically against more than the C library: $(tr '\n' ' ' <"$bin.extra")(ldd: $(tr '\n' ';' <"$bin.ldd"))"
readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$bin.needed"
while read -r lib; do
	echo "$lib" | grep -Eq "$libc_only" || bad "NEEDED $lib: not the C library's"
done <"$bin.needed"
needed=$(tr '\n' ' ' <"$bin.needed")
rm -f "$bin.ldd" "$bin.extra" "$bin.needed"
"$bin" --version >"$bin.version" 2>&1 || bad "--version failed: $(cat "$bin.version")"
[ "$(head -n 1 "$bin.version")" = "gate $want" ] || bad "--version says '$(head -n 1 "$bin.version")', not 'gate $want'"
grep -q '^build: release binary' "$bin.version" || bad "--version does not say it is a release binary: $(sed -n 2p "$bin.version")"
glibc=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sort -t. -k1,1 -k2,2n -k3,3n -u | tail -n 1)
[ "$fail" -eq 0 ] && echo "release check: $(basename "$bin"): dynamic: ${needed}(the C library only); needs ${glibc:-no versioned glibc symbol}; $(sed -n 2p "$bin.version")"
rm -f "$bin.version"
exit "$fail"

# tests/lint/text_files.sh: sourced by the lint checks that read every file: text_files NAME
# EXCLUDE [FILE...] prints the files to check, one a line: the FILEs given, else the
# repository's tracked files but those matching the extended regex EXCLUDE (empty: none);
# binary and empty files are left out. Exits 2 (NAME: error ...) outside a checkout with no
# FILE given; without FILEs, the caller is at the repository's root.
text_files() {
	name=$1 exclude=$2
	shift 2
	if [ $# -gt 0 ]; then
		printf '%s\n' "$@"
	elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files | { if [ -n "$exclude" ]; then grep -vE "$exclude"; else cat; fi; }
	else
		echo "$name: error: not a git checkout and no files given: run it from the repository" >&2
		exit 2
	fi | while IFS= read -r f; do
		[ -f "$f" ] && grep -Iq . "$f" 2>/dev/null && printf '%s\n' "$f"
	done
}

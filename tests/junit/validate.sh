#!/bin/sh
# tests/junit/validate.sh: checks a JUnit report against the Jenkins xUnit schema (junit-10.xsd).
#
#   sh tests/junit/validate.sh REPORT.xml
#
# The schema is a third-party file and is not part of the repository: it is read from
# $GATE_JUNIT_XSD, else from the workplace's shared folder beside the checkout
# (../shared/junit/junit-10.xsd). Without it this exits 2 saying where it looked.
#
# The schema predates the testcase file/line attributes that GitLab and GitHub read, so they
# are removed from a temp copy first; nothing else is (gate writes no <properties> inside a
# testcase, which the schema has no room for). Exit 0: valid; 1: invalid; 2: usage or missing tools.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
xsd=${GATE_JUNIT_XSD:-$(cd "$here/../../.." && pwd)/shared/junit/junit-10.xsd}

if [ $# -ne 1 ]; then
	echo "usage: sh tests/junit/validate.sh REPORT.xml" >&2
	exit 2
fi
report=$1
if [ ! -r "$report" ]; then
	echo "validate.sh: error: cannot read $report" >&2
	exit 2
fi
if [ ! -r "$xsd" ]; then
	echo "validate.sh: error: no JUnit schema at $xsd: set GATE_JUNIT_XSD to a copy of the Jenkins xUnit junit-10.xsd" >&2
	exit 2
fi
if ! command -v xmllint >/dev/null 2>&1; then
	echo "validate.sh: error: xmllint not found: install libxml2-utils" >&2
	exit 2
fi

tmp=$(mktemp "${TMPDIR:-/tmp}/junit-validate.XXXXXX")
trap 'rm -f "$tmp"' EXIT INT TERM

# Only inside a <testcase ...> start tag, walking whole name="value" pairs from its start so
# that text such as ' line="' inside another value is never taken for an attribute. gate
# writes each start tag on one line and escapes '<' and '"' inside values.
sed -E ':again
s/(<testcase( [A-Za-z_:.-]+="[^"]*")*) (file|line)="[^"]*"/\1/
t again' "$report" >"$tmp"
if xmllint --noout --nonet --schema "$xsd" "$tmp" 2>"$tmp.err"; then
	rm -f "$tmp.err"
	echo "$report: valid against junit-10.xsd (testcase file/line removed)"
	exit 0
fi
sed "s|$tmp|$report (testcase file/line removed)|g" "$tmp.err" >&2
rm -f "$tmp.err"
exit 1

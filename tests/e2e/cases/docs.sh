# tests/e2e/cases/docs.sh: the commands the README and docs/ show users are real: each
# `gate ...` or `mix gate ...` line of a ```sh block names a command that exists and options
# its --help lists, and each one that needs nothing but a Mix project runs against a copy of
# the demo (a git repository, the Mix package as its dependency) without "could not run"
# (exit 2), the commands of one block in order in one copy (the partitions' results, then
# their merge; a merge shown alone is checked for its options). A workload it names (--exec ./load.sh) is a script of the copy's own; commands
# that need a running node (--attach, --cluster, watch) or a program this machine lacks are
# checked for their options only.
# Sourced by tests/e2e/run.sh (helpers there; mix_project and in_mix in release.sh).

# The commands, one per line as "FILE:LINE<TAB>BLOCK<TAB>COMMAND" (BLOCK: the line of the
# block's fence; the commands of one block run in order, in one copy of the demo): backslash
# continuations joined, a leading "$ " and trailing "# comments" dropped.
docs_commands() {
	python3 - "$@" <<'EOF'
import re, sys
for path in sys.argv[1:]:
    fence, cmd, start, block = False, '', 0, 0
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        s = line.rstrip('\n')
        if s.lstrip().startswith('```'):
            fence = not fence and s.strip() in ('```sh', '```bash', '```shell')
            block = n
            continue
        if not fence:
            continue
        if not cmd:
            start = n
        cmd += s.strip()
        if cmd.endswith('\\'):
            cmd = cmd[:-1] + ' '
            continue
        c, cmd = cmd, ''
        c = re.sub(r'^\$ ', '', c)
        c = re.sub(r'\s+#\s.*$', '', c).strip()
        if re.match(r'^([A-Z_]+=\S+ )*(gate|mix gate)( |$)', c):
            print('%s:%d\t%s:%d\t%s' % (path, start, path, block, c))
EOF
}

# docs_node_start DIR: the project in DIR as a running node in the test env, under a private
# epmd and HOME (cl_start, attach.sh), as the docs' --attach commands expect one; its name in
# node. docs_node_stop stops it and the epmd.
docs_node_start() {
	local i
	cl_start 0
	node="e2e_docs_$RANDOM$RANDOM@127.0.0.1"
	(cd "$1" && export HOME="$CL_HOME" ERL_EPMD_PORT=$CL_PORT MIX_ENV=test && exec \
		${GATE_E2E_ELIXIR:-elixir} --name "$node" --erl "-start_epmd false \
		-kernel inet_dist_use_interface {127,0,0,1}" -S mix run --no-halt \
		-e 'spawn(fn -> Process.sleep(300_000); System.halt() end)
		File.write!("docs_node.ready", "")') >"$WORK/docs_node.out" 2>&1 </dev/null &
	node_pid=$!
	for i in $(seq 1 600); do
		[ -e "$1/docs_node.ready" ] && return
		sleep 0.1
	done
	fail "the demo's node never came up: $(tail -n 5 "$WORK/docs_node.out")"
	docs_node_stop
	node=""
}
docs_node_stop() {
	[ -n "$node_pid" ] || return 0
	kill "$node_pid" 2>/dev/null
	wait "$node_pid" 2>/dev/null
	node="" node_pid=""
	cl_stop
	CL_HOME=""
}

case_docs_commands() {
	local node_pid="" CL_HOME=""
	local files=("$ROOT/README.md") f
	for f in "$ROOT"/docs/*.md; do [ -e "$f" ] && files+=("$f"); done
	local list="$WORK/docs-commands.txt"
	docs_commands "${files[@]}" >"$list" || fail "cannot read the commands of the docs"
	[ -s "$list" ] || fail "no gate command found in the docs' sh blocks"
	local where block cmd sub words w ran=0 checked=0 d="" tpl="" help last="" node=""
	while IFS=$'\t' read -r -u 3 where block cmd; do
		cmd=$(sed -E 's/ (\||&&|;) .*$//' <<<"$cmd") # what a pipe or && adds is the shell's
		eval "words=($cmd)" 2>/dev/null || { fail "$where: cannot split \`$cmd\`"; continue; }
		local i=0 mix=0 envs=()
		while [[ "${words[$i]}" =~ ^[A-Z_]+= ]]; do envs+=("${words[$i]}") && i=$((i + 1)); done
		[ "${words[$i]}" = mix ] && { mix=1; i=$((i + 1)); }
		i=$((i + 1)) # past "gate"
		sub=${words[$i]:-run}
		case "$sub" in
		--version | -V | --help | -h) sub="" ;; # the main help lists them
		-*) sub=run ;;                         # mix gate's options are gate run's
		*) i=$((i + 1)) ;;
		esac
		# baseline, config and hook: the help of their own subcommand
		case "$sub" in baseline | config | hook) sub="$sub ${words[$i]}" && i=$((i + 1)) ;; esac
		help=$("$GATE" $sub --help 2>&1) ||
			{ fail "$where: gate $sub is not a command (\`$cmd\`)"; continue; }
		for w in "${words[@]:$i}"; do
			[ "$w" = -- ] && break
			case "$w" in
			--*) grep -q -- "${w%%=*}" <<<"$help" ||
				fail "$where: gate $sub --help does not list ${w%%=*} (\`$cmd\`)" ;;
			esac
		done
		checked=$((checked + 1))
		# a node to attach to is the demo's, running in the test env (the node the docs name
		# stands for it); a cluster or a day of watching: their options only
		local attach=0
		case " $cmd " in *" --cluster "* | *" watch "*) continue ;; *" --attach "*) attach=1 ;; esac
		[ $attach = 0 ] && case "$cmd" in *@* | *NODE* | *'<'*) continue ;; esac
		# a workload the docs name (--exec ./load.sh): a script of the copy's own that exits 0;
		# a program this machine lacks (k6): its options only
		local exe="" k
		for ((k = i; k < ${#words[@]}; k++)); do
			[ "${words[$k]}" = --exec ] && { read -r exe _ <<<"${words[$((k + 1))]}"; break; }
		done
		if [ -n "$exe" ] && [ "${exe#./}" = "$exe" ] && ! command -v "$exe" >/dev/null; then
			continue
		fi
		if [ -z "$tpl" ]; then # the demo as a user has it: compiled, in git, once
			tpl=$(mix_project demo "config :gate, path: \"$GATE\"")
			(cd "$tpl" && MIX_ENV=test mix compile >/dev/null 2>&1) ||
				fail "the demo with the Mix package does not compile"
			printf '_build/\ndeps/\n' >"$tpl/.gitignore"
			git_in "$tpl" init -q && git_in "$tpl" add -A >/dev/null &&
				git_in "$tpl" -c user.email=e2e@example.com -c user.name=e2e commit -qm demo \
					>/dev/null &&
				git_in "$tpl" update-ref refs/remotes/origin/main HEAD >/dev/null # a CI checkout
		fi
		if [ "$block" != "$last" ]; then # a new block: a new copy of the demo
			docs_node_stop
			[ -n "$d" ] && no_leftovers "$d"
			d=$(mktemp -d "$WORK/docs.XXXXXX") && cp -a "$tpl/." "$d/"
			last=$block
		fi
		# a merge of other jobs' results runs where its block made them
		if [ "$sub" = merge ]; then
			local missing=0
			for w in "${words[@]:$i}"; do
				case "$w" in *.json) [ -e "$d/$w" ] || missing=1 ;; esac
			done
			[ $missing = 1 ] && continue
		fi
		# a project starting with gate has no gate.toml yet
		case "$cmd" in *"config init"*) rm -f "$d/gate.toml" ;; esac
		if [ -n "$exe" ] && [ ! -e "$d/$exe" ]; then
			printf '#!/bin/sh\nsleep 1\n' >"$d/$exe" && chmod +x "$d/$exe"
		fi
		# -C DIR names the user's project: here the demo's copy
		cmd=$(sed -E 's/(^| )-C [^ ]+/\1-C ./g' <<<"$cmd")
		if [ $attach = 1 ]; then
			[ -z "$node" ] && docs_node_start "$d"
			[ -z "$node" ] && continue
			cmd=$(sed -E "s/[a-z_]+@[0-9.]+/$node/" <<<"$cmd")
			envs+=("HOME=$CL_HOME" "ERL_EPMD_PORT=$CL_PORT") # ~/.erlang.cookie: the node's
		fi
		# the command as written, its environment first, gate this build (mix gate: the
		# package, configured with this build's path), in the test env by default
		local rest=${cmd#*gate}
		if [ $mix = 1 ]; then
			(cd "$d" && export MIX_ENV=test && eval "export ${envs[*]} _=; timeout -k 5 300 mix gate $rest") \
				>"$WORK/doc.out" 2>"$WORK/doc.err" </dev/null
		else
			(cd "$d" && eval "export ${envs[*]} _=; timeout -k 5 300 \"\$GATE\" $rest") \
				>"$WORK/doc.out" 2>"$WORK/doc.err" </dev/null
		fi
		RC=$?
		ran=$((ran + 1))
		[ $RC -le 1 ] ||
			fail "$where: \`$cmd\` exited $RC on the demo: $(head -c 400 "$WORK/doc.err")"
	done 3<"$list"
	docs_node_stop
	[ -n "$d" ] && no_leftovers "$d"
	[ -n "$tpl" ] && no_leftovers "$tpl"
	echo "    $checked commands checked, $ran of them run against the demo"
}

# every command of the docs run against the demo, a minute or more: the long tier (make
# test-long)
e2e_long docs_commands

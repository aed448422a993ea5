#!/usr/bin/env node
// tests/integrations/yaml-check.js: parses gate's CI files with a real YAML parser (the
// `yaml` package, strict: duplicate keys and any warning fail) and checks what each consumer
// relies on. Shell steps are checked with `bash -n`.
//
//   node tests/integrations/yaml-check.js ROOT
//
// Exit 0: every check holds; 1: one does not; 2: usage.
import { spawnSync } from 'node:child_process'
import { accessSync, constants, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseDocument } from 'yaml'

if (process.argv.length !== 3) {
  console.error('usage: node yaml-check.js ROOT')
  process.exit(2)
}
const root = process.argv[2]
const problems = []
const fail = (file, msg) => problems.push(`${file}: ${msg}`)

function load (file) {
  const doc = parseDocument(readFileSync(join(root, file), 'utf8'), { uniqueKeys: true, prettyErrors: true, strict: true })
  for (const e of [...doc.errors, ...doc.warnings]) fail(file, `YAML: ${e.message.split('\n')[0]}`)
  return doc.toJS() ?? {}
}

function shellOk (file, where, script, shell = 'bash') {
  const r = spawnSync(shell, ['-n'], { input: script })
  if (r.status !== 0) fail(file, `${where}: ${shell} -n: ${String(r.stderr).trim().split('\n')[0]}`)
}

// GitHub composite action
{
  const f = 'integrations/github/action.yml'
  const a = load(f)
  if (!a.name || !a.description) fail(f, 'an action needs name and description')
  if (a.runs?.using !== 'composite') fail(f, `runs.using is ${a.runs?.using}, expected composite`)
  const steps = a.runs?.steps ?? []
  if (!steps.length) fail(f, 'no steps')
  const declared = new Set(Object.keys(a.inputs ?? {}))
  const text = readFileSync(join(root, f), 'utf8')
  for (const m of text.matchAll(/inputs\.([A-Za-z0-9_-]+)/g)) {
    if (!declared.has(m[1])) fail(f, `uses inputs.${m[1]}, which is not declared`)
  }
  steps.forEach((s, i) => {
    if (s.run && !s.shell) fail(f, `step ${i + 1} (${s.name}) has run but no shell: composite steps need one`)
    if (!s.run && !s.uses) fail(f, `step ${i + 1} has neither run nor uses`)
    if (s.run) shellOk(f, `step "${s.name}"`, s.run)
  })
  if (!steps.some((s) => String(s.uses ?? '').startsWith('actions/upload-artifact'))) fail(f, 'does not upload the reports')
  if (!/--junit/.test(text) || !/--html/.test(text)) fail(f, 'does not ask gate for the JUnit and HTML reports')
  if (!steps.some((s) => /refs\/notes\/gate/.test(s.run ?? '') && /push/.test(s.run ?? ''))) fail(f, 'never pushes refs/notes/gate')
  // the team's Erlang/Elixir: no Erlang or Elixir from apt, only gate's C libraries
  if (/apt-get install[^\n]*(erlang|elixir)/.test(text)) fail(f, 'installs Erlang or Elixir packages itself')
  const install = steps.find((s) => /deps\.sh/.test(s.run ?? ''))
  if (!install || !/GATE_DEPS=run/.test(install.run)) fail(f, 'installs its libraries other than with GATE_DEPS=run integrations/deps.sh')
  if (install && /sudo/.test(install.run) && !/PATH="\$PATH"/.test(install.run)) fail(f, "sudo drops setup-beam's PATH: deps.sh would not see its erl")
  const order = (n) => steps.findIndex((s) => s.name === n)
  if (order('Prepare the baseline branch') < 0 || order('Prepare the baseline branch') > order('Run gate')) fail(f, 'the push rights must be checked before the suite runs')
  if (!/push --dry-run/.test(steps[order('Prepare the baseline branch')]?.run ?? '')) fail(f, 'the prepare step does not check the push rights')
}

// the documented example workflow
{
  const f = 'integrations/github/example-workflow.yml'
  const w = load(f)
  const jobs = Object.values(w.jobs ?? {})
  if (jobs.length !== 2) fail(f, `expected two jobs (pull request, main), found ${jobs.length}`)
  const uses = jobs.flatMap((j) => (j.steps ?? []).map((s) => s.uses ?? ''))
  if (!uses.some((u) => /\/integrations\/github@/.test(u))) fail(f, 'no job uses the gate action')
  if (!jobs.some((j) => j.steps?.some((s) => s.with?.['update-baseline'] === 'true') && j.permissions?.contents === 'write')) {
    fail(f, 'the main job must update the baseline with contents: write')
  }
  if (!jobs.some((j) => j.steps?.some((s) => s.with?.['baseline-ref'] || s.with?.['baseline-branch']))) fail(f, 'the pull-request job must name the baseline branch or ref')
  // the team's toolchain: setup-beam with the versions, deps fetched and cached on mix.lock,
  // all before gate's action
  for (const [name, j] of Object.entries(w.jobs ?? {})) {
    const steps = j.steps ?? []
    const at = (pred) => steps.findIndex(pred)
    const gate = at((s) => /\/integrations\/github@/.test(s.uses ?? ''))
    const beam = at((s) => /^erlef\/setup-beam@/.test(s.uses ?? ''))
    const cache = at((s) => /^actions\/cache@/.test(s.uses ?? ''))
    const depsGet = at((s) => /\bmix deps\.get\b/.test(s.run ?? ''))
    if (beam < 0 || !steps[beam].with?.['otp-version'] || !steps[beam].with?.['elixir-version']) fail(f, `${name}: no erlef/setup-beam step with otp-version and elixir-version`)
    if (cache < 0) fail(f, `${name}: no actions/cache step`)
    else {
      const c = steps[cache].with ?? {}
      if (!/\bdeps\b/.test(c.path ?? '') || !/\b_build\b/.test(c.path ?? '')) fail(f, `${name}: the cache must hold deps and _build`)
      if (!/hashFiles\('\*\*\/mix\.lock'\)/.test(c.key ?? '')) fail(f, `${name}: the cache key must hash mix.lock`)
    }
    if (depsGet < 0) fail(f, `${name}: no mix deps.get step`)
    if (gate >= 0 && !(beam >= 0 && beam < cache && cache < depsGet && depsGet < gate)) fail(f, `${name}: setup-beam, cache and mix deps.get must come before gate's action, in that order`)
    if (gate >= 0 && !/@[0-9a-f]{40}$|@v\d+\.\d+\.\d+$/.test(steps[gate].uses)) fail(f, `${name}: pin gate's action to a release tag or a commit`)
  }
  const action = load('integrations/github/action.yml')
  for (const j of jobs) {
    for (const s of j.steps ?? []) {
      if (!/\/integrations\/github@/.test(s.uses ?? '')) continue
      for (const k of Object.keys(s.with ?? {})) if (!(k in (action.inputs ?? {}))) fail(f, `passes ${k}, which the action does not declare`)
    }
  }
}

// GitLab template
{
  const f = 'integrations/gitlab/gate.gitlab-ci.yml'
  const g = load(f)
  const base = g['.gate']
  if (!base) fail(f, 'no hidden .gate job to extend')
  if (!base?.artifacts?.reports?.junit) fail(f, '.gate has no artifacts:reports:junit')
  if (base?.artifacts?.when !== 'always') fail(f, 'the reports must be kept when the gate fails (when: always)')
  for (const name of ['gate:merge-request', 'gate:baseline']) {
    const j = g[name]
    if (!j) { fail(f, `no job ${name}`); continue }
    if (j.extends !== '.gate') fail(f, `${name} does not extend .gate`)
    for (const key of ['before_script', 'script']) {
      const list = key === 'script' ? j.script : base?.before_script
      if (!Array.isArray(list) || !list.every((l) => typeof l === 'string')) fail(f, `${name}: ${key} must be a list of strings (a line with ": " needs quotes)`)
    }
    if (!Array.isArray(j.rules) || !j.rules.length) fail(f, `${name} has no rules`)
    const script = [...(base?.before_script ?? []), ...(j.script ?? [])].map(String).join('\n')
    shellOk(f, name, script, 'sh')
    if (!script.includes('--junit ' + base?.artifacts?.reports?.junit)) fail(f, `${name} does not write the JUnit report the artifact names`)
  }
  if (/debian:|ubuntu:/.test(String(base?.image))) fail(f, `.gate runs in ${base?.image}, not the project's image`)
  if (!/\$GATE_IMAGE/.test(String(base?.image)) || !/^elixir:/.test(String(g.variables?.GATE_IMAGE))) fail(f, '.gate must run in $GATE_IMAGE, an elixir image by default')
  const before = (base?.before_script ?? []).map(String).join('\n')
  if (/\/opt\/gate/.test(before) || !/rm -rf "\$GATE_HOME"/.test(before)) fail(f, "gate's checkout must be a fresh directory of the job's own (re-runnable)")
  if (!/apt-get/.test(before) || !/apk add/.test(before) || !/neither apt-get/.test(before)) fail(f, 'must handle Debian (apt-get) and Alpine (apk) images and say what it cannot')
  if (/apt-get install[^\n]*(erlang|elixir)/.test(before)) fail(f, "installs Erlang or Elixir: the image's are used")
  if (!/mix deps\.get/.test(before)) fail(f, 'does not fetch the deps')
  const baseScript = (g['gate:baseline']?.script ?? []).map(String)
  const runAt = baseScript.findIndex((l) => /build\/gate run/.test(l))
  const tokenAt = baseScript.findIndex((l) => /test -n "\$GATE_PUSH_TOKEN"/.test(l))
  const dryAt = baseScript.findIndex((l) => /push --dry-run/.test(l))
  if (tokenAt < 0 || dryAt < 0 || tokenAt > runAt || dryAt > runAt) fail(f, 'gate:baseline must check GATE_PUSH_TOKEN and its push rights before the suite runs')
  if (baseScript.some((l) => /HEAD:refs\/heads\/\$CI_(COMMIT|DEFAULT)_BRANCH/.test(l))) fail(f, 'gate:baseline pushes to the default branch, which protected branches refuse')
  if (!baseScript.some((l) => l.includes('--update-baseline --commit'))) fail(f, 'gate:baseline does not commit the baseline')
  if (!baseScript.some((l) => l.includes('refs/notes/gate') && l.includes('push'))) fail(f, 'gate:baseline does not push the notes')
}

// review comments, the artifact's contents and name, expose_as
{
  const f = 'integrations/github/action.yml'
  const a = load(f)
  const text = readFileSync(join(root, f), 'utf8')
  if (!/--summary "\$out\/summary\.md"/.test(text)) fail(f, 'does not write summary.md into the uploaded reports')
  if (!/>>"\$GITHUB_STEP_SUMMARY"/.test(text)) fail(f, 'does not put the summary on the run page')
  const up = (a.runs?.steps ?? []).find((s) => String(s.uses ?? '').startsWith('actions/upload-artifact'))
  if (!/github\.job/.test(up?.with?.name ?? '') || !/strategy\.job-index/.test(up?.with?.name ?? '')) fail(f, 'the artifact name must be unique per matrix job (github.job and strategy.job-index)')
  for (const o of ['comment', 'summary']) if (!a.outputs?.[o]) fail(f, `no output ${o} for the review comment`)
  const w = load('integrations/github/example-workflow.yml')
  const pr = w.jobs?.['memory-pr']
  const steps = pr?.steps ?? []
  const gateAt = steps.findIndex((s) => /\/integrations\/github@/.test(s.uses ?? ''))
  const comment = steps.filter((s) => /^marocchino\/sticky-pull-request-comment@v\d+$/.test(s.uses ?? ''))
  if (pr?.permissions?.['pull-requests'] !== 'write') fail('integrations/github/example-workflow.yml', 'the pull-request job needs pull-requests: write for its comment')
  const post = comment.find((s) => s.with?.path && !s.with?.delete)
  if (!post || !/always\(\)/.test(post.if ?? '') || !new RegExp(`steps\\.${steps[gateAt]?.id}\\.outputs\\.comment == 'true'`).test(post.if ?? '')) {
    fail('integrations/github/example-workflow.yml', "the comment step must run if: always() && steps.<gate>.outputs.comment == 'true'")
  }
  if (post && !/outputs\.summary/.test(post.with.path)) fail('integrations/github/example-workflow.yml', "the comment must be gate's summary")
  if (!comment.some((s) => s.with?.delete === true && s.with?.header === post?.with?.header)) fail('integrations/github/example-workflow.yml', 'a clean pull request keeps a stale comment (no delete step with the same header)')
  const g = load('integrations/gitlab/gate.gitlab-ci.yml')
  const fg = 'integrations/gitlab/gate.gitlab-ci.yml'
  const art = g['.gate']?.artifacts ?? {}
  if (!art.expose_as) fail(fg, '.gate artifacts have no expose_as')
  for (const want of ['gate-reports/report.html', 'gate-reports/summary.md', 'gate-reports/junit.xml']) if (!(art.paths ?? []).includes(want)) fail(fg, `the artifacts do not keep ${want}`)
  const mr = (g['gate:merge-request']?.script ?? []).map(String)
  const tokenAt = mr.findIndex((l) => /GATE_NOTE_TOKEN/.test(l) && /exit 2/.test(l))
  const runAt = mr.findIndex((l) => /build\/gate" run/.test(l))
  if (tokenAt < 0 || runAt < 0 || tokenAt > runAt) fail(fg, 'gate:merge-request must check GATE_NOTE_TOKEN before the suite runs')
  if (!/--comment-flag gate-reports\/comment/.test(mr[runAt] ?? '') || !/merge_requests\/\$CI_MERGE_REQUEST_IID\/notes/.test(mr[runAt] ?? '')) fail(fg, "the merge-request note must be posted on gate's comment flag")
  if (g.variables?.GATE_MR_NOTE === undefined) fail(fg, 'GATE_MR_NOTE is not a documented variable')
}

// a rebar3 project: setup-beam with rebar3, rebar3 gate, the JUnit report uploaded always
{
  const f = 'integrations/github/example-workflow-rebar3.yml'
  const steps = load(f).jobs?.memory?.steps ?? []
  const beam = steps.find((s) => /^erlef\/setup-beam@/.test(s.uses ?? ''))
  if (!beam?.with?.['rebar3-version']) fail(f, 'setup-beam must set up rebar3 (rebar3-version)')
  const run = steps.findIndex((s) => /^rebar3 gate\b/.test(s.run ?? ''))
  if (run < 0) fail(f, 'no step runs rebar3 gate')
  for (const s of steps) if (s.run) shellOk(f, s.run, s.run)
  const up = steps.findIndex((s) => /^actions\/upload-artifact@/.test(s.uses ?? ''))
  if (up < run || !/always\(\)/.test(steps[up]?.if ?? '') || steps[up]?.with?.path !== '_build/gate/junit.xml') fail(f, 'the JUnit report must be uploaded after rebar3 gate, always')
}

// partitioned suites: the GitHub matrix with a merge job, GitLab's parallel: N
{
  const f = 'integrations/github/example-workflow-partitioned.yml'
  const w = load(f)
  const part = w.jobs?.['memory-partition']
  const merge = w.jobs?.['memory-merge']
  if (!part || !merge) fail(f, 'expected the jobs memory-partition and memory-merge')
  const n = Number(w.env?.GATE_PARTITIONS)
  const matrix = part?.strategy?.matrix?.partition ?? []
  if (!(n > 1) || matrix.length !== n || !matrix.every((k, i) => k === i + 1)) fail(f, `the matrix ${JSON.stringify(matrix)} is not the partitions 1..GATE_PARTITIONS (${w.env?.GATE_PARTITIONS})`)
  if (part?.strategy?.['fail-fast'] !== false) fail(f, 'fail-fast must be false: every partition must report')
  if (!/matrix\.partition/.test(part?.env?.MIX_TEST_PARTITION ?? '')) fail(f, 'the partition jobs do not set MIX_TEST_PARTITION from the matrix')
  const psteps = part?.steps ?? []
  const gate = psteps.find((s) => /\/integrations\/github@/.test(s.uses ?? ''))
  if (!gate || !/--json /.test(gate.with?.args ?? '') || !/-- --partitions \$\{\{ env\.GATE_PARTITIONS \}\}/.test(gate.with?.args ?? '')) fail(f, 'the partition job must run gate with --json and -- --partitions GATE_PARTITIONS')
  if (gate?.with?.['update-baseline'] === 'true') fail(f, 'a partition job must not write a baseline: the merge job is the only writer')
  const up = psteps.find((s) => /^actions\/upload-artifact@/.test(s.uses ?? ''))
  if (!up || !/always\(\)/.test(up.if ?? '') || !/matrix\.partition/.test(up.with?.name ?? '')) fail(f, 'each partition must upload its result, always, under a name of its own')
  if (merge?.needs !== 'memory-partition' && !(merge?.needs ?? []).includes?.('memory-partition')) fail(f, 'the merge job must need the partition jobs')
  if (!/always\(\)/.test(merge?.if ?? '')) fail(f, 'the merge job must run when a partition failed (if: always())')
  const msteps = merge?.steps ?? []
  const at = (pred) => msteps.findIndex(pred)
  const down = at((s) => /^actions\/download-artifact@/.test(s.uses ?? ''))
  const run = at((s) => /merge -C/.test(s.run ?? ''))
  const push = at((s) => /git push/.test(s.run ?? ''))
  const comment = msteps.filter((s) => /sticky-pull-request-comment/.test(s.uses ?? ''))
  if (down < 0 || run < 0 || down > run) fail(f, 'the merge job must download the results before gate merge')
  if (run >= 0 && !/--comment-flag/.test(msteps[run].run)) fail(f, 'gate merge must write the comment flag')
  if (push < 0 || push < run || !/refs\/notes\/gate/.test(msteps[push]?.run ?? '') || !/refs\/heads\/main/.test(msteps[push]?.if ?? '')) fail(f, 'on main the merge job must push the baseline branch and the notes, after the merge')
  if (comment.length !== 2) fail(f, 'one sticky comment (post and delete), from the merge job only')
  if (merge?.permissions?.contents !== 'write') fail(f, 'the merge job needs contents: write to push the baselines')
  for (const [name, j] of Object.entries(w.jobs ?? {})) for (const s of j.steps ?? []) if (s.run) shellOk(f, `${name}: step "${s.name}"`, s.run)
  const fg = 'integrations/gitlab/gate.gitlab-ci.yml'
  const g = load(fg)
  const gp = g['gate:partition']
  const gm = g['gate:merge']
  if (!gp || !(gp.parallel > 1)) fail(fg, 'gate:partition must run parallel: N > 1')
  if (!gm || !(gm.needs ?? []).includes('gate:partition')) fail(fg, 'gate:merge must need gate:partition')
  for (const [name, j] of [['gate:partition', gp], ['gate:merge', gm]]) {
    if (j?.extends !== '.gate') fail(fg, `${name} does not extend .gate`)
    if (!Array.isArray(j?.script) || !j.script.every((l) => typeof l === 'string')) fail(fg, `${name}: script must be a list of strings`)
    shellOk(fg, name, [...(g['.gate']?.before_script ?? []), ...(j?.script ?? [])].map(String).join('\n'), 'sh')
  }
  const ps = (gp?.script ?? []).join('\n')
  if (!/MIX_TEST_PARTITION="\$CI_NODE_INDEX"/.test(ps) || !/--partitions "\$CI_NODE_TOTAL"/.test(ps) || !/--json /.test(ps)) fail(fg, 'gate:partition must run partition CI_NODE_INDEX of CI_NODE_TOTAL with --json')
  if (/--update-baseline/.test(ps)) fail(fg, 'gate:partition must not write a baseline')
  const ms = (gm?.script ?? []).join('\n')
  if (!/build\/gate" merge/.test(ms) || !/--update-baseline --commit/.test(ms) || !/refs\/notes\/gate/.test(ms)) fail(fg, 'gate:merge must merge, commit the baselines and push them with the notes')
  if ((gm?.rules ?? []).some((r) => r.when !== 'always')) fail(fg, 'gate:merge must run when a partition failed (when: always)')
  for (const name of ['gate:merge-request', 'gate:baseline']) {
    const r0 = g[name]?.rules?.[0]
    if (!/GATE_PARTITIONED == "true"/.test(r0?.if ?? '') || r0?.when !== 'never') fail(fg, `${name} must stay off when GATE_PARTITIONED is true`)
  }
}

// the pre-commit framework's hook list
{
  const f = '.pre-commit-hooks.yaml'
  const hooks = load(f)
  if (!Array.isArray(hooks) || hooks.length === 0) fail(f, 'expected a list of hooks')
  for (const h of hooks ?? []) {
    for (const k of ['id', 'name', 'entry', 'language']) if (!h[k]) fail(f, `hook without ${k}`)
    if (h.pass_filenames !== false) fail(f, `${h.id}: pass_filenames must be false`)
    if (h.always_run !== true) fail(f, `${h.id}: always_run must be true`)
    if (!(h.stages ?? []).includes('pre-push')) fail(f, `${h.id}: stages must include pre-push`)
    // stage names pre-commit/pre-push are read from pre-commit 3.2.0 on (before: commit/push)
    const min = String(h.minimum_pre_commit_version ?? '0').split('.').map(Number)
    const atLeast = (v) => { for (let i = 0; i < 3; i++) { if ((min[i] ?? 0) !== v[i]) return (min[i] ?? 0) > v[i] } return true }
    if ((h.stages ?? []).some((st) => /^pre-/.test(st)) && !atLeast([3, 2, 0])) fail(f, `${h.id}: stages named pre-* need minimum_pre_commit_version 3.2.0 or later`)
    if (h.language === 'script') {
      try { accessSync(join(root, h.entry.split(' ')[0]), constants.X_OK) } catch { fail(f, `${h.id}: entry ${h.entry} is not an executable in the repository`) }
    }
  }
}

// at a release ref the release binary is downloaded and its checksum verified
// instead of -dev packages and a compiler; the source build is the fallback
{
  const f = 'integrations/github/action.yml'
  const steps = load(f).runs?.steps ?? []
  const at = (n) => steps.findIndex((s) => s.name === n)
  const rel = steps[at('Install the release binary')]
  if (!rel || rel.id !== 'release') fail(f, 'no step "Install the release binary" with id release')
  else {
    if (!(at('Install the release binary') < at("Install gate's C libraries") && at("Install gate's C libraries") < at('Build gate'))) fail(f, 'the release binary must be tried before the libraries are installed and gate is built')
    if (!/sha256sum -c/.test(rel.run)) fail(f, 'the release binary is not verified with sha256sum -c')
    if (!/install=source/.test(rel.run) || !/install=release/.test(rel.run)) fail(f, 'the release step must say install=release or install=source')
    for (const n of ["Install gate's C libraries", 'Build gate']) {
      if (!/steps\.release\.outputs\.install != 'release'/.test(steps[at(n)]?.if ?? '')) fail(f, `${n} must be skipped when the release binary is installed`)
    }
  }
  const fg = 'integrations/gitlab/gate.gitlab-ci.yml'
  const before = (load(fg)['.gate']?.before_script ?? []).map(String).join('\n')
  if (!/sha256sum -c/.test(before) || !/releases\/download/.test(before)) fail(fg, 'a release GATE_REF must download the release binary and verify it with sha256sum -c')
  if (!/building gate from source/.test(before) || !/make -s/.test(before)) fail(fg, 'the source build must remain the fallback')
}

for (const p of problems) console.error(`yaml-check.js: FAIL: ${p}`)
if (!problems.length) console.log('yaml-check.js: OK: action.yml, example-workflow.yml, example-workflow-partitioned.yml, example-workflow-rebar3.yml, gate.gitlab-ci.yml, .pre-commit-hooks.yaml')
process.exit(problems.length ? 1 : 0)

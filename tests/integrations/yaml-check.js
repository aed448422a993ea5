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
  const f = 'ci/github/action.yml'
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
}

// the documented example workflow
{
  const f = 'ci/github/example-workflow.yml'
  const w = load(f)
  const jobs = Object.values(w.jobs ?? {})
  if (jobs.length !== 2) fail(f, `expected two jobs (pull request, main), found ${jobs.length}`)
  const uses = jobs.flatMap((j) => (j.steps ?? []).map((s) => s.uses ?? ''))
  if (!uses.some((u) => /\/ci\/github@/.test(u))) fail(f, 'no job uses the gate action')
  if (!jobs.some((j) => j.steps?.some((s) => s.with?.['update-baseline'] === 'true') && j.permissions?.contents === 'write')) {
    fail(f, 'the main job must update the baseline with contents: write')
  }
  if (!jobs.some((j) => j.steps?.some((s) => s.with?.['baseline-ref']))) fail(f, 'the pull-request job must name the baseline ref')
  const action = load('ci/github/action.yml')
  for (const j of jobs) {
    for (const s of j.steps ?? []) {
      if (!/\/ci\/github@/.test(s.uses ?? '')) continue
      for (const k of Object.keys(s.with ?? {})) if (!(k in (action.inputs ?? {}))) fail(f, `passes ${k}, which the action does not declare`)
    }
  }
}

// GitLab template
{
  const f = 'ci/gitlab/gate.gitlab-ci.yml'
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
  const baseScript = (g['gate:baseline']?.script ?? []).map(String)
  if (!baseScript.some((l) => l.includes('--update-baseline --commit'))) fail(f, 'gate:baseline does not commit the baseline')
  if (!baseScript.some((l) => l.includes('refs/notes/gate') && l.includes('push'))) fail(f, 'gate:baseline does not push the notes')
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
    if (h.language === 'script') {
      try { accessSync(join(root, h.entry.split(' ')[0]), constants.X_OK) } catch { fail(f, `${h.id}: entry ${h.entry} is not an executable in the repository`) }
    }
  }
}

for (const p of problems) console.error(`yaml-check.js: FAIL: ${p}`)
if (!problems.length) console.log('yaml-check.js: OK: action.yml, example-workflow.yml, gate.gitlab-ci.yml, .pre-commit-hooks.yaml')
process.exit(problems.length ? 1 : 0)

#!/usr/bin/env node
// tests/integrations/workflow-job.js: one job of a GitHub workflow as a bash script of calls,
// so that an e2e case can run the job's steps in order, here, as a runner would:
//
//   node workflow-job.js ROOT FILE JOB     prints, one line each, in the job's order:
//     wf_env NAME VALUE                    the workflow's and the job's env (literal values)
//     wf_service NAME IMAGE PORTS ENV...   each service container (ENV as NAME=VALUE)
//     wf_run INDEX NAME ID IF SCRIPT       a run step (its literal env exported first)
//     wf_uses INDEX NAME ID IF ACTION INPUT=VALUE...
//                                          a uses step; for gate's own action
//                                          (*/integrations/github@*) the inputs are
//                                          INPUT_<NAME>=VALUE with action.yml's defaults
//                                          filled in, as the runner gives them
//   node workflow-job.js --check ROOT FILE the checks a Phoenix + Ecto workflow must pass:
//                                          every job has a PostgreSQL service on
//                                          5432:5432 with a health check and its user and
//                                          password; checkout (whole history), setup-beam
//                                          with the versions, the cache of deps and _build
//                                          on mix.lock, mix deps.get and mix compile, in that
//                                          order, before gate's action, which is pinned and
//                                          given only inputs it declares
//
// The case defines the wf_* functions; values are single-quoted for the shell. Exit 1: no
// such job, or a check failed (each printed); 2: usage.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseDocument } from 'yaml'

const args = process.argv.slice(2)
const check = args[0] === '--check'
if (check) args.shift()
const [root, file, jobName] = args
if (!root || !file || (!check && !jobName)) {
  console.error('usage: node workflow-job.js ROOT FILE JOB | node workflow-job.js --check ROOT FILE')
  process.exit(2)
}

function load (f) {
  const doc = parseDocument(readFileSync(join(root, f), 'utf8'), { uniqueKeys: true, strict: true })
  const errs = [...doc.errors, ...doc.warnings]
  if (errs.length) {
    console.error(`workflow-job.js: ${f}: YAML: ${errs[0].message.split('\n')[0]}`)
    process.exit(1)
  }
  return doc.toJS() ?? {}
}

const q = (v) => `'${String(v ?? '').replace(/'/g, "'\\''")}'`
const isGate = (u) => /\/integrations\/github@/.test(u ?? '')
const w = load(file)
const action = load('integrations/github/action.yml')

if (check) {
  const problems = []
  const fail = (msg) => problems.push(`${file}: ${msg}`)
  const jobs = Object.entries(w.jobs ?? {})
  if (!jobs.length) fail('no jobs')
  for (const [name, j] of jobs) {
    const pg = Object.values(j.services ?? {}).find((s) => /^postgres:/.test(String(s.image ?? '')))
    if (!pg) fail(`${name}: no PostgreSQL service container (services: postgres: image: postgres:N)`)
    else {
      if (!(pg.ports ?? []).map(String).includes('5432:5432')) fail(`${name}: the PostgreSQL service must publish 5432:5432 (localhost:5432, what config/test.exs connects to)`)
      if (!/--health-cmd\s+pg_isready/.test(String(pg.options ?? ''))) fail(`${name}: the PostgreSQL service needs --health-cmd pg_isready, so that the steps wait for it`)
      if (!pg.env?.POSTGRES_USER || !pg.env?.POSTGRES_PASSWORD) fail(`${name}: the PostgreSQL service must set POSTGRES_USER and POSTGRES_PASSWORD`)
    }
    const steps = j.steps ?? []
    const at = (pred) => steps.findIndex(pred)
    const checkout = at((s) => /^actions\/checkout@/.test(s.uses ?? ''))
    const beam = at((s) => /^erlef\/setup-beam@/.test(s.uses ?? ''))
    const cache = at((s) => /^actions\/cache@/.test(s.uses ?? ''))
    const depsGet = at((s) => /^mix deps\.get\b/.test(s.run ?? ''))
    const compile = at((s) => /^mix compile\b/.test(s.run ?? ''))
    const gate = at((s) => isGate(s.uses))
    if (checkout < 0 || String(steps[checkout].with?.['fetch-depth']) !== '0') fail(`${name}: actions/checkout with fetch-depth: 0 (the notes walk needs the history)`)
    if (beam < 0 || !steps[beam].with?.['otp-version'] || !steps[beam].with?.['elixir-version']) fail(`${name}: no erlef/setup-beam with otp-version and elixir-version`)
    if (cache < 0 || !/\bdeps\b/.test(steps[cache].with?.path ?? '') || !/\b_build\b/.test(steps[cache].with?.path ?? '') ||
      !/hashFiles\('\*\*\/mix\.lock'\)/.test(steps[cache].with?.key ?? '')) fail(`${name}: the cache must hold deps and _build, keyed on mix.lock`)
    if (gate < 0) fail(`${name}: no step uses gate's action`)
    else {
      if (!(checkout < beam && beam < cache && cache < depsGet && depsGet < compile && compile < gate)) fail(`${name}: checkout, setup-beam, cache, mix deps.get and mix compile must come before gate's action, in that order`)
      if (!/@[0-9a-f]{40}$|@v\d+\.\d+\.\d+$/.test(steps[gate].uses)) fail(`${name}: pin gate's action to a release tag or a commit`)
      for (const k of Object.keys(steps[gate].with ?? {})) if (!(k in (action.inputs ?? {}))) fail(`${name}: passes ${k}, which the action does not declare`)
    }
  }
  if (!(w.env?.MIX_ENV === 'test' || jobs.every(([, j]) => j.env?.MIX_ENV === 'test'))) fail('MIX_ENV must be test for the jobs (mix deps.get and mix compile in the env gate runs)')
  for (const p of problems) console.error(p)
  process.exit(problems.length ? 1 : 0)
}

const job = w.jobs?.[jobName]
if (!job) {
  console.error(`workflow-job.js: ${file} has no job ${jobName}`)
  process.exit(1)
}
const out = []
const literal = (env) => Object.entries(env ?? {}).filter(([, v]) => !String(v).includes('${{'))
for (const [k, v] of [...literal(w.env), ...literal(job.env)]) out.push(`wf_env ${q(k)} ${q(v)}`)
for (const [name, s] of Object.entries(job.services ?? {})) {
  const env = Object.entries(s.env ?? {}).map(([k, v]) => q(`${k}=${v}`))
  out.push(`wf_service ${q(name)} ${q(s.image)} ${q((s.ports ?? []).join(','))} ${env.join(' ')}`.trimEnd())
}
;(job.steps ?? []).forEach((s, i) => {
  const head = `${i + 1} ${q(s.name)} ${q(s.id)} ${q(s.if)}`
  if (s.run) {
    const env = literal(s.env).map(([k, v]) => `export ${k}=${q(v)}\n`).join('')
    out.push(`wf_run ${head} ${q(env + s.run)}`)
  } else if (s.uses) {
    let inputs = Object.entries(s.with ?? {}).map(([k, v]) => [k, String(v)])
    if (isGate(s.uses)) {
      const given = Object.fromEntries(inputs)
      inputs = Object.entries(action.inputs ?? {}).map(([k, d]) =>
        [`INPUT_${k.toUpperCase().replace(/-/g, '_')}`, k in given ? given[k] : String(d.default ?? '')])
    }
    out.push(`wf_uses ${head} ${q(s.uses)} ${inputs.map(([k, v]) => q(`${k}=${v}`)).join(' ')}`.trimEnd())
  } else {
    console.error(`workflow-job.js: ${file}: ${jobName} step ${i + 1} has neither run nor uses`)
    process.exit(1)
  }
})
process.stdout.write(out.join('\n') + '\n')

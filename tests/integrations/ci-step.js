#!/usr/bin/env node
// tests/integrations/ci-step.js: prints the shell script of one step of gate's CI files, so
// that the tests can run it here as the CI would:
//
//   node ci-step.js integrations/github/action.yml "Run gate"            the `run` of that step, after
//                                                             an export of each literal
//                                                             value of its env (those
//                                                             with ${{ }} are the test's)
//   node ci-step.js integrations/github/example-workflow-partitioned.yml "memory-merge/Merge the partitions"
//                                  a workflow's step (JOB/STEP name), as an action's step
//   node ci-step.js integrations/gitlab/gate.gitlab-ci.yml gate:baseline  that job's `script` lines
//   node ci-step.js integrations/gitlab/gate.gitlab-ci.yml .gate before_script 'git fetch'
//                                  that key's lines of that job, those containing the text
//
// Exit 1 when the file has no such step.
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'

const [file, step, key = 'script', filter = ''] = process.argv.slice(2)
if (!file || !step) {
  console.error('usage: node ci-step.js FILE STEP')
  process.exit(2)
}
const doc = parse(readFileSync(file, 'utf8'))
let script
const q = (v) => `'${String(v).replace(/'/g, "'\\''")}'`
if (doc.runs?.steps) {
  const s = doc.runs.steps.find((s) => s.name === step)
  if (s?.run) {
    const env = Object.entries(s.env ?? {}).filter(([, v]) => !String(v).includes('${{'))
    script = env.map(([k, v]) => `export ${k}=${q(v)}\n`).join('') + s.run
  }
} else if (doc.jobs && step.includes('/')) {
  // a workflow's job step, JOB/STEP; its env with ${{ }} is the test's to give
  const [job, name] = [step.slice(0, step.indexOf('/')), step.slice(step.indexOf('/') + 1)]
  const s = doc.jobs[job]?.steps?.find((s) => s.name === name)
  if (s?.run) {
    const env = Object.entries(s.env ?? {}).filter(([, v]) => !String(v).includes('${{'))
    script = env.map(([k, v]) => `export ${k}=${q(v)}\n`).join('') + s.run
  }
} else if (Array.isArray(doc[step]?.[key])) {
  const lines = doc[step][key].map(String).filter((l) => l.includes(filter))
  if (lines.length) script = lines.join('\n') + '\n'
}
if (!script) {
  console.error(`ci-step.js: ${file} has no step ${step}`)
  process.exit(1)
}
process.stdout.write(script)

#!/usr/bin/env node
// tests/junit/check.js: reads a JUnit report with junit2json, a real JUnit consumer, and
// checks what a CI reader would see.
//
//   node tests/junit/check.js REPORT.xml [--tests N] [--failures N] [--errors N]
//        [--skipped N] [--failure-contains CASE_NAME=TEXT]... [--testcase CLASSNAME=NAME]...
//        [--property CASE_NAME=PROPERTY>MIN]... [--first-failure-contains TEXT]...
//
// Counts are of testcases as the reader parses them (a testcase with <failure> is a failure,
// and so on), and every declared tests/failures/errors/skipped attribute must agree with
// them. --failure-contains: some testcase named CASE_NAME has a <failure> (or, failing that,
// an <error>) whose message or text contains TEXT. --testcase: a testcase with that classname
// and name exists. --property: a testcase named CASE_NAME carries, in its <system-out>, a line
// "PROPERTY = N" with N above MIN. --first-failure-contains: the message of
// the first <failure> in the report (what a CI reader sees first) contains TEXT. Exit 0: all checks hold; 1: one does not
// or the file cannot be read; 2: usage.
import { readFile } from 'node:fs/promises'
import { parse } from 'junit2json'

const usage = 'usage: node tests/junit/check.js REPORT.xml [--tests N] [--failures N] ' +
  '[--errors N] [--skipped N] [--failure-contains CASE_NAME=TEXT]... ' +
  '[--testcase CLASSNAME=NAME]... [--property CASE_NAME=PROPERTY>MIN]... ' +
  '[--first-failure-contains TEXT]...'

function die (code, msg) {
  console.error(`check.js: ${msg}`)
  process.exit(code)
}

function parseArgs (argv) {
  const opts = { file: null, expect: {}, contains: [], present: [], props: [], first: [] }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) die(2, `${a} needs a value\n${usage}`)
      return argv[++i]
    }
    if (['--tests', '--failures', '--errors', '--skipped'].includes(a)) {
      const v = value()
      if (!/^\d+$/.test(v)) die(2, `${a} wants a count, not "${v}"`)
      opts.expect[a.slice(2)] = Number(v)
    } else if (a === '--failure-contains') {
      const v = value()
      const eq = v.indexOf('=')
      if (eq <= 0) die(2, `--failure-contains wants CASE_NAME=TEXT, not "${v}"`)
      opts.contains.push({ name: v.slice(0, eq), text: v.slice(eq + 1) })
    } else if (a === '--testcase') {
      const v = value()
      const eq = v.indexOf('=')
      if (eq <= 0) die(2, `--testcase wants CLASSNAME=NAME, not "${v}"`)
      opts.present.push({ classname: v.slice(0, eq), name: v.slice(eq + 1) })
    } else if (a === '--property') {
      const v = value()
      const m = /^(.+)=([^=>]+)>(-?\d+)$/.exec(v)
      if (!m) die(2, `--property wants CASE_NAME=PROPERTY>MIN, not "${v}"`)
      opts.props.push({ name: m[1], prop: m[2], min: Number(m[3]) })
    } else if (a === '--first-failure-contains') {
      opts.first.push(value())
    } else if (a === '-h' || a === '--help') {
      console.log(usage)
      process.exit(0)
    } else if (a.startsWith('--')) {
      die(2, `unknown option ${a}\n${usage}`)
    } else if (opts.file === null) {
      opts.file = a
    } else {
      die(2, `one report at a time\n${usage}`)
    }
  }
  if (opts.file === null) die(2, usage)
  return opts
}

const opts = parseArgs(process.argv.slice(2))
let xml
try {
  xml = await readFile(opts.file, 'utf8')
} catch (e) {
  die(1, `cannot read ${opts.file}: ${e.message}`)
}
let root
try {
  root = await parse(xml)
} catch (e) {
  die(1, `${opts.file}: junit2json cannot parse it: ${e.message.split('\n')[0]}`)
}
if (!root) die(1, `${opts.file}: no <testsuites> or <testsuite> in it`)

const suites = root.testsuite ? root.testsuite : [root]
const problems = []
const total = { tests: 0, failures: 0, errors: 0, skipped: 0 }
const cases = []

for (const s of suites) {
  const c = { tests: 0, failures: 0, errors: 0, skipped: 0 }
  for (const tc of s.testcase ?? []) {
    c.tests++
    if (tc.failure) c.failures++
    if (tc.error) c.errors++
    if (tc.skipped) c.skipped++
    cases.push({ suite: String(s.name), tc })
  }
  for (const k of Object.keys(c)) {
    if (s[k] !== undefined && Number(s[k]) !== c[k]) {
      problems.push(`suite "${s.name}" declares ${k}="${s[k]}" but has ${c[k]}`)
    }
    total[k] += c[k]
  }
}
if (root.testsuite) {
  for (const k of ['tests', 'failures', 'errors']) {
    if (root[k] !== undefined && Number(root[k]) !== total[k]) {
      problems.push(`<testsuites> declares ${k}="${root[k]}" but its suites have ${total[k]}`)
    }
  }
}

for (const [k, want] of Object.entries(opts.expect)) {
  if (total[k] !== want) problems.push(`expected ${want} ${k}, the report has ${total[k]}`)
}

const detailText = (d) => `${d.message ?? ''}\n${d.inner ?? ''}`
for (const { name, text } of opts.contains) {
  const named = cases.filter(({ tc }) => String(tc.name) === name)
  if (named.length === 0) {
    problems.push(`--failure-contains: no testcase named "${name}"`)
    continue
  }
  const hit = named.some(({ tc }) =>
    (tc.failure ?? tc.error ?? []).some((d) => detailText(d).includes(text)))
  if (!hit) {
    const has = named.some(({ tc }) => tc.failure || tc.error)
    problems.push(has
      ? `--failure-contains: testcase "${name}" fails, but not with "${text}"`
      : `--failure-contains: testcase "${name}" has no <failure> or <error>`)
  }
}

const firstFailing = cases.find(({ tc }) => tc.failure)
const firstMessage = firstFailing ? String((firstFailing.tc.failure[0] ?? {}).message ?? '') : null
for (const text of opts.first) {
  if (firstMessage === null) problems.push('--first-failure-contains: the report has no <failure>')
  else if (!firstMessage.includes(text)) {
    problems.push(`--first-failure-contains: the first failure ("${firstFailing.tc.name}") ` +
      `reads "${firstMessage.slice(0, 300)}", without "${text}"`)
  }
}

for (const { classname, name } of opts.present) {
  if (!cases.some(({ tc }) => String(tc.classname) === classname && String(tc.name) === name)) {
    problems.push(`--testcase: no testcase ${classname} / "${name}"`)
  }
}

for (const { name, prop, min } of opts.props) {
  const named = cases.filter(({ tc }) => String(tc.name) === name)
  // a testcase has no <properties> (the schema has none there): gate writes a
  // measured test's figures as "NAME = VALUE" lines of its <system-out>
  const line = new RegExp(`^${prop.replace(/[.]/g, '\\.')} = (-?[0-9]+)$`, 'm')
  const values = named.flatMap(({ tc }) => (tc['system-out'] ?? [])
    .map((t) => line.exec(String(t))).filter((m) => m).map((m) => Number(m[1])))
  if (named.length === 0) problems.push(`--property: no testcase named "${name}"`)
  else if (values.length === 0) problems.push(`--property: testcase "${name}" has no property ${prop}`)
  else if (!values.some((v) => v > min)) {
    problems.push(`--property: testcase "${name}" has ${prop}=${values.join(',')}, not above ${min}`)
  }
}

console.log(`${opts.file}: ${suites.length} suites, ${total.tests} tests, ` +
  `${total.failures} failures, ${total.errors} errors, ${total.skipped} skipped (junit2json)`)
for (const { suite, tc } of cases) {
  const kind = tc.failure ? 'failure' : tc.error ? 'error' : tc.skipped ? 'skipped' : null
  if (kind) {
    const d = (tc.failure ?? tc.error ?? tc.skipped)[0] ?? {}
    const msg = String(d.message ?? '').slice(0, 70)
    console.log(`  ${kind}: ${suite} / ${tc.name}${msg ? `: ${msg}` : ''}`)
  }
}
if (problems.length) {
  for (const p of problems) console.error(`check.js: FAIL: ${p}`)
  process.exit(1)
}
const checked = Object.keys(opts.expect).length + opts.contains.length + opts.present.length +
  opts.props.length + opts.first.length
console.log(`check.js: OK (${checked} expectations, declared counts consistent)`)

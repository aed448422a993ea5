// tests/junit/reporters.js: reads a gate JUnit report as two GitHub reporters read it, and
// checks that every failing or warned memory finding lands on a real file and line.
//
// The reporters are GitHub actions, published on neither npm nor any registry reachable
// here, so their code cannot be installed: this script parses with the XML library each
// one uses (from npm, pinned in package-lock.json) and applies the lookup each one documents
// in its source:
// - mikepenz/action-junit-report (src/testParser.ts, resolveFileAndLine): xml-js
//   xml2json(compact); file = testcase@file || failure@file || testsuite@file, else the last
//   dot-segment of the classname (file=growth for gate.memory.growth without a file
//   attribute); line = testcase@line || failure@line || testsuite@line, else a " path:N" match in
//   the failure text, else 1.
// - dorny/test-reporter, java-junit parser (src/parsers/java-junit/java-junit-parser.ts):
//   xml2js parseStringPromise; path and line only from a failure-text line matching
//   /^at (.*)\((.*):(\d+)\)$/ whose file name is a tracked file's name and whose package
//   (the dot-parts before the first capitalised one) are that file's last directories.
//
// usage: node tests/junit/reporters.js REPORT.xml REPO_ROOT [--expect-file REL:LINE]...
// Prints one line per memory case: "<case> | mikepenz: FILE:LINE | dorny: FILE:LINE".
// Exit 1 when a failing or warned gate.memory case resolves, for either reporter, to a file
// that does not exist under REPO_ROOT (or no file), or an --expect-file is not among them.
import fs from 'node:fs'
import path from 'node:path'
import convert from 'xml-js'
import xml2js from 'xml2js'

const [,, report, root, ...rest] = process.argv
if (!report || !root) {
  console.error('usage: node tests/junit/reporters.js REPORT.xml REPO_ROOT [--expect-file REL:LINE]...')
  process.exit(2)
}
const expects = []
for (let i = 0; i < rest.length; i += 2) {
  if (rest[i] !== '--expect-file' || !rest[i + 1]) { console.error(`bad argument ${rest[i]}`); process.exit(2) }
  expects.push(rest[i + 1])
}
const xml = fs.readFileSync(report, 'utf8')
const arr = x => (x === undefined ? [] : Array.isArray(x) ? x : [x])

// the tracked files, as dorny's action gets them from git ls-files: every file under root
function walk (dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === '_build' || e.name === 'deps' || e.name === '.git' || e.name === 'node_modules') continue
    const p = path.join(dir, e.name)
    if (e.isDirectory()) walk(p, out)
    else out.push(path.relative(root, p))
  }
  return out
}
const tracked = {}
for (const f of walk(root, [])) (tracked[path.basename(f)] ??= []).push(f)

// mikepenz
function mikepenz () {
  const doc = JSON.parse(convert.xml2json(xml, { compact: true }))
  const out = {}
  for (const ts of arr(doc.testsuites?.testsuite)) {
    for (const tc of arr(ts.testcase)) {
      const a = tc._attributes
      const failure = arr(tc.failure)[0]
      // a warning is a skipped case whose message starts "warning:"
      const skipped = arr(tc.skipped).some(x => (x._attributes?.message ?? '').startsWith('warning:'))
      if (!a.classname.startsWith('gate.memory') || (!failure && !skipped)) continue
      const file = a.file || failure?._attributes?.file || ts._attributes?.file || a.classname.split('.').slice(-1)[0]
      let line = parseInt(a.line || failure?._attributes?.line || ts._attributes?.line)
      if (isNaN(line)) {
        const text = (failure?._text || failure?._cdata || '').toString()
        const esc = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        const m = text.match(new RegExp(` [^ ]*${esc}.*?:\\d+`, 'g'))
        line = m ? parseInt(m.slice(-1)[0].split(':').pop()) : 1
      }
      out[`${a.classname}/${a.name}`] = { file, line, level: failure ? 'failure' : 'notice' }
    }
  }
  return out
}

// dorny
async function dorny () {
  const doc = await xml2js.parseStringPromise(xml)
  const out = {}
  for (const ts of doc.testsuites.testsuite ?? []) {
    for (const tc of ts.testcase ?? []) {
      const failures = tc.failure ?? tc.error
      if (!tc.$.classname.startsWith('gate.memory') || !failures) continue
      const f = failures[0]
      const details = typeof f === 'object' ? f._ : f
      let found = null
      for (const str of (details ?? '').split(/\r?\n/)) {
        const m = str.match(/^at (.*)\((.*):(\d+)\)$/)
        if (!m) continue
        const [, tracePath, fileName, lineStr] = m
        const parts = tracePath.split(/\./g)
        const idx = parts.findIndex(p => p[0] <= 'Z')
        if (idx !== -1) parts.splice(idx, parts.length - idx)
        if (parts.length === 0) continue
        for (const fp of tracked[fileName] ?? []) {
          const dirs = path.dirname(fp).split(/\//g)
          if (parts.length > dirs.length) continue
          if (dirs.length > parts.length) dirs.splice(0, dirs.length - parts.length)
          if (parts.every((p, i) => p === dirs[i])) { found = { file: fp, line: parseInt(lineStr) }; break }
        }
        if (found) break
      }
      out[`${tc.$.classname}/${tc.$.name}`] = found ?? { file: null, line: null }
    }
  }
  return out
}

const mp = mikepenz()
const dn = await dorny()
const problems = []
const seen = new Set()
for (const [k, m] of Object.entries(mp)) {
  const d = dn[k]
  console.log(`${k} | mikepenz: ${m.file}:${m.line} (${m.level}) | dorny: ${d ? `${d.file}:${d.line}` : '(not a failure)'}`)
  const mfile = path.join(root, m.file)
  if (!fs.existsSync(mfile) || !fs.statSync(mfile).isFile() || !(m.line > 0)) problems.push(`mikepenz places ${k} at ${m.file}:${m.line}, no such file`)
  else seen.add(`${m.file}:${m.line}`)
  if (d && (!d.file || !(d.line > 0))) problems.push(`dorny places ${k} nowhere (no "at PACKAGE.Module(file:line)" line with a tracked file)`)
  else if (d) seen.add(`${d.file}:${d.line}`)
}
if (Object.keys(mp).length === 0) problems.push('no failing or warned gate.memory testcase in the report')
for (const e of expects) if (!seen.has(e)) problems.push(`no memory case placed at ${e}`)
for (const p of problems) console.log(`PROBLEM: ${p}`)
process.exit(problems.length ? 1 : 0)

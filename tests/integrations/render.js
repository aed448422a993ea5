#!/usr/bin/env node
// tests/integrations/render.js: renders gate's HTML report in headless Chromium (Debian's
// chromium, driven by playwright-core) and checks what a person would see.
//
//   node tests/integrations/render.js REPORT.html SCREENSHOT.png [--points N]
//        [--verdict TEXT] [--text TEXT]...
//
// Fails (exit 1) on any console error or warning, page error, failed request or request
// for anything but the report itself (the page must be self-contained), or when the trend
// chart does not have N points (--points), the verdict heading does not read TEXT
// (--verdict) or the page's visible text lacks TEXT (--text). A full-page screenshot is
// saved. Exit 2: usage or no Chromium (CI must fail, not skip, without it).
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium } from 'playwright-core'

const CHROMIUM = process.env.GATE_CHROMIUM || '/usr/bin/chromium'
const usage = 'usage: node render.js REPORT.html SCREENSHOT.png [--points N] [--verdict TEXT] [--text TEXT]...'
const args = process.argv.slice(2)
const pos = []
const opts = { points: null, verdict: null, text: [] }
for (let i = 0; i < args.length; i++) {
  const a = args[i]
  if (a === '--points') opts.points = Number(args[++i])
  else if (a === '--verdict') opts.verdict = args[++i]
  else if (a === '--text') opts.text.push(args[++i])
  else if (a.startsWith('--')) { console.error(`render.js: unknown option ${a}\n${usage}`); process.exit(2) }
  else pos.push(a)
}
if (pos.length !== 2 || (opts.points !== null && !Number.isInteger(opts.points))) {
  console.error(usage)
  process.exit(2)
}
if (!existsSync(CHROMIUM)) {
  console.error(`render.js: no Chromium at ${CHROMIUM}: install Debian's chromium (sh integrations/deps.sh)`)
  process.exit(2)
}
const report = resolve(pos[0])
const url = pathToFileURL(report).href
const problems = []
const profile = mkdtempSync(join(tmpdir(), 'gate-chromium-'))
let browser
try {
  // a fresh profile directory each run (playwright passes it as --user-data-dir)
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1000, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  const page = await browser.newPage()
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`))
  page.on('request', (r) => {
    if (r.url() !== url && !r.url().startsWith('data:')) problems.push(`the page asked for ${r.url()}: it must be self-contained`)
  })
  const res = await page.goto(url, { waitUntil: 'load' })
  if (!res || !res.ok()) problems.push(`loading ${url} failed`)
  const points = await page.locator('#trend-chart circle.point').count()
  const verdict = (await page.locator('#verdict').textContent())?.trim()
  const text = await page.locator('body').innerText()
  const scripts = await page.locator('script').count()
  await page.screenshot({ path: pos[1], fullPage: true })
  if (opts.points !== null && points !== opts.points) problems.push(`the trend chart has ${points} points, expected ${opts.points}`)
  if (opts.verdict !== null && verdict !== opts.verdict) problems.push(`the verdict reads "${verdict}", expected "${opts.verdict}"`)
  for (const t of opts.text) if (!text.includes(t)) problems.push(`the page's text lacks "${t}"`)
  if (scripts) problems.push(`the page has ${scripts} <script> elements`)
  console.log(`render.js: ${report}: verdict "${verdict}", ${points} trend points, screenshot ${pos[1]}`)
} catch (e) {
  problems.push(`chromium: ${e.message.split('\n')[0]}`)
} finally {
  if (browser) await browser.close()
  rmSync(profile, { recursive: true, force: true })
}
for (const p of problems) console.error(`render.js: FAIL: ${p}`)
process.exit(problems.length ? 1 : 0)

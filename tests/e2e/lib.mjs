// Shared pieces of the e2e tests: static servers on free loopback ports, the browser,
// pass/fail bookkeeping, and the engine's values from the native CLI.
import { chromium } from 'playwright-core';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { extname, join, normalize } from 'node:path';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const DIST = join(ROOT, 'dist');
export const OUT = join(ROOT, 'target', 'e2e');
const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml', '.ts': 'text/plain' };

// Serve `dir` (optionally with CORS, as a CDN would); resolves to { base, close, hits }.
// `prefix` (e.g. "sgm-rdp/") serves `dir` under that sub-path only, as GitHub Pages serves a
// project site (https://<owner>.github.io/<repo>/); anything outside it is a 404.
export async function serve(dir, { cors = false, prefix = '' } = {}) {
  const hits = [];
  const server = createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^\/+/, '');
    hits.push(path);
    const headers = cors ? { 'access-control-allow-origin': '*' } : {};
    if (prefix) {
      if (!(path + '/').startsWith(prefix)) {
        res.writeHead(404, headers);
        res.end('not found (outside the sub-path)');
        return;
      }
      path = path.slice(prefix.length);
    }
    if (path === 'favicon.ico') {
      res.writeHead(204, headers);
      res.end();
      return;
    }
    try {
      const body = await readFile(join(dir, path === '' ? 'index.html' : path));
      res.writeHead(200, { ...headers, 'content-type': MIME[extname(path || 'index.html')] || 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, headers);
      res.end('not found');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}/${prefix}`, close: () => server.close(), hits };
}

export function checker() {
  const state = { failures: 0 };
  state.check = (ok, what) => {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) state.failures++;
  };
  return state;
}

// The native CLI (same engine, built natively): `cli('epsilon', {q: 0.01, ...})` → parsed --json output.
export const cli = (cmd, args) =>
  JSON.parse(execFileSync('cargo', ['run', '-q', '--release', '--features', 'cli', '--bin', 'sgm-rdp', '--', cmd,
    ...Object.entries(args).flatMap(([k, v]) => [`--${k}`, String(v)]), '--json'], { cwd: ROOT, encoding: 'utf8' }));

// The CLI's one-line reason for refusing input (stderr, without the "sgm-rdp: " prefix).
export function cliError(cmd, args) {
  try {
    execFileSync('cargo', ['run', '-q', '--release', '--features', 'cli', '--bin', 'sgm-rdp', '--', cmd,
      ...Object.entries(args).flatMap(([k, v]) => [`--${k}`, String(v)])], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return String(e.stderr).trim().replace(/^sgm-rdp: /, '');
  }
  return null;
}

// `sgm-rdp batch`: JSON lines in (strings), the answer lines out (strings, one per line).
export const cliBatch = (lines) =>
  execFileSync('cargo', ['run', '-q', '--release', '--features', 'cli', '--bin', 'sgm-rdp', '--', 'batch'], { cwd: ROOT, encoding: 'utf8', input: lines.join('\n') + '\n' }).trim().split('\n');

export const engine = (q, sigma, steps, delta) => cli('epsilon', { q, sigma, steps, delta });

// Headless Chromium, started again (up to three tries) when its process dies before it is up:
// on this 2-core machine it once ended with SIGSEGV at launch, before any page was opened
// (a clean clone's `make test`, 2026-12-06), which is the machine's, not a test's, result.
export async function launch() {
  let last;
  for (let i = 1; i <= 3; i++) {
    try {
      return await chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
    } catch (e) {
      last = e;
      console.error(`chromium did not start (try ${i} of 3): ${String(e.message).split('\n')[0]}`);
    }
  }
  throw last;
}

// A page that records console errors and uncaught exceptions into `errors`.
export async function newPage(browser, errors, label, opts = {}) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 }, ...opts });
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`${label}: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`${label}: ${e.message}`));
  return page;
}

// A bound as the page and the CLI print it: `d` decimals, rounded outwards (an upper end
// up, a lower end down), the way src/decimal.rs does: the nearest text, moved one unit in
// the last place when it lies on the wrong side of the value.
function outward(x, d, up) {
  const s = x.toFixed(d);
  const v = parseFloat(s);
  const unit = d === 4 ? 1e-4 : d === 6 ? 1e-6 : 10 ** -d;
  return (up ? v < x : v > x) ? (v + (up ? unit : -unit)).toFixed(d) : s;
}
export const up4 = (x) => outward(x, 4, true);
export const down4 = (x) => outward(x, 4, false);
export const up6 = (x) => outward(x, 6, true);
export const down6 = (x) => outward(x, 6, false);

// A trace of one page's worker traffic, for a check's failure message: every message posted to
// a worker (its kind, client, gen and run), every answer (kind, client, gen, ε or the message's
// start), the tight section's "updating" mark and headline as they change, and the typed
// inputs, each with its time (ms from the page's start). `await traceWorkers(page)` before
// `page.goto`; `await workerTrace(page)` reads it as lines.
export async function traceWorkers(page) {
  await page.addInitScript(() => {
    const t0 = performance.now();
    const log = (window.__workerTrace = []);
    const note = (s) => log.push(`${(performance.now() - t0).toFixed(0)} ${s}`);
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (d, ...rest) {
      try {
        note(`post ${d.kind ?? 'tight'} ${d.client ?? ''} gen=${d.gen} q=${d.q} σ=${d.sigma} T=${d.steps}`);
      } catch {}
      if (!this.__traced) {
        this.__traced = true;
        this.addEventListener('message', ({ data: a }) => note(`answer ${a.kind} ${a.client ?? ''} gen=${a.gen} ${a.message ? String(a.message).slice(0, 60) : a.epsilon ?? ''}`));
        this.addEventListener('error', (e) => note(`worker error ${e.message}`));
      }
      return post.call(this, d, ...rest);
    };
    document.addEventListener('DOMContentLoaded', () => {
      const tight = document.querySelector('#tight');
      const head = document.querySelector('#epsilon-pld');
      if (tight) new MutationObserver(() => note(`updating ${tight.classList.contains('updating')}`)).observe(tight, { attributes: true, attributeFilter: ['class'] });
      if (head) new MutationObserver(() => note(`headline ${head.textContent}`)).observe(head, { childList: true, characterData: true, subtree: true });
      for (const id of ['q', 'sigma', 'steps']) document.getElementById(id)?.addEventListener('input', (e) => note(`input ${id} = ${e.target.value}`));
    });
  });
}
export const workerTrace = (page) => page.evaluate(() => window.__workerTrace ?? []);

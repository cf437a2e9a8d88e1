// The npm package (issue 66 #3), as a user gets it: `npm pack` of dist/, installed into a fresh
// project with Vite, built, then loaded in headless Chromium — MNIST's tight ε from the JS API,
// from the Promise API (its worker) and from <sgm-rdp-calculator>, each found by the bundler
// through `new URL('./file', import.meta.url)`. Needs the npm registry once (Vite, pinned).
import { execFileSync } from 'node:child_process';
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DIST, OUT, ROOT, serve, checker, cli, launch, newPage } from './lib.mjs';

const VITE = '8.4.1';
const t = checker();
const check = t.check;
const dir = join(OUT, 'npm');
const app = join(dir, 'app');
await rm(dir, { recursive: true, force: true });
await mkdir(app, { recursive: true });
const packed = execFileSync('npm', ['pack', '--pack-destination', dir, '--json'], { cwd: DIST, encoding: 'utf8' });
const { filename, size, unpackedSize, files } = JSON.parse(packed)[0];
const tarball = join(dir, filename);
await cp(join(ROOT, 'tests/e2e/vite-app'), app, { recursive: true });
await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }));
execFileSync('npm', ['install', '--no-audit', '--no-fund', `vite@${VITE}`, tarball], { cwd: app, stdio: 'ignore' });
execFileSync(join(app, 'node_modules/.bin/vite'), ['build', '--logLevel', 'warn'], { cwd: app, stdio: 'inherit' });
const built = await readdir(join(app, 'dist/assets'));
console.log(`npm: ${filename} ${(size / 1024).toFixed(0)} KB packed (${(unpackedSize / 1024).toFixed(0)} KB, ${files.length} files); Vite ${VITE} emitted ${built.length} assets`);
check(['sgm-rdp_bg', 'sgm-rdp-page_bg', 'sgm-rdp-worker_bg', 'pld-worker', 'sgm-rdp-async-worker'].every((n) => built.some((f) => f.startsWith(n + '-'))),
  `Vite emitted the package's wasm modules and workers: ${built.join(', ')}`);

const site = await serve(join(app, 'dist'));
const browser = await launch();
const errors = [];
try {
  const page = await newPage(browser, errors, 'vite-app');
  await page.goto(site.base);
  await page.waitForFunction(() => window.results, null, { timeout: 60000 }).catch(() => {});
  await page.waitForFunction(() => document.getElementById('w').value?.epsilonPld != null, null, { timeout: 60000 }).catch(() => {});
  const r = await page.evaluate(() => ({ ...window.results, widget: document.getElementById('w').value?.epsilonPld }));
  const want = cli('epsilon', { q: 256 / 60000, sigma: 1.1, steps: 14063, delta: 1e-5, accountant: 'pld' });
  const close = (a, b, rel) => typeof a === 'number' && Math.abs(a - b) <= rel * Math.abs(b);
  check(close(r.sync, want.epsilon, 1e-6) && close(r.async, want.epsilon, 1e-6),
    `the fresh Vite project: the JS API's ${r.sync} and the Promise API's ${r.async} = the CLI's MNIST tight ε ${want.epsilon}`);
  // (The element's q is 0.0042666667 as an author writes it: within 0.1 % of the converged ε.)
  check(close(r.widget, 2.38169, 1e-3), `the fresh Vite project: <sgm-rdp-calculator> shows the tight ε ${r.widget}`);
  check(errors.length === 0, `zero console errors${errors.length ? ': ' + errors.join(' | ') : ''}`);
} catch (e) {
  check(false, `npm e2e crashed: ${e.stack || e}`);
} finally {
  await browser.close();
  site.close();
}
console.log(t.failures ? `e2e npm: ${t.failures} failure(s)` : 'e2e npm: all passed');
process.exit(t.failures ? 1 : 0);

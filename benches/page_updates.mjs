// The page's answers after a typed σ, for one or more builds of dist/ measured in turn in one
// run (A/B): from the keystroke to the new tight ε (#epsilon-pld), to the three tight charts
// (no figure marked stale) and to μ-GDP under the risk chart (#gdp-summary), on the default
// MNIST-like run, 30 σ values, each waiting for μ-GDP before the next (so each figure is one
// update's, not overlapped). The times include the page's 50 ms rest before the worker is
// asked and the worker's rest between the charts and μ-GDP.
//
//   node benches/page_updates.mjs dist [OTHER_DIST ...]   (after `make dist`; rounds alternate)
//
// `--query=?q=0.0001&sigma=1&steps=100000` opens that run instead of the default (its URL
// parameters; the σ values typed are still 1.13 … 1.325), `--count=N` types N values (30).
import { launch, newPage, serve } from '../tests/e2e/lib.mjs';

const flag = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? fallback : a.slice(name.length + 3);
};
const query = flag('query', '');
const count = Number(flag('count', '30'));
const dists = process.argv.slice(2).filter((x) => !x.startsWith('--'));
if (dists.length === 0 || !(count >= 1)) {
  console.error('usage: node benches/page_updates.mjs DIST [DIST ...] [--query=?q=…] [--count=N]');
  process.exit(2);
}
const browser = await launch();
for (let round = 0; round < 2; round++) {
  for (const dist of dists) {
    const srv = await serve(dist);
    const errors = [];
    const page = await newPage(browser, errors, 'page');
    await page.goto(srv.base + query);
    await page.waitForFunction(() => /\d/.test(document.querySelector('#epsilon-pld').textContent), null, { timeout: 30000 });
    await page.waitForFunction(() => !document.querySelector('figure.stale'), null, { timeout: 60000 });
    await page.waitForTimeout(1500);
    const t = await page.evaluate(async (count) => {
      const box = document.querySelector('#sigma');
      const pld = document.querySelector('#epsilon-pld');
      const g = document.querySelector('#gdp-summary');
      const head = [], charts = [], gdp = [];
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      for (let i = 0; i < count; i++) {
        const before = pld.getAttribute('data-value');
        const gBefore = g.textContent;
        box.value = String(1.13 + (i % 20) * 0.01 + (i >= 20 ? 0.005 : 0));
        box.dispatchEvent(new Event('input', { bubbles: true }));
        const t0 = performance.now();
        while (pld.getAttribute('data-value') === before && performance.now() - t0 < 20000) await sleep(2);
        head.push(performance.now() - t0);
        while (!document.querySelector('figure.stale') && performance.now() - t0 < 300) await sleep(2);
        while (document.querySelector('figure.stale') && performance.now() - t0 < 30000) await sleep(5);
        charts.push(performance.now() - t0);
        while (g.textContent === gBefore && performance.now() - t0 < 30000) await sleep(5);
        gdp.push(performance.now() - t0);
      }
      const p = (xs, f) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))];
      const stat = (xs) => `p50 ${p(xs, 0.5).toFixed(0)} ms, p95 ${p(xs, 0.95).toFixed(0)} ms`;
      return `tight ε ${stat(head)}; three tight charts ${stat(charts)}; μ-GDP ${stat(gdp)}`;
    }, count);
    console.log(`${dist}${query} (round ${round + 1}): ${t}${errors.length ? ` — page errors: ${errors.join('; ')}` : ''}`);
    await page.close();
    srv.close();
  }
}
await browser.close();

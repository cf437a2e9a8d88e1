// End-to-end tests of the embeddable pieces (issue 5) in real headless Chromium:
// <sgm-rdp-calculator> on a hostile host page served from another origin (dist/ is a "CDN"
// with CORS), the minimal two-line page, embed.html with its iframe, and the JS API
// (in the browser and in Node). Every ε is compared with the native CLI (same engine).
import { mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { DIST, OUT, ROOT, serve, checker, cli, up4, down4, up6, down6, cliBatch, cliError, engine, launch, newPage } from './lib.mjs';

const t = checker();
const check = t.check;
// ε agrees to a few ulp between the wasm and the native build (their exp/ln may differ in
// the last bit); the optimal α is the argmin of a flat function, located to ~1e-8.
const ALPHA_REL = 1e-6;
const close = (a, b, rel = 1e-12) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b));

const cdn = await serve(DIST, { cors: true });
// Host pages: fixtures with the CDN's URL filled in, served from a second origin.
const HOSTDIR = join(OUT, 'host');
await mkdir(HOSTDIR, { recursive: true });
const FIX = join(ROOT, 'tests', 'e2e', 'fixtures');
for (const f of await readdir(FIX)) {
  await writeFile(join(HOSTDIR, f), (await readFile(join(FIX, f), 'utf8')).replaceAll('__DIST__', cdn.base));
}
const host = await serve(HOSTDIR);

const browser = await launch();
const errors = [];

// In-page helpers (run inside the browser).
const helpers = () => {
  window.errorsSeen = [];
  addEventListener('error', (e) => errorsSeen.push(e.message));
  window.$w = (id) => document.getElementById(id);
  window.$s = (id, sel) => document.getElementById(id).shadowRoot.querySelector(sel);
  // Resolve with the next `change` event's detail of element `id` (or null after ms).
  window.nextChange = (id, ms = 3000) => new Promise((resolve) => {
    const el = typeof id === 'string' ? document.getElementById(id) : id;
    const timer = setTimeout(() => { el.removeEventListener('change', on); resolve(null); }, ms);
    const on = (e) => { clearTimeout(timer); el.removeEventListener('change', on); resolve(e.detail); };
    el.addEventListener('change', on);
  });
  // Count `change` events of `id` during ms.
  window.countChanges = (id, ms) => new Promise((resolve) => {
    let n = 0;
    const el = document.getElementById(id);
    const on = () => n++;
    el.addEventListener('change', on);
    setTimeout(() => { el.removeEventListener('change', on); resolve(n); }, ms);
  });
};

const allRendered = (page, ids) => page.waitForFunction((ids) => ids.every((id) => document.getElementById(id)?.value), ids, { timeout: 20000 });
const shadowText = (page, id, sel) => page.evaluate(([id, sel]) => $s(id, sel)?.textContent ?? null, [id, sel]);
const chartData = (page, id, n = 0) => page.evaluate(([id, n]) => $w(id).shadowRoot.querySelectorAll('canvas')[n].toDataURL(), [id, n]);

try {
  await mkdir(OUT, { recursive: true });

  // ---- A. Hostile host page, five widgets, widget.js from another origin ----
  cdn.hits.length = 0;
  const page = await newPage(browser, errors, 'hostile');
  await page.addInitScript(helpers);
  await page.goto(host.base + 'hostile.html');
  const ids = ['w1', 'w2', 'w3', 'w4', 'w5'];
  await allRendered(page, ids);
  // The page's wasm once for the five widgets; the worker-only wasm once for their shared
  // worker (the widgets' tight ε comes from it); the JS API's wasm not at all.
  const fetched = (f) => cdn.hits.filter((p) => p === f).length;
  check(fetched('sgm-rdp-page_bg.wasm') === 1 && fetched('sgm-rdp-worker_bg.wasm') <= 1 && fetched('sgm-rdp_bg.wasm') === 0,
    `the page's wasm is fetched once for five widgets (${fetched('sgm-rdp-page_bg.wasm')}), the worker-only wasm at most once by their shared worker (${fetched('sgm-rdp-worker_bg.wasm')}), the JS API's not at all (${fetched('sgm-rdp_bg.wasm')})`);

  const want = {
    w1: [0.01, 1.1, 10000, 1e-5, 'improved'],
    w2: [0.08192, 3, 2000, 1e-5, 'improved'],
    w4: [0.001, 0.8, 100000, 1e-8, 'classic'],
    w5: [0.02, 2, 500, 1e-6, 'improved'],
  };
  for (const [id, [q, sigma, steps, delta, conversion]] of Object.entries(want)) {
    const e = cli('epsilon', { q, sigma, steps, delta, conversion });
    const v = await page.evaluate((id) => $w(id).value, id);
    check(close(v.epsilon, e.epsilon) && close(v.alpha, e.alpha, ALPHA_REL), `${id}: ε ${v.epsilon} at α ${v.alpha} = engine ${e.epsilon} at ${e.alpha}`);
    check(v.q === q && v.sigma === sigma && v.steps === steps && v.delta === delta && v.conversion === conversion, `${id}: value holds its attributes`);
    check((await shadowText(page, id, '.eps')) === up4(e.epsilon), `${id}: shows ε = ${up4(e.epsilon)}`);
  }

  // The tight ε (default accountant="both"): widget.js is on another origin here, so its
  // worker starts from a blob: URL importing pld-worker.js (CORS).
  await page.waitForFunction(() => $w('w1').value?.epsilonPld != null, null, { timeout: 20000 }).catch(() => {});
  {
    const v = await page.evaluate(() => $w('w1').value);
    const t = cli('epsilon', { q: 0.01, sigma: 1.1, steps: 10000, delta: 1e-5, accountant: 'pld' });
    check(close(v.epsilonPld, t.epsilon, 1e-9) && close(v.epsilonPldLower, t.epsilon_lower, 1e-9) && v.epsilonPld < v.epsilon,
      `w1 (cross-origin widget.js, blob worker): epsilonPld ${v.epsilonPld} = CLI --accountant pld ${t.epsilon}, lower ${v.epsilonPldLower}, below exact RDP ${v.epsilon}`);
    check((await shadowText(page, 'w1', '.eps-pld')) === up4(t.epsilon) && /certified bracket/.test(await page.evaluate(() => $s('w1', '.eps-pld').title)),
      `w1 leads with the tight ε ${await shadowText(page, 'w1', '.eps-pld')} (bracket in its title)`);
    check(await page.evaluate(() => !$s('w1', '.head').hasAttribute('aria-live') && $s('w1', '.eps-pld').getAttribute('aria-live') === 'polite' && $s('w1', '.eps').getAttribute('aria-live') === 'polite'),
      'only the ε numbers are aria-live, not the whole headline');
    check((await shadowText(page, 'w1', '.rdp')).startsWith('exact RDP ε = '), `and names exact RDP next to it: "${await shadowText(page, 'w1', '.rdp')}"`);
  }

  // sampling="truncated-poisson" with dataset-size (#23): the CLI's bracket for N = 10000,
  // the default largest batch q·N + 4 s.d. = 140 (q = 0.01); the detail names the sizes.
  {
    const tp = cli('epsilon', { q: 0.01, sigma: 1.1, steps: 10000, delta: 1e-5, sampling: 'truncated-poisson', 'dataset-size': 10000, 'max-batch': 140, accountant: 'pld' });
    const ev = await page.evaluate(() => new Promise((resolve) => {
      const w = $w('w1');
      const seen = (e) => { if (e.detail.sampling === 'truncated-poisson' && e.detail.epsilonPld !== null) { w.removeEventListener('change', seen); resolve(e.detail); } };
      w.addEventListener('change', seen);
      w.setAttribute('dataset-size', '10000');
      w.setAttribute('sampling', 'truncated-poisson');
    }));
    check(close(ev.epsilonPld, tp.epsilon, 1e-6) && close(ev.epsilonPldLower, tp.epsilon_lower, 1e-6) && ev.datasetSize === 10000 && ev.maxBatch === 140 && ev.epsilon === null,
      `w1 sampling="truncated-poisson" dataset-size="10000": [${ev.epsilonPldLower}, ${ev.epsilonPld}] = CLI [${tp.epsilon_lower}, ${tp.epsilon}]; detail sizes ${ev.datasetSize}, ${ev.maxBatch}`);
    const fx = cli('epsilon', { sigma: 1.1, steps: 10000, delta: 1e-5, sampling: 'fixed-size', 'dataset-size': 10000, 'batch-size': 100, adjacency: 'replace-one' });
    const ef = await page.evaluate(() => new Promise((resolve) => {
      const w = $w('w1');
      const seen = (e) => { if (e.detail.sampling === 'fixed-size' && e.detail.epsilonPld !== null) { w.removeEventListener('change', seen); resolve(e.detail); } };
      w.addEventListener('change', seen);
      w.setAttribute('adjacency', 'replace-one');
      w.setAttribute('sampling', 'fixed-size');
    }));
    const title = await page.evaluate(() => $s('w1', '.eps-pld').title);
    check(close(ef.epsilonPld, fx.epsilon, 1e-9) && ef.epsilonPldLower === 0 && ef.maxBatch === null && /^≤ [\d.]+: fixed-size batches of B = 100 of N = 10000/.test(title) && /no lower bound/.test(title),
      `w1 sampling="fixed-size": the CLI's RDP bound ${fx.epsilon} (shown ${ef.epsilonPld}, lower ${ef.epsilonPldLower}); title "${title.slice(0, 90)}"`);
    // Back to Poisson sampling (the next block starts from it).
    await page.evaluate(() => new Promise((resolve) => {
      const w = $w('w1');
      const seen = (e) => { if (e.detail.sampling === 'poisson' && e.detail.adjacency === 'add-remove' && e.detail.epsilonPld !== null) { w.removeEventListener('change', seen); resolve(); } };
      w.addEventListener('change', seen);
      w.removeAttribute('adjacency');
      w.removeAttribute('dataset-size');
      w.removeAttribute('sampling');
    }));
  }

  // sampling="random-allocation" (#24): the widget shows the scheme's certified ε for
  // t = ⌊1/q⌋ = 100 steps per epoch and ⌈T·q⌉ = 100 epochs — the CLI's — with no exact-RDP
  // number (Poisson's would be borrowed) and no charts (they are Poisson's, said in words);
  // removing the attribute brings Poisson's back.
  {
    const ra = cli('epsilon', { sampling: 'random-allocation', 'steps-per-epoch': 100, epochs: 100, sigma: 1.1, delta: 1e-5 });
    const ev = await page.evaluate(() => new Promise((resolve) => {
      const w = $w('w1');
      w.addEventListener('change', (e) => resolve(e.detail), { once: true });
      w.setAttribute('sampling', 'random-allocation');
    }));
    const shown = await page.evaluate(() => ({
      pld: $s('w1', '.eps-pld').textContent, title: $s('w1', '.eps-pld').title, rdpHidden: $s('w1', '.rdp').hidden,
      canvases: [...$w('w1').shadowRoot.querySelectorAll('canvas')].filter((c) => !c.hidden).length,
      messages: $w('w1').shadowRoot.textContent,
    }));
    check(ev.sampling === 'random-allocation' && ev.epsilon === null && ev.alpha === null && close(ev.epsilonPld, ra.epsilon, 1e-6) && close(ev.epsilonPldLower, ra.epsilon_lower, 1e-6)
      && shown.pld === up4(ra.epsilon) && shown.rdpHidden && shown.canvases === 0 && /one of 100 steps per epoch, 100 epochs/.test(shown.title)
      && /charts epsilon: drawn for Poisson sampling only, not for random allocation/.test(shown.messages),
      `w1 sampling="random-allocation": ε ≤ ${shown.pld} = CLI [${down6(ra.epsilon_lower)}, ${up6(ra.epsilon)}]; change detail ${JSON.stringify({ epsilon: ev.epsilon, epsilonPld: ev.epsilonPld })}; no RDP, no charts (${shown.canvases})`);
    // Its tight charts follow the scheme (ε over training: the worker's epoch checkpoints).
    await page.evaluate(() => $w('w1').setAttribute('charts', 'training'));
    await page.waitForFunction(() => [...$w('w1').shadowRoot.querySelectorAll('canvas')].some((c) => !c.hidden && !c.classList.contains('stale') && c.width > 0), null, { timeout: 30000 }).catch(() => {});
    const tr = await page.evaluate(() => [...$w('w1').shadowRoot.querySelectorAll('canvas')].filter((c) => !c.hidden).map((c) => ({ stale: c.classList.contains('stale'), w: c.width })));
    check(tr.length === 1 && !tr[0].stale && tr[0].w > 0, `w1 sampling="random-allocation" charts="training": ε over training drawn for the scheme (${JSON.stringify(tr)})`);
    await page.evaluate(() => $w('w1').removeAttribute('charts'));
    const back = await page.evaluate(() => new Promise((resolve) => {
      const w = $w('w1');
      w.addEventListener('change', (e) => resolve(e.detail), { once: true });
      w.removeAttribute('sampling');
    }));
    const t = cli('epsilon', { q: 0.01, sigma: 1.1, steps: 10000, delta: 1e-5, accountant: 'pld' });
    check(back.sampling === 'poisson' && close(back.epsilonPld, t.epsilon, 1e-9) && back.epsilon > 0,
      `w1 without sampling: Poisson's tight ε ${back.epsilonPld} and exact RDP ${back.epsilon} again`);
    // group-size="2" (#25): user-level — the CLI's --group-size 2 (tight), no exact RDP (one
    // example's), the property mirrors the attribute; a bad value is named, 2 kept; removed:
    // one example per user again.
    const u = cli('epsilon', { q: 0.01, sigma: 1.1, steps: 10000, delta: 1e-5, 'group-size': 2, accountant: 'pld' });
    const ug = await page.evaluate(() => new Promise((resolve) => {
      const w = $w('w1');
      w.addEventListener('change', (e) => resolve(e.detail), { once: true });
      w.groupSize = 2;
    }));
    const us = await page.evaluate(() => ({ pld: $s('w1', '.eps-pld').textContent, title: $s('w1', '.eps-pld').title, rdpHidden: $s('w1', '.rdp').hidden, attr: $w('w1').getAttribute('group-size') }));
    check(ug.groupSize === 2 && ug.epsilon === null && close(ug.epsilonPld, u.epsilon, 1e-6) && close(ug.epsilonPldLower, u.epsilon_lower, 1e-6) && us.pld === up4(u.epsilon)
      && us.rdpHidden && /^\[.*\]: user-level: each user contributes at most 2 examples/.test(us.title) && us.attr === '2',
      `w1 group-size="2": ε ≤ ${us.pld} = CLI user-level [${down6(u.epsilon_lower)}, ${up6(u.epsilon)}] ("${us.title.slice(0, 90)}"); no exact RDP`);
    // μ-GDP with its fit under the risk chart (#25), user-level here: the CLI's gdp --group-size 2.
    await page.evaluate(() => $w('w1').setAttribute('charts', 'risk'));
    await page.waitForFunction(() => /μ = /.test($s('w1', '.gdp')?.textContent || '') && !$s('w1', '.gdp').hidden, null, { timeout: 60000 }).catch(() => {});
    const gu = cli('gdp', { q: 0.01, sigma: 1.1, steps: 10000, 'group-size': 2 });
    const gdpText = await page.evaluate(() => $s('w1', '.gdp')?.textContent || '');
    check(gdpText.includes(`μ = ${up4(gu.mu)}`), `w1 charts="risk" group-size="2": μ-GDP under the risk chart = CLI gdp --group-size 2 ("${gdpText.slice(0, 80)}")`);
    await page.evaluate(() => $w('w1').removeAttribute('charts'));
    await page.evaluate(() => $w('w1').setAttribute('group-size', '0'));
    await page.waitForFunction(() => /attribute group-size: examples per user must be a whole number/.test($w('w1').shadowRoot.textContent), null, { timeout: 5000 }).catch(() => {});
    check(await page.evaluate(() => /attribute group-size: examples per user must be a whole number/.test($w('w1').shadowRoot.textContent) && $s('w1', '.eps-pld').textContent !== '—'),
      'w1 group-size="0": named, the last good value kept');
    const ub = await page.evaluate(() => new Promise((resolve) => {
      const w = $w('w1');
      w.addEventListener('change', (e) => resolve(e.detail), { once: true });
      w.removeAttribute('group-size');
    }));
    check(ub.groupSize === 1 && close(ub.epsilonPld, t.epsilon, 1e-9) && ub.epsilon > 0, `w1 without group-size: one example per user again (${ub.epsilonPld})`);
    // adjacency="replace-one" (#23): the CLI's --adjacency replace-one (tight), no exact RDP.
    const ro = cli('epsilon', { q: 0.01, sigma: 1.1, steps: 10000, delta: 1e-5, adjacency: 'replace-one', accountant: 'pld' });
    const ra1 = await page.evaluate(() => new Promise((resolve) => {
      const w = $w('w1');
      w.addEventListener('change', (e) => resolve(e.detail), { once: true });
      w.setAttribute('adjacency', 'replace-one');
    }));
    check(ra1.adjacency === 'replace-one' && ra1.epsilon === null && close(ra1.epsilonPld, ro.epsilon, 1e-6) && close(ra1.epsilonPldLower, ro.epsilon_lower, 1e-6),
      `w1 adjacency="replace-one": ε ≤ ${ra1.epsilonPld} = CLI [${down6(ro.epsilon_lower)}, ${up6(ro.epsilon)}]`);
    const ra2 = await page.evaluate(() => new Promise((resolve) => {
      const w = $w('w1');
      w.addEventListener('change', (e) => resolve(e.detail), { once: true });
      w.removeAttribute('adjacency');
    }));
    check(ra2.adjacency === 'add-remove' && close(ra2.epsilonPld, t.epsilon, 1e-9), `w1 without adjacency: add/remove again (${ra2.epsilonPld})`);
  }

  // Host CSS does not reach in; the widget's CSS does not leak out.
  const iso = await page.evaluate(() => {
    const w = getComputedStyle($s('w1', '.w'));
    const eps = getComputedStyle($s('w1', '.eps-pld'));
    return {
      font: w.fontSize, epsFont: eps.fontSize, color: eps.color, spacing: eps.letterSpacing,
      hostDisplay: getComputedStyle($w('w1')).display,
      probe: getComputedStyle(document.getElementById('probe')).fontSize,
      docSheets: document.adoptedStyleSheets.length,
    };
  });
  check(iso.font === '14px' && iso.epsFont === '22px' && iso.color !== 'rgb(0, 255, 0)' && iso.spacing === 'normal',
    `host CSS (all: unset, 200px fonts, lime) does not reach inside: ${JSON.stringify(iso)}`);
  check(iso.hostDisplay === 'block', 'the element stays a block under `* { all: unset }`');
  check(iso.probe === '200px' && iso.docSheets === 0, 'the widget adds no styles to the host document');

  // Sizes to its container.
  const sizes = await page.evaluate(() => ['w1', 'w2'].map((id) => {
    const c = $w(id).shadowRoot.querySelector('canvas');
    return { box: $w(id).parentElement.getBoundingClientRect().width, host: $w(id).getBoundingClientRect().width, canvas: c.getBoundingClientRect().width, px: c.width };
  }));
  for (const [i, s] of sizes.entries()) {
    check(s.host <= s.box + 0.5 && s.canvas <= s.host && s.canvas > s.box - 140 && s.px >= s.canvas, `w${i + 1} sizes to its ${s.box}px container (canvas ${s.canvas.toFixed(0)}px, backing ${s.px}px)`);
  }
  const before = await chartData(page, 'w1');
  await page.evaluate(() => { document.getElementById('box1').style.width = '520px'; });
  await page.waitForFunction(() => $w('w1').shadowRoot.querySelector('canvas').width < 520, null, { timeout: 5000 }).catch(() => {});
  const narrowed = await page.evaluate(() => $w('w1').shadowRoot.querySelector('canvas').width);
  check(narrowed < 520 && (await chartData(page, 'w1')) !== before, `w1 redraws when its container narrows to 520px (canvas ${narrowed}px)`);

  // Bad attributes: named inside that widget; never blank; the others keep working.
  const msg3 = await shadowText(page, 'w3', '.msg');
  check(/attribute q:/.test(msg3) && /attribute sigma:/.test(msg3) && /attribute calculator:/.test(msg3), `w3 names its bad attributes: "${msg3}"`);
  const w3links = await page.evaluate(() => [...$w('w3').shadowRoot.querySelectorAll('.foot a')].filter((a) => !a.hidden).map((a) => a.href));
  check(w3links.length === 1 && w3links[0] === 'https://arxiv.org/abs/1908.10530', `a javascript: calculator URL gives no calculator link, only the method's (${JSON.stringify(w3links)})`);
  check(/^\d+\.\d{4}$/.test(await shadowText(page, 'w3', '.eps')), 'w3 still shows numbers (defaults), not a blank box');

  // Themes: theme="dark"; auto on a dark host background; auto on white.
  const themes = await page.evaluate(() => ['w1', 'w4', 'w5'].map((id) => $s(id, '.w').dataset.theme));
  check(themes.join() === 'light,dark,dark', `theme: w1 light (white host), w4 dark (attribute), w5 dark (dark host background): ${themes}`);
  const dark2 = page.evaluate(() => nextChange('w2', 800));
  await page.evaluate(() => { document.body.style.background = '#000'; });
  await dark2;
  await page.waitForFunction(() => $s('w2', '.w').dataset.theme === 'dark', null, { timeout: 3000 }).catch(() => {});
  check((await page.evaluate(() => $s('w2', '.w').dataset.theme)) === 'dark', 'a host switching to a dark background turns auto widgets dark');
  await page.evaluate(() => { document.body.style.background = '#fff'; });

  // Attribute change → re-render + one `change` event with the engine's ε.
  const a0 = await chartData(page, 'w1');
  const ev = page.evaluate(() => nextChange('w1'));
  await page.evaluate(() => $w('w1').setAttribute('sigma', '2'));
  const d = await ev;
  const e2 = engine(0.01, 2, 10000, 1e-5);
  check(d && d.sigma === 2 && close(d.epsilon, e2.epsilon), `setAttribute('sigma', '2') fires change with ε ${d && d.epsilon} = engine ${e2.epsilon}`);
  check(d && ['q', 'sigma', 'steps', 'delta', 'epsilon', 'alpha', 'epsilonPld', 'epsilonPldLower'].every((k) => typeof d[k] === 'number' && Number.isFinite(d[k])), 'change detail holds numbers {q, sigma, steps, delta, epsilon, alpha, epsilonPld, epsilonPldLower}');
  check(d && d.epsilonPldLower <= d.epsilonPld && d.epsilonPld < d.epsilon, `the change event waits for the tight ε: [${d && d.epsilonPldLower}, ${d && d.epsilonPld}] below exact RDP ${d && d.epsilon}`);
  check((await chartData(page, 'w1')) !== a0, 'the chart redraws after the attribute change');
  const n = page.evaluate(() => countChanges('w1', 500));
  await page.evaluate(() => { const w = $w('w1'); w.setAttribute('q', '0.02'); w.setAttribute('sigma', '1.5'); w.setAttribute('steps', '5000'); w.setAttribute('delta', '1e-6'); });
  check((await n) === 1, 'four attributes set in one task → one recompute, one change event');
  check(close((await page.evaluate(() => $w('w1').value.epsilon)), engine(0.02, 1.5, 5000, 1e-6).epsilon), 'and its ε is the engine\'s');

  // A bad attribute change: no event, message names it, numbers kept; others still work.
  const kept = await shadowText(page, 'w1', '.eps');
  const none = page.evaluate(() => countChanges('w1', 500));
  await page.evaluate(() => $w('w1').setAttribute('q', '7'));
  check((await none) === 0 && (await shadowText(page, 'w1', '.eps')) === kept, 'q="7" keeps the last good numbers (no change event)');
  check(/attribute q:/.test(await shadowText(page, 'w1', '.msg')), `q="7" is named inline: "${await shadowText(page, 'w1', '.msg')}"`);
  await page.evaluate(() => $w('w1').setAttribute('sigma', '<img src=x onerror="window.__pwned=1">'));
  await page.waitForTimeout(100);
  check((await page.evaluate(() => $w('w1').shadowRoot.querySelectorAll('img').length + (window.__pwned ? 1 : 0))) === 0
    && (await shadowText(page, 'w1', '.msg')).includes('<img'), 'markup in an attribute is shown as text, never parsed');
  const other = page.evaluate(() => nextChange('w5'));
  await page.evaluate(() => $w('w5').setAttribute('steps', '1000'));
  check(close((await other)?.epsilon ?? NaN, engine(0.02, 2, 1000, 1e-6).epsilon), 'another widget keeps working meanwhile');

  // accountant="rdp": exact RDP only, no worker round trip, the tight fields null; a bad
  // accountant is named and the last good one kept.
  {
    const r = page.evaluate(() => nextChange('w5'));
    await page.evaluate(() => $w('w5').setAttribute('accountant', 'rdp'));
    await page.evaluate(() => $w('w5').setAttribute('steps', '1200'));
    const d5 = await r;
    check(d5 && d5.epsilonPld === null && d5.epsilonPldLower === null && close(d5.epsilon, engine(0.02, 2, 1200, 1e-6).epsilon)
      && (await page.evaluate(() => $s('w5', '.pld').hidden)) && (await shadowText(page, 'w5', '.rdp')).startsWith('ε = '),
      `accountant="rdp": exact RDP only, epsilonPld null (${JSON.stringify(d5 && [d5.epsilon, d5.epsilonPld])})`);
    await page.evaluate(() => $w('w5').setAttribute('accountant', 'prv'));
    await page.waitForTimeout(100);
    const m5 = await shadowText(page, 'w5', '.msg');
    check(/attribute accountant: 'prv' is not an accountant: use both, pld, rdp/.test(m5), `a bad accountant is named: "${m5}"`);
    await page.evaluate(() => $w('w5').setAttribute('charts', 'epsilon roc'));
    await page.waitForTimeout(100);
    check(/attribute charts: 'roc' is not a chart: use epsilon, bound, training, profile, risk or none/.test(await shadowText(page, 'w5', '.msg')), 'a bad chart name lists the charts');
    await page.evaluate(() => { $w('w5').removeAttribute('charts'); $w('w5').removeAttribute('accountant'); });
  }

  // Full mode controls (inside the shadow root).
  const typed = page.evaluate(() => nextChange('w2'));
  await page.locator('#w2 input[aria-label="noise_multiplier σ"]').fill('2.5');
  const dt = await typed;
  check(dt && dt.sigma === 2.5 && close(dt.epsilon, engine(0.08192, 2.5, 2000, 1e-5).epsilon), `typing σ = 2.5 in the full widget: ε ${dt && dt.epsilon}`);
  // Enter commits 2.5: a value typed invalid afterwards goes back to it (the state never
  // keeps a valid prefix of invalid text; the value from before the edit stands).
  await page.locator('#w2 input[aria-label="noise_multiplier σ"]').press('Enter');
  const keep2 = await shadowText(page, 'w2', '.eps');
  await page.locator('#w2 input[aria-label="noise_multiplier σ"]').fill('abc');
  await page.waitForTimeout(100);
  const ferr = await page.evaluate(() => [...$w('w2').shadowRoot.querySelectorAll('.ferr')].map((e) => e.textContent).join(''));
  check(ferr.length > 0 && (await shadowText(page, 'w2', '.eps')) === keep2, `typing σ = abc: "${ferr}", ε kept`);
  const slid = page.evaluate(() => nextChange('w2'));
  await page.locator('#w2 input[type=range]').first().focus();
  for (let i = 0; i < 20; i++) await page.keyboard.press('ArrowLeft');
  const ds = await slid;
  check(ds && ds.q < 0.08192, `the q slider moves q (${ds && ds.q}) and fires change`);

  await page.screenshot({ path: join(OUT, 'widgets-hostile.png'), fullPage: true });

  // Removing a widget: its listeners go; nothing logs an error; re-adding renders again.
  const removed = await page.evaluate(async () => {
    const w = $w('w1');
    const parent = w.parentElement;
    w.remove();
    document.documentElement.className = 'dark';
    document.body.dataset.theme = 'dark';
    await new Promise((r) => setTimeout(r, 200));
    const again = nextChange(w);
    parent.appendChild(w);
    return { again: await again, others: document.querySelectorAll('sgm-rdp-calculator').length };
  });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(200);
  check(removed.again && removed.again.epsilon > 0, 'a widget removed and re-added renders again and fires change');
  // The removed widget's own controls lose their listeners: events on them reach no freed Rust
  // closure (that would throw "closure invoked … after being dropped" here).
  const stale = await page.evaluate(async () => {
    const w = $w('w2');
    const inputs = [...w.shadowRoot.querySelectorAll('input')];
    let changes = 0;
    w.addEventListener('change', () => changes++);
    w.remove();
    const before = errorsSeen.length;
    for (const i of inputs) {
      i.value = i.type === 'range' ? '0' : '2';
      i.dispatchEvent(new Event('input'));
    }
    await new Promise((r) => setTimeout(r, 200));
    return { changes, errors: errorsSeen.length - before, n: inputs.length };
  });
  check(stale.n === 8 && stale.changes === 0 && stale.errors === 0, `input events on a removed widget's 8 controls do nothing (${JSON.stringify(stale)})`);
  const after = page.evaluate(() => nextChange('w4'));
  await page.evaluate(() => { const w = $w('w3'); w.remove(); $w('w4').setAttribute('steps', '50000'); });
  check(close((await after)?.epsilon ?? NaN, cli('epsilon', { q: 0.001, sigma: 0.8, steps: 50000, delta: 1e-8, conversion: 'classic' }).epsilon), 'after removing w3, w4 still updates');
  await page.close();

  // ---- B. The "done when" page: two lines, nothing else ----
  const mini = await newPage(browser, errors, 'minimal', { viewport: { width: 800, height: 700 } });
  await mini.goto(host.base + 'minimal.html');
  await mini.waitForFunction(() => document.querySelector('sgm-rdp-calculator')?.value, null, { timeout: 20000 });
  const mv = await mini.evaluate(() => document.querySelector('sgm-rdp-calculator').value);
  const me = engine(0.01, 1.1, 10000, 1e-5);
  check(close(mv.epsilon, me.epsilon), `minimal two-line page: ε ${mv.epsilon} = engine ${me.epsilon}`);
  // Without a calculator page, the full widget's method link names the paper (arXiv).
  const mref = await mini.evaluate(() => { const a = document.querySelector('sgm-rdp-calculator').shadowRoot.querySelector('.foot a'); return a && !a.closest('.foot').hidden ? [a.href, a.textContent, a.title] : null; });
  check(mref && mref[0] === 'https://arxiv.org/abs/1908.10530' && /Mironov–Talwar–Zhang/.test(mref[1]) && /Rényi Differential Privacy of the Sampled Gaussian Mechanism/.test(mref[2]),
    `the widget names its method with a link: ${JSON.stringify(mref)}`);
  await mini.screenshot({ path: join(OUT, 'widget-minimal.png'), fullPage: true });
  // Benchmark (reported, not asserted): attribute change → recompute + redraw → change event,
  // exact RDP alone (accountant="rdp") and with the tight ε from the worker (default "both").
  const wbench = (accountant) => mini.evaluate(async (accountant) => {
    const el = document.querySelector('sgm-rdp-calculator');
    el.setAttribute('accountant', accountant);
    await new Promise((r) => setTimeout(r, 300));
    const costs = [];
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      const got = new Promise((r) => el.addEventListener('change', r, { once: true }));
      el.setAttribute('sigma', String(0.6 + i * 0.05 + (accountant === 'rdp' ? 0 : 0.01)));
      await got;
      costs.push(performance.now() - t0);
    }
    costs.sort((a, b) => a - b);
    return { p50: costs[29], p95: costs[56], max: costs[59] };
  }, accountant);
  const wb = await wbench('rdp');
  console.log(`bench widget: setAttribute → change (recompute + redraw, 800 px) p50 ${wb.p50.toFixed(2)} ms, p95 ${wb.p95.toFixed(2)} ms, max ${wb.max.toFixed(2)} ms`);
  wb.tight = await wbench('both');
  console.log(`bench widget tight: setAttribute → change with epsilonPld (q = 0.01, T = 10⁴; worker) p50 ${wb.tight.p50.toFixed(2)} ms, p95 ${wb.tight.p95.toFixed(2)} ms, max ${wb.tight.max.toFixed(2)} ms`);
  // Small σ: the widget's exact-RDP model comes from the worker; its thread never blocks.
  const small = await mini.evaluate(async () => {
    const el = document.querySelector('sgm-rdp-calculator');
    const lt = [];
    const po = new PerformanceObserver((l) => { for (const e of l.getEntries()) lt.push(e.duration); });
    po.observe({ type: 'longtask' });
    const got = new Promise((r) => el.addEventListener('change', (e) => r(e.detail), { once: true }));
    el.setAttribute('q', '0.5');
    el.setAttribute('sigma', '0.001');
    el.setAttribute('steps', '1000000000');
    await new Promise((r) => setTimeout(r, 50));
    const ctx = el.shadowRoot.querySelector('.ctx').textContent;
    const d = await Promise.race([got, new Promise((r) => setTimeout(() => r(null), 30000))]);
    await new Promise((r) => setTimeout(r, 300));
    po.disconnect();
    return { d, ctx, longest: Math.max(0, ...lt), eps: el.shadowRoot.querySelector('.eps').textContent };
  });
  check(small.d && small.d.epsilon > 1e6 && small.d.sigma === 0.001 && small.longest <= 250 && /computing/.test(small.ctx),
    `widget at q = 0.5, σ = 0.001, T = 1e9: "${small.ctx}", then change with ε ${small.d && small.d.epsilon} (${small.eps}); longest main-thread task ${small.longest.toFixed(0)} ms (goal 50, fails over 250)`);
  await writeFile(join(OUT, 'bench-widget.json'), JSON.stringify(wb, null, 2));
  await mini.close();

  // Properties mirror attributes, also when set before widget.js loads (frameworks do this).
  const late = await newPage(browser, errors, 'late');
  await late.goto(host.base + 'late.html');
  const lv = await late.evaluate(async (src) => {
    const el = document.createElement('sgm-rdp-calculator');
    el.q = 0.05; el.sigma = 2; el.steps = 300; el.delta = 1e-6;
    document.body.append(el);
    await import(src);
    await customElements.whenDefined('sgm-rdp-calculator');
    const first = await new Promise((r) => el.addEventListener('change', (e) => r(e.detail), { once: true }));
    const next = new Promise((r) => el.addEventListener('change', (e) => r(e.detail), { once: true }));
    el.sigma = 3;
    return { first, next: await next, attr: el.getAttribute('sigma'), prop: el.sigma };
  }, cdn.base + 'widget.js');
  check(lv.first.q === 0.05 && close(lv.first.epsilon, engine(0.05, 2, 300, 1e-6).epsilon), `properties set before the module loaded are kept (ε ${lv.first.epsilon})`);
  check(lv.next.sigma === 3 && lv.attr === '3' && lv.prop === '3', 'el.sigma = 3 sets the attribute and recomputes');
  await late.close();

  // ---- C. embed.html: two live widgets, iframe sized by its posted height ----
  const emb = await newPage(browser, errors, 'embed.html');
  await emb.goto(cdn.base + 'embed.html');
  await emb.waitForFunction(() => [...document.querySelectorAll('sgm-rdp-calculator')].every((w) => w.value), null, { timeout: 20000 });
  check((await emb.evaluate(() => document.querySelectorAll('sgm-rdp-calculator').length)) === 3, 'embed.html has three live widgets');
  {
    // Its file list names every file the widget loads, each served (issue 61 #6: it named
    // four, and a copy made from it failed with a 404 on sgm-rdp-page.js).
    const files = ['widget.js', 'sgm-rdp-page.js', 'sgm-rdp-page_bg.wasm', 'pld-worker.js', 'sgm-rdp-worker.js', 'sgm-rdp-worker_bg.wasm'];
    const listed = await emb.evaluate(() => [...document.querySelectorAll('section.panel')].find((s) => /Files/.test(s.querySelector('h2')?.textContent || ''))?.textContent || '');
    const served = await emb.evaluate(async (fs) => Promise.all(fs.map((f) => fetch(f, { method: 'HEAD' }).then((r) => r.ok))), files);
    check(files.every((f) => listed.includes(f)) && served.every(Boolean), `embed.html lists the widget's six files, each served: ${files.map((f, k) => `${f} ${listed.includes(f) ? 'listed' : 'MISSING'}/${served[k] ? 'ok' : '404'}`).join(', ')}`);
  }
  {
    const copies = await emb.evaluate(() => ({ pres: document.querySelectorAll('pre').length, buttons: document.querySelectorAll('button.copy').length }));
    // Record every text the button shows (the clipboard answers asynchronously and the
    // label resets after 2.5 s: wait on the label change itself, not on time).
    await emb.evaluate(() => {
      window.__copySaid = [];
      const b = document.querySelector('button.copy');
      new MutationObserver(() => window.__copySaid.push(b.textContent)).observe(b, { childList: true, characterData: true, subtree: true });
    });
    await emb.locator('button.copy').first().click();
    await emb.waitForFunction(() => window.__copySaid.length > 0, null, { timeout: 20000 }).catch(() => {});
    const said = (await emb.evaluate(() => window.__copySaid[0])) ?? 'Copy';
    check(copies.pres >= 8 && copies.buttons === copies.pres && /Copied|Selected/.test(said), `embed.html: a Copy button on each of ${copies.pres} snippets; clicking says "${said}"`);
    check((await emb.textContent('body')).includes('IPython.display.HTML') && (await emb.textContent('body')).includes('baseUrl'), 'embed.html covers Jupyter/Quarto and Docusaurus baseUrl');
  }
  // The tight widget (same origin, strict CSP: the worker starts from pld-worker.js itself).
  await emb.waitForFunction(() => document.getElementById('demo-tight').value?.epsilonPld != null, null, { timeout: 20000 }).catch(() => {});
  {
    const tv = await emb.evaluate(() => document.getElementById('demo-tight').value);
    check(tv.epsilonPld != null && Math.abs(tv.epsilonPld - 2.38169) / 2.38169 < 1e-3 && tv.epsilonPldLower <= 2.38169,
      `demo-tight (MNIST, accountant="pld"): epsilonPld ${tv.epsilonPld} within 0.1 % of the converged tight ε 2.38169, bracket from ${tv.epsilonPldLower}`);
    const parts = await emb.evaluate(() => { const r = document.getElementById('demo-tight').shadowRoot; return { pld: r.querySelector('.pld').hidden, rdp: r.querySelector('.rdp').hidden }; });
    check(!parts.pld && parts.rdp, `accountant="pld" shows only the tight ε (${JSON.stringify(parts)})`);
    await emb.waitForFunction(() => [...document.getElementById('demo-tight').shadowRoot.querySelectorAll('canvas')].filter((c) => !c.hidden).length === 3
      && ![...document.getElementById('demo-tight').shadowRoot.querySelectorAll('canvas')].some((c) => !c.hidden && c.classList.contains('stale')), null, { timeout: 30000 }).catch(() => {});
    const drawn = await emb.evaluate(() => [...document.getElementById('demo-tight').shadowRoot.querySelectorAll('canvas')].filter((c) => !c.hidden).map((c) => {
      // Pixels that differ from the painted background (the top-left corner).
      const x = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      for (let i = 0; i < x.length; i += 4 * 7) if (x[i + 3] > 0 && Math.abs(x[i] - x[0]) + Math.abs(x[i + 1] - x[1]) + Math.abs(x[i + 2] - x[2]) > 60) ink++;
      if (x[3] === 0) ink = 0; // never painted
      return { label: c.getAttribute('aria-label'), ink };
    }));
    check(drawn.length === 3 && drawn.every((c) => c.ink > 200), `charts="training profile risk": three drawn canvases (${JSON.stringify(drawn.map((c) => c.ink))})`);
    check(/membership-inference risk: an attacker/i.test(drawn[2]?.label || ''), `the risk chart's label states the attack bound: "${drawn[2]?.label}"`);
    // Its export (issue 61 #6): SVG and CSV of the values shown, none for a chart not shown
    // and none of the old run once the values change (until their answer is here).
    const ex = await emb.evaluate(async () => {
      const el = document.getElementById('demo-tight');
      const got = { svg: el.exportChart('risk'), csv: el.exportChart('training', 'csv'), none: el.exportChart('bound') };
      el.setAttribute('sigma', '1.37');
      await new Promise((r) => setTimeout(r, 0));
      got.after = el.exportChart('risk');
      return got;
    });
    check(ex.svg?.startsWith('<svg') && ex.svg.includes('membership-inference risk') && ex.svg.includes('σ = 1.1') && ex.csv?.startsWith('# charts_for = ')
      && ex.csv.includes('\nrisk,fpr,') && ex.none === null && ex.after === null,
      `demo-tight exportChart: an SVG of the risk chart naming its run (${ex.svg?.length} chars), the charts CSV, null for a chart not shown and for the old run after σ changes (${ex.after === null})`);
  }
  check((await emb.textContent('#demo-log')).includes(`ε = ${up4(me.epsilon)}`), 'embed.html logs the compact widget\'s change event');
  const [refs, link] = await emb.evaluate(() => [...document.getElementById('demo-compact').shadowRoot.querySelectorAll('.foot a')].map((a) => a.href));
  check(link === `${cdn.base}index.html?v=1&q=0.01&sigma=1.1&steps=10000&delta=0.00001&conv=improved&acct=pld&batch=poisson`, `calculator="index.html" links the full page with the values: ${link}`);
  check(refs === `${link}#references`, `the widget's method link goes to the calculator's References: ${refs}`);
  // Hardening round 3, #15: a calculator URL with its own query and fragment is composed
  // through the URL API (its query kept, the fragment not doubled).
  {
    const got = await emb.evaluate(async () => {
      const el = document.createElement('sgm-rdp-calculator');
      for (const [k, v] of [['q', '0.01'], ['sigma', '1.1'], ['steps', '10000'], ['delta', '1e-5'], ['accountant', 'rdp'], ['calculator', 'https://x.example/calc?a=1#frag']]) el.setAttribute(k, v);
      const changed = new Promise((r) => el.addEventListener('change', r, { once: true }));
      document.body.append(el);
      await changed;
      const hrefs = [...el.shadowRoot.querySelectorAll('.foot a')].map((a) => a.href);
      el.remove();
      return hrefs;
    });
    const [r15, l15] = got;
    check(l15 === 'https://x.example/calc?a=1&v=1&q=0.01&sigma=1.1&steps=10000&delta=0.00001&conv=improved&acct=rdp&batch=poisson#frag'
      && r15 === 'https://x.example/calc?a=1&v=1&q=0.01&sigma=1.1&steps=10000&delta=0.00001&conv=improved&acct=rdp&batch=poisson#references',
    `calculator="https://x.example/calc?a=1#frag": its query kept, one fragment (${l15} | ${r15})`);
  }
  const linked = await newPage(browser, errors, 'linked');
  await linked.goto(link);
  await linked.waitForFunction(() => /\d/.test(document.querySelector('#epsilon')?.textContent || ''), null, { timeout: 15000 });
  check((await linked.textContent('#epsilon')) === up4(me.epsilon), 'the link opens the full calculator on the same ε');
  await linked.close();
  await emb.waitForFunction(() => document.getElementById('demo-frame').style.height !== '', null, { timeout: 20000 }).catch(() => {});
  const fh = await emb.evaluate(() => document.getElementById('demo-frame').style.height);
  check(parseFloat(fh) > 300, `embed.html's iframe is sized by the posted height (${fh})`);
  await emb.screenshot({ path: join(OUT, 'embed.png'), fullPage: true });
  await emb.setViewportSize({ width: 360, height: 800 });
  await emb.waitForTimeout(300);
  const ov = await emb.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(ov <= 0, `embed.html at 360 px: no horizontal scroll (overflow ${ov})`);
  await emb.emulateMedia({ colorScheme: 'dark' });
  await emb.waitForTimeout(300);
  check((await emb.evaluate(() => document.querySelector('sgm-rdp-calculator').shadowRoot.querySelector('.w').dataset.theme)) === 'dark', 'embed.html in dark mode: the widgets follow');
  await emb.screenshot({ path: join(OUT, 'embed-360-dark.png'), fullPage: false });
  await emb.close();

  // ---- C2. Hardening: theme toggles, value before load, a widget moved to an iframe ----
  const many = await newPage(browser, errors, 'many');
  await many.addInitScript(helpers);
  await many.goto(host.base + 'many.html');
  const mids = ['early', ...Array.from({ length: 20 }, (_, i) => 'm' + i)];
  await allRendered(many, mids);
  // Every widget's tight ε has arrived (the worker answers them in turn).
  await many.waitForFunction((ids) => ids.every((id) => document.getElementById(id).value?.epsilonPld != null), mids, { timeout: 30000 }).catch(() => {});
  const early = await many.evaluate(() => $w('early').value);
  check(early && typeof early === 'object' && close(early.epsilon, engine(0.01, 1.1, 1000, 1e-5).epsilon), 'el.value set before widget.js loaded does not shadow the getter');
  // Docs themes toggle classes on <html>/<body> on scroll: no redraw unless the theme changes.
  const renders = await many.evaluate(async () => {
    // Count canvas drawing calls (every redraw fills its background first).
    let n = 0;
    const proto = CanvasRenderingContext2D.prototype;
    const orig = proto.fillRect;
    proto.fillRect = function (...a) { n++; return orig.apply(this, a); };
    for (let i = 0; i < 30; i++) {
      document.documentElement.classList.toggle('scrolled');
      document.body.classList.toggle('sticky');
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 100));
    const unchanged = n;
    document.documentElement.style.colorScheme = 'dark';
    await new Promise((r) => setTimeout(r, 300));
    proto.fillRect = orig;
    return { unchanged, afterDark: n - unchanged };
  });
  check(renders.unchanged === 0 && renders.afterDark >= 1, `30 class toggles on <html>/<body>: ${renders.unchanged} canvas fills; a real theme change redraws the widgets near the screen (${renders.afterDark} fills)`);
  // Charts are drawn near the viewport only: a far widget draws (dark) when scrolled to,
  // and printing draws every one.
  const lazy = await many.evaluate(async () => {
    const last = document.getElementById('m19');
    const ink = (w) => { const c = w.shadowRoot.querySelector('canvas'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; i += 4) n += d[i] > 0; return n; };
    const before = ink(last);
    last.scrollIntoView();
    await new Promise((r) => setTimeout(r, 400));
    const after = ink(last);
    const theme = last.shadowRoot.querySelector('.w').dataset.theme;
    scrollTo(0, 0);
    await new Promise((r) => setTimeout(r, 400));
    // A widget far below, never scrolled to: drawn on beforeprint, synchronously.
    const far = document.createElement('sgm-rdp-calculator');
    far.style.cssText = 'display: block; margin-top: 5000px';
    document.body.append(far);
    await new Promise((r) => setTimeout(r, 400));
    const farBefore = ink(far);
    dispatchEvent(new Event('beforeprint'));
    const farPrinted = ink(far);
    far.remove();
    return { before, after, theme, farBefore, farPrinted };
  });
  check(lazy.before === 0 && lazy.after > 1000 && lazy.theme === 'dark' && lazy.farBefore === 0 && lazy.farPrinted > 1000,
    `a far widget's chart waits until it is near (ink ${lazy.before} → ${lazy.after} when scrolled to, theme ${lazy.theme}); printing draws it at once (${lazy.farBefore} → ${lazy.farPrinted})`);
  // A widget moved into an iframe's document (adoptNode) renders with that document's sheet.
  const moved = await many.evaluate(async () => {
    const doc = document.getElementById('frame').contentDocument;
    const w = document.getElementById('m3');
    const got = new Promise((r) => w.addEventListener('change', (e) => r(e.detail), { once: true }));
    doc.body.append(doc.adoptNode(w));
    const detail = await Promise.race([got, new Promise((r) => setTimeout(() => r(null), 5000))]);
    return { detail: !!detail, sheets: w.shadowRoot.adoptedStyleSheets.length, errors: errorsSeen.slice() };
  });
  check(moved.detail && moved.sheets === 1 && moved.errors.length === 0, `a widget moved into an iframe renders with its own document's stylesheet (${JSON.stringify(moved)})`);
  // 200 widgets appear in one task: all rendered within 2 s (numbers and change events for
  // all; charts for those near the screen), no main-thread task over 50 ms meanwhile
  // (renders run in ≤ 8 ms slices; the tight ε follows from the worker).
  const crowd = await many.evaluate(async () => {
    const lt = [];
    const po = new PerformanceObserver((l) => { for (const e of l.getEntries()) lt.push(e.duration); });
    po.observe({ type: 'longtask' });
    const box = document.createElement('div');
    // At the top of the page, where the reader is (the first few on screen).
    document.body.prepend(box);
    scrollTo(0, 0);
    const t0 = performance.now();
    const els = [];
    for (let i = 0; i < 200; i++) {
      const w = document.createElement('sgm-rdp-calculator');
      w.setAttribute('sigma', String(1 + i / 100));
      w.setAttribute('accountant', i % 2 ? 'rdp' : 'both');
      els.push(w);
      box.append(w);
    }
    while (!els.every((w) => w.value) && performance.now() - t0 < 20000) await new Promise((r) => setTimeout(r, 10));
    const rendered = performance.now() - t0;
    // Drawn = the canvas has ink; near = within one viewport height of the screen.
    const inked = (w) => { const c = w.shadowRoot.querySelector('canvas'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; for (let i = 3; i < d.length; i += 4) if (d[i]) return true; return false; };
    const isNear = (w) => { const r = w.getBoundingClientRect(); return r.bottom > -innerHeight && r.top < 2 * innerHeight; };
    // The near charts are drawn in slices after the values: waited for (up to 10 s; a fixed
    // 200 ms found 3 of 4 on a loaded machine), then the far ones must still be blank.
    const t1 = performance.now();
    await new Promise((r) => setTimeout(r, 200));
    while (!els.filter(isNear).every(inked) && performance.now() - t1 < 10000) await new Promise((r) => setTimeout(r, 50));
    po.disconnect();
    const near = els.filter(isNear);
    return { rendered, longest: Math.max(0, ...lt), near: near.length, drawnNear: near.filter(inked).length, drawnFar: els.filter((w) => !isNear(w) && inked(w)).length };
  });
  console.log(`bench 200 widgets: all rendered after ${crowd.rendered.toFixed(0)} ms, longest main-thread task ${crowd.longest.toFixed(0)} ms`);
  // Structural, so it cannot fail at random on a busy machine (hardening round 3, #17): every
  // widget rendered (the wait above is on that event), the charts near the screen drawn and
  // the far ones waiting until scrolled to. The timings (goal: all values within 2 s, no
  // main-thread task over 50 ms) are the benchmark line above; only a freeze of a quarter
  // second — a regression, not load — fails here.
  check(Number.isFinite(crowd.rendered) && crowd.longest <= 250 && crowd.near > 0 && crowd.drawnNear === crowd.near && crowd.drawnFar === 0,
    `200 widgets in one task: all rendered (${crowd.rendered.toFixed(0)} ms; goal 2000), charts drawn for the ${crowd.drawnNear} of ${crowd.near} near the screen (${crowd.drawnFar} far ones), longest main-thread task ${crowd.longest.toFixed(0)} ms (goal 50, fails over 250)`);
  // Hardening round 3, #4: 200 widgets with the tight accountant and its three charts, each a
  // different σ: every number arrives, but only the widgets near the screen ask the worker for
  // charts (the others did, and the last value came after 34 s); scrolled to, a far one asks.
  const tightCrowd = await many.evaluate(async () => {
    const asked = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, ...rest) {
      if (m && typeof m === 'object' && typeof m.client === 'string' && m.kind === undefined) asked.push({ client: m.client, charts: m.charts === true, sigma: m.sigma });
      return post.call(this, m, ...rest);
    };
    const box = document.createElement('div');
    document.body.prepend(box);
    scrollTo(0, 0);
    const els = [];
    for (let i = 0; i < 200; i++) {
      const w = document.createElement('sgm-rdp-calculator');
      w.setAttribute('sigma', String(2 + i / 50));
      w.setAttribute('steps', '1000');
      w.setAttribute('accountant', 'pld');
      w.setAttribute('charts', 'training profile risk');
      els.push(w);
      box.append(w);
    }
    const t0 = performance.now();
    while (!els.every((w) => w.value && w.value.epsilonPld != null) && performance.now() - t0 < 60000) await new Promise((r) => setTimeout(r, 20));
    const valued = els.filter((w) => w.value && w.value.epsilonPld != null).length;
    const isNear = (w) => { const r = w.getBoundingClientRect(); return r.bottom > -innerHeight && r.top < 2 * innerHeight; };
    const sigmaOf = new Map(els.map((w) => [String(Number(w.getAttribute('sigma'))), w]));
    const chartAsks = asked.filter((a) => a.charts).map((a) => sigmaOf.get(String(a.sigma))).filter(Boolean);
    const farAsked = chartAsks.filter((w) => !isNear(w)).length;
    const last = els[els.length - 1];
    const before = asked.length;
    last.scrollIntoView();
    const t1 = performance.now();
    while (!asked.slice(before).some((a) => a.charts && a.sigma === Number(last.getAttribute('sigma'))) && performance.now() - t1 < 5000) await new Promise((r) => setTimeout(r, 20));
    const lastAsked = asked.slice(before).some((a) => a.charts && a.sigma === Number(last.getAttribute('sigma')));
    Worker.prototype.postMessage = post;
    box.remove();
    return { valued, seconds: (performance.now() - t0) / 1000, chartAsks: chartAsks.length, farAsked, lastAsked, requests: asked.length };
  });
  console.log(`bench 200 tight widgets with charts: all values after ${tightCrowd.seconds.toFixed(1)} s (goal 2 s)`);
  check(tightCrowd.valued === 200 && tightCrowd.farAsked === 0 && tightCrowd.chartAsks > 0 && tightCrowd.lastAsked,
    `200 tight widgets with three charts each: every value arrived (${tightCrowd.valued}); tight charts asked only near the screen (${tightCrowd.chartAsks} asks, ${tightCrowd.farAsked} from far widgets); a far one asks once scrolled to (${tightCrowd.lastAsked})`);
  await many.close();

  // ---- D. The JS API, in the browser ----
  const api = await newPage(browser, errors, 'api');
  await api.goto(cdn.base + 'embed.html');
  const P = { q: 0.01, sigma: 1.1, steps: 10000, delta: 1e-5 };
  const got = await api.evaluate(async (P) => {
    const m = await import('./sgm-rdp.js');
    await m.default();
    const tryErr = (f) => { try { const r = f(); return { returned: JSON.stringify(r) }; } catch (e) { return { isError: e instanceof Error, message: e.message }; } };
    return {
      eps: m.epsilon(P),
      epsAlias: m.epsilon({ sample_rate: P.q, noise_multiplier: P.sigma, steps: P.steps, delta: P.delta }),
      classic: m.epsilon({ ...P, conversion: 'classic' }),
      delta: m.delta({ q: P.q, sigma: P.sigma, steps: P.steps, epsilon: 3 }),
      sigma: m.calibrateSigma({ epsilon: 3, delta: P.delta, q: P.q, steps: P.steps }),
      steps: m.calibrateSteps({ epsilon: 3, delta: P.delta, q: P.q, sigma: P.sigma }),
      rdp: m.rdp({ q: P.q, sigma: P.sigma, orders: [1.5, 2, 8, 32.5, 256], steps: 100 }),
      bounds: m.bounds({ q: P.q, sigma: P.sigma, orders: [2, 8, 32] }),
      compare: m.compare({ q: P.q, sigma: P.sigma, steps: 1000, delta: P.delta }),
      errors: [
        tryErr(() => m.epsilon({ ...P, q: 7 })),
        tryErr(() => m.epsilon({ ...P, sigma: -1 })),
        tryErr(() => m.epsilon({ ...P, delta: 2 })),
        tryErr(() => m.epsilon({ ...P, steps: 0 })),
        tryErr(() => m.epsilon({ q: P.q, sigma: P.sigma, steps: P.steps })),
        tryErr(() => m.epsilon({ ...P, noise: 1 })),
        tryErr(() => m.epsilon({ ...P, q: '0.01' })),
        tryErr(() => m.epsilon({ ...P, conversion: 'best' })),
        tryErr(() => m.rdp({ q: P.q, sigma: P.sigma, orders: [0.5] })),
        tryErr(() => m.calibrateSigma({ epsilon: -1, delta: P.delta, q: P.q, steps: P.steps })),
        tryErr(() => m.bounds(null)),
      ],
    };
  }, P);
  const ce = cli('epsilon', P);
  check(close(got.eps.epsilon, ce.epsilon) && close(got.eps.alpha, ce.alpha, ALPHA_REL) && close(got.eps.gridEpsilon, ce.grid_epsilon) && got.eps.gridAlpha === ce.grid_alpha && got.eps.atEdge === ce.at_edge,
    `API epsilon() = engine: ${JSON.stringify(got.eps)}`);
  check(JSON.stringify(got.epsAlias) === JSON.stringify(got.eps), 'API takes sample_rate / noise_multiplier too');
  check(close(got.classic.epsilon, cli('epsilon', { ...P, conversion: 'classic' }).epsilon), 'API epsilon(conversion: classic) = engine');
  const cd = cli('delta', { q: P.q, sigma: P.sigma, steps: P.steps, epsilon: 3 });
  check(close(got.delta.delta, cd.delta) && close(got.delta.alpha, cd.alpha, ALPHA_REL), `API delta() = engine ${cd.delta}`);
  const cs = cli('calibrate', { epsilon: 3, delta: P.delta, q: P.q, steps: P.steps });
  check(close(got.sigma.sigma, cs.sigma) && close(got.sigma.epsilon, cs.epsilon), `API calibrateSigma() = engine σ ${cs.sigma}`);
  const ct = cli('calibrate', { epsilon: 3, delta: P.delta, q: P.q, sigma: P.sigma, target: 'steps' });
  check(got.steps.steps === ct.steps && close(got.steps.epsilon, ct.epsilon), `API calibrateSteps() = engine T ${ct.steps}`);
  const cr = cli('rdp', { q: P.q, sigma: P.sigma, orders: '1.5,2,8,32.5,256', steps: 100 });
  check(cr.orders.every((r, i) => got.rdp.orders[i] === r.alpha && close(got.rdp.rdp[i], r.rdp) && close(got.rdp.rdpTotal[i], r.rdp_total)), 'API rdp() = engine at 5 orders (per step and composed)');
  const cb = cli('bounds', { q: P.q, sigma: P.sigma, orders: '2,8,32' });
  check(cb.orders.every((r, i) => {
    const g = got.bounds.orders[i];
    return g.alpha === r.alpha && close(g.exact, r.exact) && r.bounds.every((b, j) => b.name === g.bounds[j].name && close(b.value, g.bounds[j].value) && b.fails === g.bounds[j].fails);
  }) && close(got.bounds.maxAlpha.exact, cb.max_alpha.exact), 'API bounds() = engine (values, failing conditions, largest α)');
  const cc = cli('compare', { q: P.q, sigma: P.sigma, steps: 1000, delta: P.delta }).routes;
  check(cc.length === got.compare.length && cc.every((r, i) => r.name === got.compare[i].name && r.note === got.compare[i].note
    && (r.epsilon === null ? got.compare[i].epsilon === null : close(r.epsilon, got.compare[i].epsilon))), `API compare() = engine (${cc.length} routes, n/a reasons included)`);
  check(got.errors.every((e) => e.isError && /^[a-zA-Z]+: ./.test(e.message)), `API throws Error on each of ${got.errors.length} bad inputs: ${got.errors.map((e) => e.message || e.returned).join(' | ')}`);
  const reason = cliError('epsilon', { ...P, q: 7 });
  check(got.errors[0].message === `epsilon: ${reason}`, `API error carries the engine's message ("${reason}")`);

  // ---- D2. The tight (PLD) accountant through the API: the CLI's bracket, its cost
  // in wasm, and a module that stays usable after hostile values (throwing Proxies,
  // revoked Proxies, throwing getters, absurd lengths). ----
  const MN = { q: 256 / 60000, sigma: 1.1, steps: 14063, delta: 1e-5 };
  // The worker-only wasm's batchLine = the command line's batch, line for line: schemes,
  // adjacency, user-level ε, both accountants, refusals.
  const BATCH = [
    { q: 0.01, sigma: 1, steps: 1000, delta: 1e-5, accountant: 'both' },
    { q: 0.001, sigma: 0.8, steps: 3000, delta: 1e-6, accountant: 'pld', adjacency: 'replace-one' },
    { q: 0.0042666666666666667, sigma: 1.1, steps: 1000, delta: 1e-5, accountant: 'pld', group_size: 2 },
    { dataset_size: 60000, batch_size: 256, epochs: 60, sigma: 1.1, delta: 1e-5, sampling: 'shuffle' },
    { dataset_size: 1000, q: 0.1, max_batch: 100, sigma: 1, steps: 100, delta: 1e-5, accountant: 'pld', sampling: 'truncated-poisson' },
    { q: 0.01, sigma: 1, steps: 100, epsilon: 1, accountant: 'pld' },
    { q: 7, sigma: 1, steps: 10, delta: 1e-5 },
    { q: 0.01, sigma: 1, steps: 10, delta: 1e-5, colour: 'red' },
  ].map((o) => JSON.stringify(o));
  const pldGot = await api.evaluate(async ({ MN, BATCH }) => {
    const m = await import('./sgm-rdp.js');
    await m.default();
    const r = m.epsilon({ ...MN, accountant: 'pld' });
    const both = m.epsilon({ ...MN, accountant: 'both' });
    const times = [];
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now();
      m.epsilon({ ...MN, accountant: 'pld' });
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const prof = m.profile({ q: MN.q, sigma: MN.sigma, steps: MN.steps, epsilonMax: 8 });
    const risk = m.attackRisk({ q: MN.q, sigma: MN.sigma, steps: MN.steps });
    const hostile = [];
    const tryMsg = (f) => { try { f(); return 'returned'; } catch (e) { return e instanceof Error ? e.message : 'non-Error thrown'; } };
    const base = { q: 0.01, sigma: 1.1, steps: 100, delta: 1e-5 };
    for (let i = 0; i < 1250; i++) {
      const { proxy, revoke } = Proxy.revocable(base, {});
      revoke();
      const variants = [
        new Proxy(base, { ownKeys() { throw 0; } }),
        proxy,
        { ...base, get delta() { throw new Error('getter boom'); } },
        { ...base, orders: new Proxy([2, 3], { get(t, k) { if (k === '1') throw new Error('element boom'); return t[k]; } }) },
        { ...base, orders: new Proxy([], { get(t, k) { return k === 'length' ? 2 ** 32 - 1 : t[k]; } }) },
      ];
      const v = variants[i % variants.length];
      const msg = tryMsg(() => m.epsilon(v));
      if (i < variants.length) hostile.push(msg);
      if (msg === 'returned' || msg === 'non-Error thrown') hostile.push('BAD: ' + msg);
    }
    const after = m.epsilon(base);
    // The worker-only wasm (what pld-worker.js runs): the same API over the whole engine,
    // built for speed; timed the same way.
    const w = await import('./sgm-rdp-worker.js');
    await w.default({ module_or_path: new URL('./sgm-rdp-worker_bg.wasm', location.href) });
    const wr = w.epsilon({ ...MN, accountant: 'pld' });
    const wtimes = [];
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now();
      w.epsilon({ ...MN, accountant: 'pld' });
      wtimes.push(performance.now() - t0);
    }
    wtimes.sort((a, b) => a - b);
    const lines = BATCH.map((l) => w.batchLine(l));
    return { r, both, times, wr, wtimes, lines, prof: prof.length, profMono: prof.every((p, i) => i === 0 || p.delta.upper <= prof[i - 1].delta.upper * (1 + 1e-9)), risk, hostile, after };
  }, { MN, BATCH });
  {
    const want = cliBatch(BATCH).map((l) => JSON.parse(l));
    const got = pldGot.lines.map((l) => JSON.parse(l));
    // Same keys, same strings, numbers equal to 1e-6 relative: native and wasm FFTs round alike
    // but not bit for bit, and the ladder's choice of directly convolved points follows the
    // rounded values, so each side's certified bracket carries its own rounding bounds (q = 1e-3,
    // σ = 0.8, T = 3000, replace-one: lower ends 0.74884084 and 0.74884127).
    const same = (a, b) => (typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= 1e-6 * Math.max(Math.abs(a), Math.abs(b), 1e-300)
      : a && b && typeof a === 'object' ? Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => same(a[k], b[k])) : a === b);
    const diff = want.map((w, i) => (same(w, got[i]) ? null : `${BATCH[i]} → CLI ${JSON.stringify(w)} / wasm ${JSON.stringify(got[i])}`)).filter((x) => x);
    check(diff.length === 0 && got.filter((g) => g.error).length === 2,
      `the worker-only wasm's batchLine = sgm-rdp batch on ${BATCH.length} lines (schemes, adjacency, user-level, both, refusals)${diff.length ? ': ' + diff.join(' || ').slice(0, 600) : ''}`);
  }
  const cp = cli('epsilon', { ...MN, accountant: 'pld' });
  check(close(pldGot.r.epsilon, cp.epsilon, 1e-9) && close(pldGot.r.epsilonLower, cp.epsilon_lower, 1e-9),
    `API epsilon({accountant: "pld"}) = CLI bracket [${cp.epsilon_lower}, ${cp.epsilon}]`);
  check(pldGot.r.epsilonLower <= 2.38169 && 2.38169 <= pldGot.r.epsilon, 'MNIST bracket contains the converged tight ε 2.38169');
  check(close(pldGot.both.epsilonPld, cp.epsilon, 1e-9) && close(pldGot.both.epsilon, engine(MN.q, MN.sigma, MN.steps, MN.delta).epsilon), 'API accountant "both" carries the RDP ε and epsilonPld');
  check(pldGot.prof === 101 && pldGot.profMono, 'API profile(): 101 points, δ nonincreasing');
  check(pldGot.risk.tpr.length === 3 && pldGot.risk.tpr.every((t, i) => t >= pldGot.risk.fpr[i] && t <= 1) && pldGot.risk.curve.length === 60, `API attackRisk(): TPR bounds ${pldGot.risk.tpr.map((t) => t.toFixed(4)).join(', ')}`);
  check(pldGot.hostile.length === 5 && pldGot.hostile.every((h) => !h.startsWith('BAD')) && /threw/.test(pldGot.hostile[0]) && /getter boom/.test(pldGot.hostile[2]) && /element boom/.test(pldGot.hostile[3]) && /at most/.test(pldGot.hostile[4]),
    `1250 hostile values each throw a named Error: ${pldGot.hostile.join(' | ')}`);
  check(close(pldGot.after.epsilon, engine(0.01, 1.1, 100, 1e-5).epsilon), 'the module still answers after the hostile calls');
  check(close(pldGot.wr.epsilon, cp.epsilon, 1e-9) && close(pldGot.wr.epsilonLower, cp.epsilon_lower, 1e-9),
    `the worker-only wasm's epsilon({accountant: "pld"}) = CLI bracket [${cp.epsilon_lower}, ${cp.epsilon}]`);
  const t = pldGot.times;
  const wt = pldGot.wtimes;
  console.log(`  PLD MNIST in wasm (headless Chromium): p50 ${t[3].toFixed(1)} ms, min ${t[0].toFixed(1)} ms, max ${t[6].toFixed(1)} ms (goal ≤ 100 ms)`);
  console.log(`  PLD MNIST in the worker-only wasm (what the page's worker runs): p50 ${wt[3].toFixed(1)} ms, min ${wt[0].toFixed(1)} ms, max ${wt[6].toFixed(1)} ms (goal ≤ 15 ms)`);
  await writeFile(join(OUT, 'bench-pld.json'), JSON.stringify({ pld_mnist_ms: t, pld_mnist_worker_wasm_ms: wt }, null, 2));

  // ---- D3. The Promise API (sgm-rdp-async.js): the same answers and messages off the main
  // thread, calls that can be aborted (a running one is stopped), a worker replaced when its
  // memory passes the bound, parameters that cannot be sent refused by name. ----
  {
    const LONG = { q: 0.0001, sigma: 1, steps: 100000000, delta: 1e-5, accountant: 'pld' };
    // Catalogue rows of the training-configuration check (docs/check.md).
    const CHECK_ROWS = [
      { library: 'opacus', noise_multiplier: 1, dataset_size: 50000, batch_size: 512, epochs: 30, delta: 1e-5, poisson_sampling: false },
      { library: 'opacus', accountant: 'gdp', noise_multiplier: 1, dataset_size: 50000, batch_size: 512, epochs: 30, delta: 1e-5 },
      { library: 'jax_privacy', noise_multiplier: 1, dataset_size: 1000, batch_size: 10, accumulation_steps: 8, steps: 100, delta: 1e-5 },
      { library: 'jax_privacy', noise_multiplier: 1, dataset_size: 1000, batch_size: 10, accumulation_steps: 8, accumulation: 'independent', steps: 100, delta: 1e-5 },
      { library: 'dp_accounting', noise_multiplier: 2, sample_rate: 1, steps: 1, delta: 1e-5, neighboring: 'replace_one' },
      { library: 'tf_privacy', noise_multiplier: 1, number_of_examples: 50000, batch_size: 512, num_epochs: 30, delta: 1e-5, drop_last: true },
      { library: 'opacus', sampler: 'weighted', sampler_num_samples: 1000, noise_multiplier: 1, dataset_size: 50000, batch_size: 512, epochs: 30, delta: 1e-5 },
    ];
    const COMMANDS = [
      ['gdp', '--q', '0.0042666666666666667', '--sigma', '1.1', '--steps', '14063', '--json'],
      ['calibrate', '--q', '0.0042666666666666667', '--steps', '14063', '--tpr', '0.05', '--fpr', '0.01', '--json'],
      ['epsilon', '--q', '0.0042666666666666667', '--sigma', '1.1', '--steps', '1000', '--delta', '1e-5', '--accountant', 'pld', '--group-size', '2', '--json'],
    ];
    const got = await api.evaluate(async ({ MN, LONG, COMMANDS, CHECK_ROWS }) => {
      const a = await import('./sgm-rdp-async.js');
      const m = await import('./sgm-rdp.js');
      await m.default();
      const msg = (p) => p.then(() => 'resolved', (e) => `${e instanceof Error ? e.name : 'non-Error'}: ${e.message}`);
      const eps = await a.epsilon({ ...MN, accountant: 'pld' });
      const long = await a.epsilon(LONG);
      let syncMessage = '';
      try { m.epsilon({ ...MN, q: 7 }); } catch (e) { syncMessage = e.message; }
      const bad = await msg(a.epsilon({ ...MN, q: 7 }));
      const clone = await msg(a.epsilon({ ...MN, f: () => 1 }));
      // Abort a running call: it rejects at once (not after its second of work), a call queued
      // behind it still answers, from a new worker.
      const before = a.workersStarted();
      const ac = new AbortController();
      const t0 = performance.now();
      const running = msg(a.epsilon({ ...LONG, sigma: 1.01 }, { signal: ac.signal }));
      const queued = a.epsilon({ ...MN, accountant: 'pld' });
      setTimeout(() => ac.abort(), 30);
      const aborted = await running;
      const abortMs = performance.now() - t0;
      const after = await queued;
      const restarted = a.workersStarted() - before;
      const pre = await msg(a.epsilon(MN, { signal: AbortSignal.abort() }));
      // A bound of 1 byte: every call leaves its worker for a new one; answers stay right.
      a.setMemoryBound(1);
      a.terminate();
      const w0 = a.workersStarted();
      const r1 = await a.epsilon({ ...MN, accountant: 'pld' });
      const r2 = await a.epsilon({ ...MN, accountant: 'pld' });
      const recycled = a.workersStarted() - w0;
      const line = JSON.parse(await a.batchLine(JSON.stringify({ q: MN.q, sigma: MN.sigma, steps: MN.steps, delta: MN.delta, accountant: 'pld' })));
      a.setMemoryBound(256 * 1024 * 1024);
      // Every command line: μ-GDP, attack-risk calibration, user-level ε (the CLI's stdout).
      const commands = await Promise.all(COMMANDS.map((c) => a.command(c).then(JSON.parse, (e) => ({ error: e.message }))));
      const refused = await msg(a.command(['epsilon', '--q', '7', '--sigma', '1', '--steps', '10', '--delta', '1e-5']));
      const notArray = await msg(a.command('gdp'));
      // Sampling schemes by name (#23, #24): the command line's answer, camelCase keys.
      const alloc = await a.epsilon({ sampling: 'random-allocation', noise_multiplier: 1.1, stepsPerEpoch: 234, epochs: 60, delta: 1e-5 });
      const allocDelta = await a.delta({ sampling: 'random-allocation', sigma: 1.1, stepsPerEpoch: 234, epochs: 60, epsilon: 2 });
      const replace = await a.epsilon({ adjacency: 'replace-one', q: 0.01, sigma: 2, steps: 300, delta: 1e-5, accountant: 'pld' });
      const schemeRefused = await msg(a.epsilon({ sampling: 'random-allocation', sigma: 1.1, stepsPerEpoch: 234, epochs: 60 }));
      const schemeBad = await msg(a.epsilon({ sampling: 'random-allocation', sigma: 1.1, stepsPerEpoch: 0, epochs: 60, delta: 1e-5 }));
      // μ-GDP with its fit (#25): Poisson sampling and a user-level run.
      const gdp = await a.gdp({ q: 0.0042666666666666667, noise_multiplier: 1.1, steps: 14070 });
      const gdpUser = await a.gdp({ q: 0.0064, sigma: 1, steps: 782, groupSize: 2 });
      const gdpBad = await msg(a.gdp({ q: 0.01, sigma: 1, steps: 10, delta: 1e-5 }));
      // The training-configuration check (issue 63): camelCase keys in, the CLI's fields out.
      const checked = await a.check({ library: 'opacus', noiseMultiplier: 1, datasetSize: 50000, batchSize: 512, epochs: 30, delta: 1e-5, poissonSampling: false });
      const checkBad = await msg(a.check({ library: 'keras', noise_multiplier: 1 }));
      const checkRows = await Promise.all(CHECK_ROWS.map((c) => a.check(c).catch((e) => ({ error: e.message }))));
      // Audits (issue 65): typed-array scores, the run beside them; 10⁵ scores timed.
      const spread = (n, shift) => Float64Array.from({ length: n }, (_, i) => shift + ((i + 0.5) / n - 0.5) * 6);
      const audited = await a.audit({ inScores: spread(2000, 0.6), outScores: Array.from(spread(2000, 0)), delta: 1e-5, sampleRate: 0.01, noiseMultiplier: 1, steps: 1000 });
      const auditBad = await msg(a.audit({ inScores: [1, NaN], outScores: [0] }));
      await a.audit({ inScores: [1, 2], outScores: [0, 1] });
      const tAudit = performance.now();
      await a.audit({ inScores: spread(50000, 0.6), outScores: spread(50000, 0), delta: 1e-5 });
      const auditMs = performance.now() - tAudit;
      const plan = await a.auditPlan({ q: 0.01, sigma: 1, steps: 1000, delta: 1e-5 });
      // Correlated noise (issue 67): a BandMF strategy, an explicit matrix (rows), a refusal.
      const corr = await a.correlated({ strategy: 'band:4,1,0.5,0.25,0.125', sampleRate: 0.1, noiseMultiplier: 1, steps: 101, delta: 1e-3 });
      const corrM = await a.correlated({ strategy: 'matrix', strategyMatrix: [[1], [0.5, 1], [0, 0.5, 1], [0, 0, 0.5, 1]], q: 0.2, sigma: 0.9, delta: 1e-3 });
      const corrBad = await msg(a.correlated({ strategy: 'band:4', monteCarlo: 10000, q: 0.1, sigma: 1, steps: 100, delta: 1e-3 }));
      const corrSplit = await a.correlated({ strategy: 'band:4', participation: 'poisson', q: 0.01, sigma: 2, steps: 100, delta: 1e-5 });
      let syncScheme = '';
      try { m.epsilon({ ...MN, sampling: 'random-allocation' }); } catch (e) { syncScheme = e.message; }
      a.terminate();
      return { eps, long, syncMessage, bad, clone, aborted, abortMs, after, restarted, pre, r1, r2, recycled, line, commands, refused, notArray, alloc, allocDelta, replace, schemeRefused, schemeBad, syncScheme, gdp, gdpUser, gdpBad, checked, checkBad, checkRows, audited, auditBad, auditMs, plan, corr, corrM, corrBad, corrSplit };
    }, { MN, LONG, COMMANDS, CHECK_ROWS });
    const cp = cli('epsilon', { ...MN, accountant: 'pld' });
    const cl = cli('epsilon', LONG);
    // (The ladder's FFTs round differently in the wasm than natively: 2e-9 relative on this
    // run, each bracket certified with its own rounding bound.)
    // (MNIST's one FFT to 1e-6, the ladder's long run to 2e-5 relative: see the batchLine
    // check above, and run.mjs's page-against-CLI check.)
    check(close(got.eps.epsilon, cp.epsilon, 1e-6) && close(got.long.epsilon, cl.epsilon, 2e-5) && close(got.long.epsilonLower, cl.epsilon_lower, 2e-5),
      `sgm-rdp-async.js: epsilon() resolves to the CLI's bracket (MNIST ${got.eps.epsilon}; q = 1e-4, σ = 1, T = 10⁸: [${got.long.epsilonLower}, ${got.long.epsilon}], the ladder)`);
    check(got.bad === `Error: ${got.syncMessage}` && /^TypeError: epsilon: the parameters cannot be sent/.test(got.clone),
      `sgm-rdp-async.js: rejections carry the synchronous call's message ("${got.bad}") and name what cannot be sent ("${got.clone.slice(0, 80)}")`);
    check(got.aborted.startsWith('AbortError') && got.restarted === 1 && close(got.after.epsilon, cp.epsilon, 1e-9) && got.pre.startsWith('AbortError'),
      `sgm-rdp-async.js: aborting a running call rejects it (${got.aborted}; after ${got.abortMs.toFixed(0)} ms) and stops its worker; the call queued behind it answers from a new one (${got.restarted} started); an already-aborted signal rejects at once`);
    {
      const want = COMMANDS.map((c) => JSON.parse(execFileSync('cargo', ['run', '-q', '--release', '--features', 'cli', '--bin', 'sgm-rdp', '--', ...c], { cwd: ROOT, encoding: 'utf8' })));
      // (Native and wasm FFTs round differently: the trade-off at FPR 1e-7 differs by 6e-8
      // relative, each certified with its own rounding bound.)
      const same = (a, b) => (typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= 1e-6 * Math.max(Math.abs(a), Math.abs(b)) + 1e-12
        : a && b && typeof a === 'object' ? Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => same(a[k], b[k])) : a === b);
      const diff = want.map((w, i) => (same(w, got.commands[i]) ? null : `${COMMANDS[i][0]}: CLI ${JSON.stringify(w).slice(0, 120)} / async ${JSON.stringify(got.commands[i]).slice(0, 120)}`)).filter((x) => x);
      check(diff.length === 0 && /^Error: command: .*7/.test(got.refused) && /^Error: command: the arguments must be an array/.test(got.notArray),
        `sgm-rdp-async.js: command() = the native CLI's stdout for gdp, calibrate --tpr/--fpr and user-level epsilon (μ = ${got.commands[0].mu}); refusals carry its reason ("${got.refused}")${diff.length ? ': ' + diff.join(' || ') : ''}`);
    }
    {
      const want = JSON.parse(execFileSync('cargo', ['run', '-q', '--release', '--features', 'cli', '--bin', 'sgm-rdp', '--', 'check', '--library', 'opacus', '--noise-multiplier', '1', '--dataset-size', '50000', '--batch-size', '512', '--epochs', '30', '--delta', '1e-5', '--poisson-sampling', 'false', '--json'], { cwd: ROOT, encoding: 'utf8' }));
      const c = got.checked;
      const ok = c && close(c.printedEpsilon, want.printed_epsilon, 1e-9) && close(c.certifiedEpsilon, want.certified_epsilon, 1e-9)
        && close(c.certifiedEpsilonLower, want.certified_epsilon_lower, 1e-6) && c.findings.length === want.findings.length
        && c.findings.every((f, i) => f.id === want.findings[i].id && f.severity === want.findings[i].severity);
      // Every catalogue row (docs/check.md) as the CLI checks it: the same printed value,
      // certified ends (wasm and native FFTs round differently: 1e-6) and findings.
      const rowDiffs = CHECK_ROWS.map((c, i) => {
        const args = Object.entries(c).flatMap(([k, v]) => [`--${k.replace(/_/g, '-')}`, String(v)]);
        const w = JSON.parse(execFileSync('cargo', ['run', '-q', '--release', '--features', 'cli', '--bin', 'sgm-rdp', '--', 'check', ...args, '--json'], { cwd: ROOT, encoding: 'utf8' }));
        const g = got.checkRows[i];
        const near = (x, y) => (x === null && y === null) || (x != null && y != null && Math.abs(x - y) <= 1e-6 * Math.abs(y));
        const same = g && !g.error && near(g.printedEpsilon, w.printed_epsilon) && near(g.certifiedEpsilon, w.certified_epsilon ?? null)
          && g.findings.map((f) => f.id).join() === w.findings.map((f) => f.id).join();
        return same ? null : `${c.library}: ${JSON.stringify(g).slice(0, 100)} vs ${JSON.stringify(w).slice(0, 100)}`;
      }).filter((x) => x);
      check(rowDiffs.length === 0, `sgm-rdp-async.js: check() = the CLI's check on ${CHECK_ROWS.length} catalogue rows${rowDiffs.length ? ': ' + rowDiffs.join(' || ') : ''}`);
      check(ok && /^Error: check: library must be/.test(got.checkBad),
        `sgm-rdp-async.js: check() = the CLI's check for a shuffled Opacus run (printed ${c && c.printedEpsilon}, certified [${c && c.certifiedEpsilonLower}, ${c && c.certifiedEpsilon}], ${c && c.findings.map((f) => f.id).join(', ')}); refusals name the field ("${got.checkBad}")`);
    }
    {
      // The same scores through the native CLI's `audit` (files written here).
      const dir = join(OUT, 'audit');
      await mkdir(dir, { recursive: true });
      const spread = (n, shift) => Array.from({ length: n }, (_, i) => shift + ((i + 0.5) / n - 0.5) * 6);
      await writeFile(join(dir, 'in.txt'), spread(2000, 0.6).join('\n'));
      await writeFile(join(dir, 'out.txt'), spread(2000, 0).join('\n'));
      const want = JSON.parse(execFileSync('cargo', ['run', '-q', '--release', '--features', 'cli', '--bin', 'sgm-rdp', '--', 'audit', '--in', join(dir, 'in.txt'), '--out', join(dir, 'out.txt'), '--delta', '1e-5', '--q', '0.01', '--sigma', '1', '--steps', '1000', '--json'], { cwd: ROOT, encoding: 'utf8' }));
      await rm(dir, { recursive: true, force: true });
      const g = got.audited;
      const ok = g && close(g.epsilonLower, want.epsilon_lower, 1e-9) && close(g.muLower, want.mu_lower, 1e-9) && g.auc === want.auc
        && close(g.certifiedEpsilon, want.certified_epsilon, 1e-6) && g.consistent === want.consistent;
      check(ok && /^Error: audit: in_scores\[1\] must be|^Error: audit: 'inScores' must hold finite/.test(got.auditBad) && got.plan.rows.length === 5,
        `sgm-rdp-async.js: audit() = the CLI's audit (ε ≥ ${g && g.epsilonLower}, μ ≥ ${g && g.muLower}, certified ε ≤ ${g && g.certifiedEpsilon}); refusals name the field ("${got.auditBad}"); auditPlan() answers; 10⁵ scores in ${got.auditMs.toFixed(0)} ms (issue 65's goal: 200 ms; a measurement, not a test)`);
    }
    {
      // Correlated noise through the JS API = the native CLI's --strategy answer (wasm and native
      // FFTs round differently: 1e-6).
      const w = cli('epsilon', { strategy: 'band:4,1,0.5,0.25,0.125', q: 0.1, sigma: 1, steps: 101, delta: 1e-3 });
      const g = got.corr;
      const ok = g && close(g.epsilon, w.epsilon, 1e-6) && close(g.epsilonLower, w.epsilon_lower, 1e-6) && g.bands === 4 && g.participation === 'min-sep:4'
        && got.corrM && got.corrM.bands === 2 && got.corrM.composed[0][1] === 2;
      const split = cli('epsilon', { strategy: 'band:4', participation: 'poisson', q: 0.01, sigma: 2, steps: 100, delta: 1e-5 });
      check(ok && /^Error: correlated: monte_carlo applies to balls-in-bins participation/.test(got.corrBad)
        && close(got.corrSplit.epsilon, split.epsilon, 1e-6) && got.corrSplit.epsilonLower === undefined && /^upper bound/.test(got.corrSplit.bound),
        `sgm-rdp-async.js: correlated() = the CLI's epsilon --strategy (BandMF [1, ½, ¼, ⅛]: [${g && g.epsilonLower}, ${g && g.epsilon}]); an explicit matrix by rows answers; refusals name what is not accounted ("${String(got.corrBad).slice(0, 80)}")`);
    }
    {
      const ra = cli('epsilon', { sampling: 'random-allocation', sigma: 1.1, 'steps-per-epoch': 234, epochs: 60, delta: 1e-5 });
      const rd = cli('delta', { sampling: 'random-allocation', sigma: 1.1, 'steps-per-epoch': 234, epochs: 60, epsilon: 2 });
      const ro = cli('epsilon', { adjacency: 'replace-one', q: 0.01, sigma: 2, steps: 300, delta: 1e-5, accountant: 'pld' });
      const g = got;
      // (Native and wasm FFTs round differently: δ differs by 7e-8 relative here, each end
      // certified with its own rounding bound.)
      const near = (a, b) => close(a, b, 1e-6);
      check(near(g.alloc.epsilon, ra.epsilon) && near(g.alloc.epsilonLower, ra.epsilon_lower) && g.alloc.stepsPerEpoch === 234 && g.alloc.sampling === 'random-allocation' && /certified upper bound/.test(g.alloc.meaning)
        && near(g.allocDelta.delta, rd.delta) && near(g.allocDelta.deltaLower, rd.delta_lower) && near(g.replace.epsilon, ro.epsilon) && g.replace.adjacency === 'replace-one',
        `sgm-rdp-async.js: epsilon()/delta() with a sampling scheme or adjacency = the CLI (random allocation [${g.alloc.epsilonLower}, ${g.alloc.epsilon}], δ(2) ≤ ${g.allocDelta.delta}; replace-one ${g.replace.epsilon})`);
      const gp = cli('gdp', { q: 0.0042666666666666667, sigma: 1.1, steps: 14070 });
      const gu = cli('gdp', { q: 0.0064, sigma: 1, steps: 782, 'group-size': 2 });
      check(near(g.gdp.mu, gp.mu) && near(g.gdp.muLower, gp.mu_lower) && near(g.gdp.regret, gp.regret) && g.gdp.tradeoff.length === gp.tradeoff.length
        && near(g.gdp.tradeoff[3].tprMax, gp.tradeoff[3].tpr_max) && near(g.gdpUser.mu, gu.mu) && g.gdpUser.groupSize === 2 && /^Error: gdp: unknown parameter 'delta'/.test(g.gdpBad),
        `sgm-rdp-async.js: gdp() = the CLI's gdp (MNIST μ = ${g.gdp.mu}, regret ${g.gdp.regret}; user-level k = 2 μ = ${g.gdpUser.mu}); "${g.gdpBad.slice(0, 60)}"`);
      check(/^Error: epsilon: 'delta' is required/.test(g.schemeRefused) && /^Error: epsilon: .*steps_per_epoch/.test(g.schemeBad) && /async API, sgm-rdp-async\.js/.test(g.syncScheme),
        `scheme refusals name the key ("${g.schemeRefused}"; "${g.schemeBad.slice(0, 90)}"); the synchronous module names the async one ("${g.syncScheme.slice(0, 90)}")`);
    }
    check(got.recycled === 2 && close(got.r1.epsilon, cp.epsilon, 1e-9) && close(got.r2.epsilon, cp.epsilon, 1e-9) && close(got.line.epsilon, cp.epsilon, 1e-9),
      `sgm-rdp-async.js: a worker whose memory passes the bound is replaced after its call (${got.recycled} workers for 2 calls at a 1-byte bound), answers unchanged; batchLine = the CLI`);
  }

  // ---- D4. The cross-surface corpus in the browser (issues 61, 62): every line of
  // tests/corpus/lines.jsonl (every command, scheme, adjacency, group size and refusal) through
  // the JS API's batchLine, compared with the command line's recorded answers byte for byte
  // (and, for the message when not, by the corpus's own rules: scripts/corpus.py --answers). ----
  {
    const lines = (await readFile(join(ROOT, 'tests/corpus/lines.jsonl'), 'utf8')).trim().split('\n');
    const expectedCorpus = (await readFile(join(ROOT, 'tests/corpus/expected.jsonl'), 'utf8')).trim().split('\n');
    const t0 = Date.now();
    const answers = await api.evaluate(async (lines) => {
      const a = await import('./sgm-rdp-async.js');
      const out = [];
      for (const l of lines) out.push(await a.batchLine(l));
      a.terminate();
      return out;
    }, lines);
    const secs = (Date.now() - t0) / 1000;
    const file = join(OUT, 'corpus-wasm.jsonl');
    await writeFile(file, answers.join('\n') + '\n');
    let said = '';
    let ok = true;
    try {
      said = execFileSync('python3', ['scripts/corpus.py', '--answers', file], { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch (e) {
      ok = false;
      said = String(e.stdout || e.message).trim().split('\n').slice(0, 6).join(' | ');
    }
    // Byte for byte (issue 62 #8): the engine computes with libm and its own FFT on every
    // target (src/engine/math.rs, src/engine/pld/fft.rs), so the worker's bits are the
    // command line's; a line that differs names the surface-dependent arithmetic that crept in.
    const differing = answers.map((x, i) => (x === expectedCorpus[i] ? -1 : i)).filter((i) => i >= 0);
    check(ok && answers.length === lines.length && differing.length === 0,
      `JS API batchLine = the command line on the corpus's ${lines.length} lines, byte for byte (${lines.length - differing.length} identical${differing.length ? `; differing lines ${differing.slice(0, 8).map((i) => i + 1).join(', ')}: ${lines[differing[0]].slice(0, 120)}` : ''}; ${secs.toFixed(1)} s in the worker): ${said.slice(0, 300)}`);
  }

  await api.close();

  // ---- E. dist/ as an npm package, in Node (what a bundler or SSR sees) ----
  // A consumer with dist/ installed as node_modules/sgm-rdp imports it by name
  // (package.json "exports"), then initSync with the wasm bytes.
  const consumer = join(OUT, 'consumer');
  await rm(consumer, { recursive: true, force: true });
  await mkdir(join(consumer, 'node_modules'), { recursive: true });
  await symlink(DIST, join(consumer, 'node_modules', 'sgm-rdp'), 'dir');
  await writeFile(join(consumer, 'use.mjs'), [
    "import { initSync, epsilon } from 'sgm-rdp';",
    "import { readFileSync } from 'node:fs';",
    "import { createRequire } from 'node:module';",
    "const wasm = createRequire(import.meta.url).resolve('sgm-rdp/sgm-rdp_bg.wasm');",
    'initSync({ module: readFileSync(wasm) });',
    'console.log(JSON.stringify(epsilon(JSON.parse(process.argv[2]))));',
  ].join('\n'));
  const ne = JSON.parse(execFileSync('node', [join(consumer, 'use.mjs'), JSON.stringify(P)], { cwd: consumer, encoding: 'utf8' }));
  check(close(ne.epsilon, ce.epsilon), `dist/ imported as the npm package 'sgm-rdp' in Node (initSync): ε ${ne.epsilon}`);
  // `make pkg` (wasm-pack build --target web) gives the very same module and wasm as dist/.
  for (const f of ['sgm-rdp.js', 'sgm-rdp_bg.wasm']) {
    const [a, b] = await Promise.all([readFile(join(DIST, f)), readFile(join(ROOT, 'pkg', f))]);
    check(a.equals(b), `dist/${f} is byte-identical to wasm-pack's pkg/${f} (${a.length} B)`);
  }
  const pkg = JSON.parse(await readFile(join(DIST, 'package.json'), 'utf8'));
  const cargoVersion = /^version = "(.*)"/m.exec(await readFile(join(ROOT, 'Cargo.toml'), 'utf8'))[1];
  check(pkg.version === cargoVersion, `dist/package.json version ${pkg.version} = Cargo.toml ${cargoVersion}`);
  const missing = [];
  for (const f of pkg.files) await readFile(join(DIST, f)).catch(() => missing.push(f));
  check(missing.length === 0, `every file package.json lists is in dist/${missing.length ? ': missing ' + missing : ''}`);
  const dts = await readFile(join(DIST, 'sgm-rdp.d.ts'), 'utf8');
  check(['rdp(p: RdpParams): RdpResult', 'epsilon(p: EpsilonParams): EpsilonResult', 'delta(p: DeltaParams): DeltaResult',
    'calibrateSigma(p: CalibrateSigmaParams): CalibrateSigmaResult', 'bounds(p: BoundsParams): BoundsResult'].every((s) => dts.includes(s)),
  'dist/sgm-rdp.d.ts declares the typed API');

  check(errors.length === 0, `zero console errors${errors.length ? ': ' + errors.join(' | ') : ''}`);
  console.log(`screenshots: ${['widgets-hostile.png', 'widget-minimal.png', 'embed.png', 'embed-360-dark.png'].map((f) => join(OUT, f)).join(', ')}`);
} catch (e) {
  console.log(`FAIL e2e crashed: ${e.stack || e}`);
  t.failures++;
} finally {
  await browser.close();
  cdn.close();
  host.close();
}
console.log(t.failures ? `e2e widget: ${t.failures} failure(s)` : 'e2e widget: all passed');
process.exit(t.failures ? 1 : 0);

// End-to-end tests of the release page (dist/) in real headless Chromium via playwright-core.
// Serves dist/ on a free loopback port (opened and closed here), fails on any console error,
// and ends with a browser benchmark of recompute+redraw frame cost while dragging sliders.
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { DIST, OUT, serve, checker, cli, up4, down4, up6, down6, cliError, engine, launch, newPage, traceWorkers, workerTrace } from './lib.mjs';

const site = await serve(DIST);
const BASE = site.base;
const t = checker();
const check = t.check;

const browser = await launch();
const consoleErrors = [];
async function open(url, width = 1280, { trace = false } = {}) {
  const page = await newPage(browser, consoleErrors, url, { viewport: { width, height: 1000 }, acceptDownloads: true });
  if (trace) await traceWorkers(page);
  await page.goto(BASE + url);
  await page.waitForFunction(() => /\d/.test(document.querySelector('#epsilon')?.textContent || ''), null, { timeout: 15000 });
  return page;
}
const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const canvasData = (page, id) => page.evaluate((id) => document.getElementById(id).toDataURL(), id);
const text = (page, sel) => page.textContent(sel);

try {
  await mkdir(OUT, { recursive: true });
  // 1. Default page: MNIST, matches the engine; screenshot.
  let page = await open('');
  const mnist = engine(256 / 60000, 1.1, 14063, 1e-5);
  check((await text(page, '#epsilon')) === up4(mnist.epsilon), `default #epsilon ${await text(page, '#epsilon')} = engine ${up4(mnist.epsilon)}`);
  check((await text(page, '#alpha-opt')) === mnist.alpha.toFixed(2), '#alpha-opt matches the engine');
  // 1a. The tight ε (PLD, computed in a Web Worker): headline, bracket, gap, charts.
  await page.waitForFunction(() => /^\d+\.\d{4}$/.test(document.querySelector('#epsilon-pld')?.textContent || ''), null, { timeout: 20000 });
  const pld = parseFloat(await text(page, '#epsilon-pld'));
  const pldCli = cli('epsilon', { q: 256 / 60000, sigma: 1.1, steps: 14063, delta: 1e-5, accountant: 'pld' });
  check(Math.abs(pld - 2.38169) / 2.38169 < 1e-3 && (await text(page, '#epsilon-pld')) === up4(pldCli.epsilon),
    `#epsilon-pld ${pld} = the engine's certified upper bound, within 0.1 % of the converged tight ε 2.38169`);
  check(/certified bracket \[2\.38\d+, 2\.38\d+\]/.test(await text(page, '#epsilon-pld-bracket')), `bracket shown: ${await text(page, '#epsilon-pld-bracket')}`);
  check(/\+9\.\d % above the tight ε/.test(await text(page, '#epsilon-gap')), `the gap to exact RDP is stated: ${await text(page, '#epsilon-gap')}`);
  await page.waitForFunction(() => (document.querySelector('#training-statement')?.textContent || '').length > 10, null, { timeout: 60000 });
  const blank = await page.evaluate(() => { const c = document.createElement('canvas'); c.width = 300; c.height = 150; return c.toDataURL().length; });
  for (const id of ['chart-training', 'chart-profile', 'chart-risk']) {
    const n = (await canvasData(page, id)).length;
    check(n > 5 * blank, `#${id} is drawn (${n} bytes of PNG)`);
  }
  await page.waitForFunction(() => !/computing/.test(document.querySelector('#training-statement')?.textContent || 'computing'), null, { timeout: 30000 }).catch(() => {});
  check(/(ε ≤ 3 holds for the first|ε stays below 3)/.test(await text(page, '#training-statement')), `training chart states the budget: ${await text(page, '#training-statement')}`);
  check(/catches at most [\d.]+ % of members/.test(await text(page, '#risk-sentence')), `risk sentence: ${await text(page, '#risk-sentence')}`);
  // μ-GDP with its fit under the attack-risk chart: the command line's `gdp` for the inputs
  // shown (computed by the worker after the charts); a new σ replaces it with its own.
  {
    const g = cli('gdp', { q: 256 / 60000, sigma: 1.1, steps: 14063 });
    await page.waitForFunction(() => /μ = /.test(document.querySelector('#gdp-summary')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    const s1 = await text(page, '#gdp-summary');
    check(s1.includes(`μ = ${up4(g.mu)}`) && s1.includes(`[${down4(g.mu_lower)}, ${up4(g.mu)}]`) && s1.includes(`regret ${g.regret.toExponential(1).replace('e-', 'e-')}`),
      `#gdp-summary states the CLI's gdp for MNIST (μ ${up4(g.mu)}, regret ${g.regret.toExponential(1)}): "${s1}"`);
    const pg = await open('?q=0.01&sigma=2&steps=1000&delta=1e-5');
    const g2 = cli('gdp', { q: 0.01, sigma: 2, steps: 1000 });
    await pg.waitForFunction(() => /μ = /.test(document.querySelector('#gdp-summary')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    await pg.fill('#sigma', '3');
    await frames(pg);
    const g3 = cli('gdp', { q: 0.01, sigma: 3, steps: 1000 });
    await pg.waitForFunction((w) => (document.querySelector('#gdp-summary')?.textContent || '').includes(w), `μ = ${up4(g3.mu)}`, { timeout: 30000 }).catch(() => {});
    const s3 = await text(pg, '#gdp-summary');
    check(s3.includes(`μ = ${up4(g3.mu)}`) && !s3.includes(`μ = ${up4(g2.mu)}`),
      `σ 2 → 3: #gdp-summary follows (μ ${up4(g2.mu)} → ${up4(g3.mu)}): "${s3}"`);
    await pg.close();
  }
  // "Check my training code" (issue 63): the default snippet (a shuffled Opacus run) is the
  // CLI's `check`; a pasted call with objects skips them and says so; a bad snippet is named.
  {
    const want = cli('check', { library: 'opacus', 'noise-multiplier': 1, 'dataset-size': 50000, 'batch-size': 512, epochs: 30, delta: 1e-5, 'poisson-sampling': 'false' });
    await page.click('#check-run');
    await page.waitForFunction(() => /guarantees ε ≤/.test(document.querySelector('#check-certified')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    const printed = await text(page, '#check-printed');
    const cert = await text(page, '#check-certified');
    const findings = await text(page, '#check-findings');
    check(printed.startsWith(`opacus prints ε = ${want.printed_epsilon.toFixed(4)}`) && cert.includes(`ε ≤ ${up6(want.certified_epsilon)}`)
      && cert.includes(`[${down6(want.certified_epsilon_lower)}, ${up6(want.certified_epsilon)}]`) && findings.startsWith('[unsafe] shuffled-as-poisson:'),
      `#check: the CLI's check of a shuffled Opacus run (printed ${want.printed_epsilon.toFixed(4)}, certified [${down6(want.certified_epsilon_lower)}, ${up6(want.certified_epsilon)}]): "${printed}" / "${cert.slice(0, 90)}" / "${findings.slice(0, 60)}"`);
    await page.selectOption('#check-library', 'jax_privacy');
    await page.fill('#check-snippet', 'train(model=net, noise_multiplier=1, dataset_size=1000, batch_size=10, accumulation_steps=8, steps=100, delta=1e-5)');
    await page.click('#check-run');
    await page.waitForFunction(() => /physical-batch/.test(document.querySelector('#check-findings')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    check((await text(page, '#check-findings')).includes('[unsafe] physical-batch') && (await text(page, '#check-skipped')).includes('model'),
      `#check: jax-privacy's accumulation case names physical-batch and the skipped 'model': "${(await text(page, '#check-findings')).slice(0, 80)}"`);
    await page.fill('#check-snippet', 'noise_multiplier 1');
    await page.click('#check-run');
    await page.waitForFunction(() => /name=value/.test(document.querySelector('#check-error')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    check((await text(page, '#check-error')).includes('is not name=value') && (await text(page, '#check-certified')) === '',
      `#check: a bad snippet is named and no old answer stays: "${await text(page, '#check-error')}"`);
  }
  // "Audit against the certificate" (issue 65): a CSV chosen as a file is the CLI's audit
  // of the run shown; a new σ asks again (the old verdict and points go); a bad CSV is named.
  {
    const n = 2000;
    const rows = ['score,member'];
    for (let i = 0; i < n; i++) {
      const z = ((i + 0.5) / n - 0.5) * 6;
      rows.push(`${z + 0.6},1`, `${z},0`);
    }
    await mkdir(OUT, { recursive: true });
    const csv = join(OUT, 'audit-scores.csv');
    await writeFile(csv, rows.join('\n'));
    const verdict = (pg) => pg.textContent('#audit-verdict');
    // The CLI's sentence in the page's symbols.
    const pretty = (v) => v.replaceAll('epsilon', 'ε').replaceAll('sigma', 'σ').replaceAll('mu >=', 'μ >=').replaceAll('mu <=', 'μ <=').replaceAll('>=', '≥').replaceAll('<=', '≤');
    const pa = await open('?q=0.01&sigma=1&steps=1000&delta=0.00001');
    const want = cli('audit', { scores: csv, delta: 1e-5, q: 0.01, sigma: 1, steps: 1000 });
    want.verdict = pretty(want.verdict);
    await pa.setInputFiles('#audit-file', csv);
    await pa.waitForFunction((w) => document.querySelector('#audit-verdict')?.textContent === w, want.verdict, { timeout: 30000 }).catch(() => {});
    const b1 = await text(pa, '#audit-bounds');
    check((await verdict(pa)) === want.verdict && b1.includes(`ε ≥ ${down6(want.epsilon_lower_clopper_pearson)} (two-sample`),
      `#audit: a chosen CSV file is the CLI's audit of the run shown: "${(await verdict(pa)).slice(0, 140)}" / "${b1.slice(0, 100)}"`);
    const want2 = cli('audit', { scores: csv, delta: 1e-5, q: 0.01, sigma: 2, steps: 1000 });
    want2.verdict = pretty(want2.verdict);
    await pa.fill('#sigma', '2');
    await frames(pa);
    await pa.waitForFunction((w) => document.querySelector('#audit-verdict')?.textContent === w, want2.verdict, { timeout: 30000 }).catch(() => {});
    check((await verdict(pa)) === want2.verdict && want2.verdict !== want.verdict,
      `#audit: σ 1 → 2 audits again for the new run: "${(await verdict(pa)).slice(0, 140)}"`);
    await frames(pa);
    const withPoints = await canvasData(pa, 'chart-risk');
    await pa.fill('#audit-scores', 'a,b\n1,2');
    await pa.click('#audit-run');
    await pa.waitForFunction(() => /score/.test(document.querySelector('#audit-error')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    check((await text(pa, '#audit-error')).includes("'score' column") && (await verdict(pa)) === '' && withPoints !== await canvasData(pa, 'chart-risk'),
      `#audit: a CSV without a score column is named, no old verdict or points stay: "${await text(pa, '#audit-error')}"`);
    await pa.close();
  }
  // Correlated noise (issue 67): the noise selector's answer is the CLI's `epsilon --strategy`
  // for the run shown, with what its ends mean; a new σ asks again; a bad strategy is named
  // and no old answer stays; "independent" hides the panel.
  {
    const pn = await open('?q=0.1&sigma=1&steps=101&delta=0.001');
    const answer = (pg) => pg.textContent('#correlated-epsilon');
    await pn.selectOption('#noise', 'correlated');
    await pn.fill('#strategy', 'band:4,1,0.5,0.25,0.125');
    await pn.dispatchEvent('#strategy', 'change');
    const want = cli('epsilon', { strategy: 'band:4,1,0.5,0.25,0.125', q: 0.1, sigma: 1, steps: 101, delta: 1e-3 });
    const head = `ε = ${up6(want.epsilon)} (certified upper bound; bracket [${down6(want.epsilon_lower)}, ${up6(want.epsilon)}]: the true ε lies within) at δ = 0.001`;
    await pn.waitForFunction((w) => document.querySelector('#correlated-epsilon')?.textContent === w, head, { timeout: 30000 }).catch(() => {});
    check((await answer(pn)) === head && (await text(pn, '#correlated-how')).startsWith('bracket (exact reduction): correlated noise: 4 bands'),
      `#noise correlated: the CLI's bracket for the run shown, its ends said: "${await answer(pn)}"`);
    // Its charts are drawn in place of independent noise's, the note and the CSV naming the run:
    // ε over training ends at the headline's ε; the profile is the CLI's `profile --strategy`
    // up to 2.5 × the largest ε over training.
    await pn.waitForFunction(() => !document.querySelector('figure.stale') && /correlated noise \(band:4,1,0\.5/.test(document.querySelector('#charts-batching')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    const [dl] = await Promise.all([pn.waitForEvent('download', { timeout: 15000 }), pn.click('#export-charts-csv')]);
    const rows = (await readFile(await dl.path())).toString().split('\n');
    const series = (chart, name) => rows.filter((l) => l.startsWith(`${chart},`) && l.includes(`,${name},`)).map((l) => parseFloat(l.split(',')[4]));
    const ups = series('training', 'epsilon_upper'), csvUp = series('profile', 'delta_upper');
    const prof = cli('profile', { strategy: 'band:4,1,0.5,0.25,0.125', q: 0.1, sigma: 1, steps: 101, epsilon: Math.max(...ups) * 2.5 });
    check(rows.includes('# strategy = band:4,1,0.5,0.25,0.125') && ups[ups.length - 1] === want.epsilon
      && csvUp.length === 101 && csvUp.every((d, k) => d === prof.profile[k].delta.upper),
      `#noise correlated: its charts drawn and exported for its run (ε over training ends at ${want.epsilon}; profile = the CLI's): ${rows.find((l) => l.startsWith('# strategy'))}`);
    const want2 = cli('epsilon', { strategy: 'band:4,1,0.5,0.25,0.125', q: 0.1, sigma: 2, steps: 101, delta: 1e-3 });
    await pn.fill('#sigma', '2');
    await frames(pn);
    await pn.waitForFunction((w) => (document.querySelector('#correlated-epsilon')?.textContent || '').startsWith(w), `ε = ${up6(want2.epsilon)} `, { timeout: 30000 }).catch(() => {});
    check((await answer(pn)).startsWith(`ε = ${up6(want2.epsilon)} `), `#noise: σ 1 → 2 asks again: "${await answer(pn)}"`);
    await pn.selectOption('#participation', 'poisson');
    const want3 = cli('epsilon', { strategy: 'band:4,1,0.5,0.25,0.125', participation: 'poisson', q: 0.1, sigma: 2, steps: 101, delta: 1e-3 });
    await pn.waitForFunction((w) => (document.querySelector('#correlated-epsilon')?.textContent || '').startsWith(w), `ε ≤ ${up6(want3.epsilon)} `, { timeout: 30000 }).catch(() => {});
    check((await answer(pn)).startsWith(`ε ≤ ${up6(want3.epsilon)} (certified upper bound; no lower bound claimed)`) && (await text(pn, '#correlated-how')).startsWith(want3.bound),
      `#noise: Poisson participation, an upper bound only, said so: "${await answer(pn)}" / "${(await text(pn, '#correlated-how')).slice(0, 60)}"`);
    // The target ε of "What do I need?": the correlated run's σ for it, the CLI's calibrate.
    await pn.fill('#target-eps', '2');
    await pn.dispatchEvent('#target-eps', 'input');
    const cal = cli('calibrate', { strategy: 'band:4,1,0.5,0.25,0.125', participation: 'poisson', q: 0.1, steps: 101, delta: 1e-3, epsilon: 2 });
    const sig = `σ ≥ ${up6(cal.sigma)} for a certified ε ≤ 2 `;
    await pn.waitForFunction((w) => (document.querySelector('#correlated-sigma')?.textContent || '').startsWith(w), sig, { timeout: 30000 }).catch(() => {});
    check((await text(pn, '#correlated-sigma')).startsWith(sig), `#noise: the target's σ is the CLI's calibrate: "${await text(pn, '#correlated-sigma')}"`);
    await pn.fill('#strategy', 'band:x');
    await pn.dispatchEvent('#strategy', 'change');
    await pn.waitForFunction(() => /whole number of bands/.test(document.querySelector('#correlated-error')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    check((await text(pn, '#correlated-error')).includes('whole number of bands') && (await answer(pn)) === '',
      `#noise: a bad strategy is named, no old answer stays: "${await text(pn, '#correlated-error')}"`);
    await pn.selectOption('#noise', 'independent');
    check(await pn.isHidden('#correlated-box') && (await answer(pn)) === '', '#noise independent: the panel hides and clears');
    await pn.close();
  }
  // Hardening round 3, #1: the tight accountant fails for the new inputs (q = 0.5, σ = 0.3,
  // T = 10⁹: exact RDP's ε is 2.9·10⁹, outside the domain the tight accountant covers; the CLI
  // refuses it as well — q = 1e-6, σ = 0.6, T = 10⁸, used until it answered, now does) → "—"
  // with the reason, no number of the previous run anywhere: headline, gap, library,
  // sentence, charts.
  {
    // (Traced: a failure prints the page's worker traffic.)
    const pf = await open('', 1280, { trace: true });
    await pf.waitForFunction(() => /^\d+\.\d{4}$/.test(document.querySelector('#epsilon-pld')?.textContent || ''), null, { timeout: 20000 });
    check(cliError('epsilon', { q: 0.5, sigma: 0.3, steps: 1000000000, delta: 1e-5, accountant: 'pld' }) !== null, 'the CLI refuses q = 0.5, σ = 0.3, T = 1e9 too');
    await pf.fill('#q', '0.5');
    await pf.fill('#steps', '1000000000');
    await pf.fill('#sigma', '0.3');
    // (Settled: the headline's "—" and no answer awaited. An earlier keystroke's inputs can
    // answer "—" before the last input's request; under CPU load the section has also been
    // seen still marked as updating 20 s after its "—" — an open page bug, which this check
    // reports.)
    await pf.waitForFunction(() => document.querySelector('#epsilon-pld').textContent === '—'
      && !document.querySelector('#tight').classList.contains('updating'), null, { timeout: 20000 }).catch(() => {});
    const st = await pf.evaluate(() => ({
      head: document.querySelector('#epsilon-pld').textContent,
      value: document.querySelector('#epsilon-pld').getAttribute('data-value'),
      bracket: document.querySelector('#epsilon-pld-bracket').textContent,
      note: document.querySelector('#epsilon-pld-note').textContent,
      gap: document.querySelector('#epsilon-gap').textContent,
      sentence: document.querySelector('#sentence').textContent,
      lib: [...document.querySelectorAll('#library-table tbody tr')].map((tr) => tr.children[1].textContent),
      training: document.querySelector('#training-statement').textContent,
      // Visible (not only to screen readers) under the profile chart.
      profile: document.querySelector('#profile-status').textContent,
      updating: document.querySelector('#tight').classList.contains('updating'),
    }));
    const failedOk = st.head === '—' && st.value === null && !/2\.38/.test(st.bracket) && /unavailable/.test(st.note) && st.gap === ''
      && !/2\.38/.test(st.sentence) && /exact RDP/.test(st.sentence) && !st.lib.some((e) => /^2\.38/.test(e))
      && /unavailable/.test(st.training) && /unavailable/.test(st.profile) && !st.updating;
    check(failedOk,
      `a failed tight answer leaves nothing of the previous run: ${JSON.stringify({ ...st, training: st.training.slice(0, 60), profile: st.profile.slice(0, 60), sentence: st.sentence.slice(0, 60) })}`
      + (failedOk ? '' : `\n  the page's worker traffic:\n    ${(await workerTrace(pf)).join('\n    ')}`));
    // Back to a run it can answer: a number again.
    await pf.fill('#q', '0.01');
    await pf.fill('#steps', '1000');
    await pf.fill('#sigma', '1');
    const back = cli('epsilon', { q: 0.01, sigma: 1, steps: 1000, delta: 1e-5, accountant: 'pld' });
    await pf.waitForFunction((w) => document.querySelector('#epsilon-pld').textContent === w, up4(back.epsilon), { timeout: 20000 }).catch(() => {});
    check((await text(pf, '#epsilon-pld')) === up4(back.epsilon), `then answers again for the inputs shown (${await text(pf, '#epsilon-pld')} = CLI ${up4(back.epsilon)})`);
    await pf.waitForFunction(() => document.querySelector('#profile-status').textContent === '', null, { timeout: 30000 }).catch(() => {});
    check((await text(pf, '#profile-status')) === '', `the profile chart's "unavailable" goes when it is drawn again ("${await text(pf, '#profile-status')}")`);
    await pf.close();
  }
  // A run of its own with no answer (two examples per user with shuffled batches: user level
  // is computed for Poisson sampling only) gets no chart, μ or risk sentence of another run —
  // they used to be one example's, labelled per user (issue 61 #2).
  {
    const pu = await open('?batch=shuffled&group=2');
    await pu.waitForFunction(() => /unavailable/.test(document.querySelector('#profile-status')?.textContent || ''), null, { timeout: 60000 }).catch(() => {});
    const st = await pu.evaluate(() => ({
      profile: document.querySelector('#profile-status').textContent,
      training: document.querySelector('#training-statement').textContent,
      risk: document.querySelector('#sentence-risk').textContent,
      gdp: document.querySelector('#gdp-summary').textContent,
    }));
    check(/unavailable.*Poisson sampling only/.test(st.profile) && /unavailable/.test(st.training) && !/catches/.test(st.risk) && !/μ =/.test(st.gdp),
      `a refused user-level run leaves no other run's charts: ${JSON.stringify(st).slice(0, 300)}`);
    await pu.close();
  }
  // #19: a run of ~4 sampled steps at σ = 0.341 (q = 9.462e-8, T = 46,420,413, δ = 0.0116),
  // whose profile the lattices spend the call on: the worker reads it in closed form, and the
  // chart is drawn (it read "unavailable … the work budget … is spent").
  {
    const pf = await open('?q=9.462e-8&sigma=0.341&steps=46420413&delta=0.0116');
    await pf.waitForFunction(() => /tight δ falls/.test(document.querySelector('#profile-summary')?.textContent || '')
      || /unavailable/.test(document.querySelector('#profile-status')?.textContent || ''), null, { timeout: 90000 }).catch(() => {});
    const pr = await pf.evaluate(() => ({ status: document.querySelector('#profile-status').textContent, summary: document.querySelector('#profile-summary').textContent }));
    check(pr.status === '' && /tight δ falls/.test(pr.summary), `q = 9.462e-8, σ = 0.341: the privacy profile is drawn (${JSON.stringify(pr).slice(0, 200)})`);
    await pf.close();
    // #2: an answer that arrives after the inputs changed, but before the next request is
    // posted, is not shown as the new inputs' (σ 1.52 then 1.4 about the worker's time apart).
    const ps = await open('?q=0.0001&sigma=1.5&steps=1000000&delta=1e-8');
    await ps.waitForFunction(() => /^(\d+\.\d{4}|—)$/.test(document.querySelector('#epsilon-pld')?.textContent || ''), null, { timeout: 30000 });
    const want = up4(cli('epsilon', { q: 0.0001, sigma: 1.4, steps: 1000000, delta: 1e-8, accountant: 'pld' }).epsilon);
    const old = up4(cli('epsilon', { q: 0.0001, sigma: 1.52, steps: 1000000, delta: 1e-8, accountant: 'pld' }).epsilon);
    for (let k = 0; k < 3; k++) {
      await ps.fill('#sigma', '1.52');
      await ps.waitForTimeout(300 + 60 * k);
      await ps.fill('#sigma', '1.4');
      // Settled: σ = 1.4's own answer (or "—" where the page's wasm cannot answer it).
      await ps.waitForFunction((w) => !document.querySelector('#tight').classList.contains('updating') && [w, '—'].includes(document.querySelector('#epsilon-pld').textContent), want, { timeout: 30000 }).catch(() => {});
      const shown = await text(ps, '#epsilon-pld');
      const sentence = await text(ps, '#sentence');
      check((shown === want || shown === '—') && !sentence.includes(`(${old},`),
        `σ 1.52 then 1.4 (${300 + 60 * k} ms apart): the headline is σ = 1.4's (${want}), shows ${shown}; the sentence never carries 1.52's ${old}`);
    }
  }
  // The worker runs the worker-only wasm (the whole engine: the ladder for long runs), so the
  // page answers what the command line answers, with the same bracket: the issue's N = 10 M,
  // B = 1000, 10 epochs run (the page's own wasm, one FFT, gave [0.131392, 0.132089]) and
  // q = 1e-4, σ = 1, T = 10⁸ (the page said "—" before). The same headline, and bracket ends
  // the same to 2e-5 relative: the wasm's FFT and libm round differently from the native ones,
  // the ladder's direct points and refinements follow the rounded values, and each side is
  // certified by its own rounding bounds (T = 10⁸: [6.008484, 6.009302] on the page,
  // [6.008462, 6.009260] from the CLI, at one commit).
  for (const run of [{ q: 0.0001, sigma: 1, steps: 100000, delta: 1e-5 }, { q: 0.0001, sigma: 1, steps: 100000000, delta: 1e-5 }]) {
    const want = cli('epsilon', { ...run, accountant: 'pld' });
    const pl = await open(`?q=${run.q}&sigma=${run.sigma}&steps=${run.steps}&delta=${run.delta}`);
    await pl.waitForFunction(() => /^(\d+\.\d{4}|—)$/.test(document.querySelector('#epsilon-pld')?.textContent || ''), null, { timeout: 60000 }).catch(() => {});
    const got = { head: await text(pl, '#epsilon-pld'), bracket: await text(pl, '#epsilon-pld-bracket') };
    const b = `[${down6(want.epsilon_lower)}, ${up6(want.epsilon)}]`;
    const ends = (got.bracket.match(/\[([\d.]+), ([\d.]+)\]/) || []).slice(1).map(Number);
    const near = (x, y) => Math.abs(x - y) <= 2e-5 * Math.abs(y) + 1e-6;
    check(got.head === up4(want.epsilon) && ends.length === 2 && near(ends[0], want.epsilon_lower) && near(ends[1], want.epsilon),
      `q = ${run.q}, σ = ${run.sigma}, T = ${run.steps}: the page's tight ε ${got.head} ${got.bracket.trim()} = the CLI's ${up4(want.epsilon)} ${b} (worker-only wasm, ladder)`);
    await pl.close();
  }
  // Hardening round 3, #11: a long run whose tight charts are heavy: the page settles —
  // no chart stays "updating", and each chart is drawn or says why it is not, in words.
  {
    const pc = await open('?q=0.01&sigma=1&steps=10000000&delta=1e-8');
    await pc.waitForFunction(() => !document.querySelector('figure.stale') && !document.querySelector('#tight').classList.contains('updating')
      && (document.querySelector('#training-statement')?.textContent || '').length > 5
      && ['profile-summary', 'risk-sentence'].every((id) => (document.getElementById(id)?.textContent || '').length > 5
        && !/no points yet/.test(document.getElementById(id).textContent)), null, { timeout: 150000 }).catch(() => {});
    const st = await pc.evaluate(() => ({
      stale: document.querySelectorAll('figure.stale').length,
      updating: document.querySelector('#tight').classList.contains('updating'),
      texts: ['training-statement', 'profile-summary', 'risk-sentence'].map((id) => document.getElementById(id).textContent),
      note: document.querySelector('#epsilon-pld-note').textContent,
    }));
    check(st.stale === 0 && !st.updating && st.texts.every((x) => x.length > 5 && !/epsilon:|still applies/.test(x)) && !/epsilon:|still applies/.test(st.note),
      `a heavy long run settles, each chart drawn or unavailable in words: ${JSON.stringify(st).slice(0, 300)}`);
  }
  // Hardening round 3, #14: the worker protocol checks every message; malformed ones get an
  // error for their client and do not silence it, a null message does not throw, and a
  // string q is refused rather than served another run's cached answer.
  {
    const got = await page.evaluate(async () => {
      const w = new Worker('pld-worker.js', { type: 'module' });
      const answers = [];
      w.onmessage = (e) => answers.push(e.data);
      const errs = [];
      w.onerror = (e) => errs.push(String(e.message));
      const run = { q: 0.01, sigma: 1, steps: 100, delta: 1e-5, charts: false };
      const bad = [null, 'x', { ...run, gen: NaN }, { ...run, gen: 'x' }, { ...run }, { ...run, gen: Infinity }, { ...run, gen: 1e300 }, { ...run, gen: 1, q: '0.0123' }, { ...run, gen: 2, delta: NaN }];
      for (const m of bad) w.postMessage(m);
      w.postMessage({ ...run, gen: 3 });
      const t0 = performance.now();
      while (!answers.some((a) => a.gen === 3 && a.kind === 'headline') && performance.now() - t0 < 20000) await new Promise((r) => setTimeout(r, 20));
      w.terminate();
      return { answers, errs };
    });
    const errors = got.answers.filter((a) => a.kind === 'error');
    const ok = got.answers.find((a) => a.gen === 3 && a.kind === 'headline');
    check(errors.length === 9 && errors.every((a) => /^worker: /.test(a.message)) && ok && ok.epsilon > 0 && got.errs.length === 0,
      `worker protocol: 9 malformed messages answered with errors (${errors.map((a) => a.message).join(' | ').slice(0, 300)}), then a valid one answers (${ok && ok.epsilon})`);
  }
  // Hardening round 3, #3: per client only the newest request of each kind is computed —
  // 40 headline requests posted at once (each a different σ, so no cache helps) and 6
  // calibrations queued before a headline. Structural bounds: the old worker computed all.
  {
    const got = await page.evaluate(async () => {
      const w = new Worker('pld-worker.js', { type: 'module' });
      const answers = [];
      w.onmessage = (e) => answers.push(e.data);
      const wait = async (f) => {
        const t0 = performance.now();
        while (!answers.some(f) && performance.now() - t0 < 60000) await new Promise((r) => setTimeout(r, 20));
      };
      // Warm the wasm first, so the flood meets a ready worker.
      w.postMessage({ client: 'warm', gen: 0, q: 0.01, sigma: 1, steps: 10, delta: 1e-5, charts: false });
      await wait((a) => a.client === 'warm');
      for (let i = 0; i < 40; i++) w.postMessage({ client: 'flood', gen: i, q: 0.01, sigma: 1 + i / 1000, steps: 300, delta: 1e-5, charts: false });
      await wait((a) => a.client === 'flood' && a.gen === 39);
      for (let i = 0; i < 6; i++) w.postMessage({ client: 'cal', kind: 'calibrate', which: 'sigma', accountant: 'pld', gen: i, q: 0.01, steps: 300, delta: 1e-5, target: 1 + i / 10 });
      w.postMessage({ client: 'cal', gen: 100, q: 0.01, sigma: 1, steps: 300, delta: 1e-5, charts: false });
      await wait((a) => a.client === 'cal' && a.gen === 100);
      await wait((a) => a.client === 'cal' && a.kind === 'calibrated' && a.gen === 5);
      w.terminate();
      return {
        flood: answers.filter((a) => a.client === 'flood').map((a) => a.gen),
        cal: answers.filter((a) => a.client === 'cal' && a.kind === 'calibrated').map((a) => a.gen),
        headline: answers.some((a) => a.client === 'cal' && a.gen === 100 && a.kind === 'headline'),
      };
    });
    check(got.flood.includes(39) && got.flood.length <= 10 && got.cal.includes(5) && got.cal.length <= 3 && got.headline,
      `worker scheduling: of 40 queued requests ${got.flood.length} computed (${got.flood.join(',')}), the newest answered; of 6 calibrations ${got.cal.length} computed (${got.cal.join(',')}); the headline behind them answered`);
  }
  // The risk chart asked beside the headline (its attack profile's range is exact RDP's; the
  // worker does so with more than two cores, or with ?risk-first=1): on a run whose profile
  // and attack profile are read apart (q = 1e-3, σ = 0.8, T = 1000: tops 0.76 and 3.9) the
  // answer is the one computed after the headline (?risk-first=0), to the bit, and its risk
  // the command line's attack bound (`profile`, each profile its own call).
  {
    const run = { q: 0.001, sigma: 0.8, steps: 1000, delta: 1e-5 };
    const charts = (flag) => page.evaluate(async ([run, flag]) => {
      const w = new Worker(`pld-worker.js?risk-first=${flag}`, { type: 'module' });
      const answers = [];
      w.onmessage = (e) => answers.push(e.data);
      w.postMessage({ client: 'early', gen: 1, ...run });
      const t0 = performance.now();
      while (!answers.some((a) => a.kind === 'charts' || a.kind === 'charts-error') && performance.now() - t0 < 60000) await new Promise((r) => setTimeout(r, 20));
      w.terminate();
      return answers.find((a) => a.kind === 'charts' || a.kind === 'charts-error');
    }, [run, flag]);
    const [first, after] = [await charts(1), await charts(0)];
    const want = cli('profile', { q: run.q, sigma: run.sigma, steps: run.steps });
    const tpr = first?.risk?.tpr ?? [];
    const same = tpr.length === want.attack.length && want.attack.every((a, i) => Math.abs(tpr[i] - a.tpr_max) <= 1e-9 * a.tpr_max && first.risk.fpr[i] === a.fpr);
    check(first?.kind === 'charts' && same && first.profile?.length === 60 && first.training?.steps?.length === 16
      && JSON.stringify(first) === JSON.stringify(after),
      `the risk asked beside the headline: TPR ${JSON.stringify(tpr)} = the CLI's ${JSON.stringify(want.attack.map((a) => a.tpr_max))}; profile ${first?.profile?.length} rows, training ${first?.training?.steps?.length} checkpoints; the same answer as after the headline: ${JSON.stringify(first) === JSON.stringify(after)}`);
  }
  // The sentence names its accountant: the tight ε by default (URL acct=pld), exact RDP on request.
  check(/\(2\.3820, 1e-5\)-differential privacy \(tight \(privacy-loss distribution\) accountant\)/.test(await text(page, '#sentence')),
    `the sentence uses the tight ε and names the accountant: ${(await text(page, '#sentence')).slice(0, 150)}`);
  await page.selectOption('#accountant', 'rdp');
  await frames(page);
  check(/\(2\.5967, 1e-5\)-differential privacy \(exact RDP accountant\)/.test(await text(page, '#sentence')) && new URL(page.url()).searchParams.get('acct') === 'rdp',
    `acct=rdp: the exact-RDP sentence, written to the URL (${new URL(page.url()).search})`);
  await page.selectOption('#accountant', 'pld');
  await frames(page);
  {
    const pa = await open('?acct=rdp');
    check((await pa.$eval('#accountant', (s) => s.value)) === 'rdp' && /exact RDP accountant/.test(await text(pa, '#sentence')), 'a link with acct=rdp opens with the RDP sentence');
    await pa.close();
    const pb = await open('?acct=prv');
    check((await text(pb, '#accountant-error')).includes("acct must be 'pld' or 'rdp', got 'prv'"), `a bad acct is named: ${await text(pb, '#accountant-error')}`);
    await pb.close();
  }
  // "What do I need?" answers with the chosen accountant: the tight one by default (in the
  // worker), exact RDP with acct=rdp; Apply sets the answer.
  {
    await page.fill('#target-eps', '2');
    await page.click('#solve-sigma');
    await page.waitForFunction(() => /tight ε ≤/.test(document.querySelector('#sigma-answer').textContent), null, { timeout: 60000 });
    const ans = await text(page, '#sigma-answer');
    const cs = cli('calibrate', { q: 256 / 60000, steps: 14063, delta: 1e-5, epsilon: 2, accountant: 'pld' });
    const got = parseFloat(ans.replace('σ = ', ''));
    check(Math.abs(got - cs.sigma) / cs.sigma < 1e-3 && cs.epsilon <= 2, `inverse mode (tight): ${ans} vs CLI σ = ${cs.sigma}`);
    await page.selectOption('#accountant', 'rdp');
    await page.click('#solve-sigma');
    await page.waitForFunction(() => /\(ε = /.test(document.querySelector('#sigma-answer').textContent), null, { timeout: 10000 }).catch(() => {});
    const rdpAns = await text(page, '#sigma-answer');
    const cr = cli('calibrate', { q: 256 / 60000, steps: 14063, delta: 1e-5, epsilon: 2 });
    check(rdpAns.startsWith(`σ = ${cr.sigma.toFixed(6)}`), `inverse mode (exact RDP): ${rdpAns}`);
    // A new target clears the answers and their Apply buttons; Enter solves both, the
    // steps in epochs too (the dataset terms describe q).
    await page.fill('#target-eps', '2.5');
    const cleared = await page.evaluate(() => ({ a: document.querySelector('#sigma-answer').textContent, apply: document.querySelector('#apply-sigma').hidden }));
    check(cleared.a === '' && cleared.apply, `changing the target clears the answer and hides Apply (${JSON.stringify(cleared)})`);
    await page.press('#target-eps', 'Enter');
    await page.waitForFunction(() => /epochs/.test(document.querySelector('#steps-answer').textContent) && /σ = /.test(document.querySelector('#sigma-answer').textContent), null, { timeout: 20000 }).catch(() => {});
    const both = await page.evaluate(() => [document.querySelector('#sigma-answer').textContent, document.querySelector('#steps-answer').textContent]);
    check(/^σ = /.test(both[0]) && /^T = \d+ ≈ [\d.]+ epochs/.test(both[1]), `Enter solves both: ${both.join(' | ')}`);
    await page.fill('#sigma', '1.2');
    await frames(page);
    check((await text(page, '#steps-answer')) === '' && (await page.evaluate(() => document.querySelector('#apply-steps').hidden)), 'changing an input clears the answers');
    // An answer still on its way when an input changes is dropped, not shown for the new inputs.
    await page.click('#solve-steps');
    await page.fill('#sigma', '1.3');
    await page.waitForTimeout(2500);
    check((await text(page, '#steps-answer')) === '' && (await page.evaluate(() => document.querySelector('#apply-steps').hidden)), `an answer arriving after an input changed is dropped ("${await text(page, '#steps-answer')}")`);
    await page.fill('#sigma', '1.1');
    await frames(page);
    await page.selectOption('#accountant', 'pld');
    await page.fill('#target-eps', '3');
    await frames(page);
    // An attack-risk target (#25): TPR ≤ 5 % at FPR 1 % — the CLI's calibrate --tpr --fpr,
    // for σ and for steps; a bad rate is named next to the fields.
    await page.click('#solve-risk-sigma');
    await page.waitForFunction(() => /TPR ≤/.test(document.querySelector('#risk-sigma-answer').textContent), null, { timeout: 60000 }).catch(() => {});
    const rs = cli('calibrate', { q: 256 / 60000, steps: 14063, tpr: 0.05, fpr: 0.01 });
    const riskAns = await text(page, '#risk-sigma-answer');
    check(riskAns.startsWith(`σ = ${rs.sigma.toFixed(6)}`) && /at FPR 0\.01, certified/.test(riskAns) && rs.tpr <= 0.05 && !(await page.evaluate(() => document.querySelector('#apply-sigma').hidden)),
      `risk target: "${riskAns}" = CLI calibrate --tpr 0.05 --fpr 0.01 (σ = ${rs.sigma}); Apply offered`);
    await page.click('#solve-risk-steps');
    await page.waitForFunction(() => /TPR ≤/.test(document.querySelector('#risk-steps-answer').textContent), null, { timeout: 60000 }).catch(() => {});
    const rt = cli('calibrate', { q: 256 / 60000, sigma: 1.1, tpr: 0.05, fpr: 0.01 });
    check((await text(page, '#risk-steps-answer')).startsWith(`T = ${rt.steps}`), `risk target, most steps: "${await text(page, '#risk-steps-answer')}" (CLI ${rt.steps})`);
    await page.fill('#risk-tpr', '2');
    await page.click('#solve-risk-sigma');
    check(/^TPR must be a number between 0 and 1/.test(await text(page, '#risk-error')) && (await text(page, '#risk-sigma-answer')) === '', `a bad TPR is named: "${await text(page, '#risk-error')}"`);
    await page.fill('#risk-tpr', '0.05');
  }
  // "What your library reports": six rows, the RDP grids as the engine computes them,
  // and code that parses as Python with the current values.
  // (σ went 1.1 → 1.3 → 1.1 above: the table refills once the tight answer is back.)
  await page.waitForFunction((want) => [...document.querySelectorAll('#library-table tbody tr')].some((tr) => tr.children[0].textContent.startsWith('dp_accounting Rdp') && tr.children[1].textContent === want)
    && /certified/.test(document.querySelector('#library-table tbody tr:last-child')?.textContent || ''), mnist.grid_epsilon.toFixed(4), { timeout: 10000 }).catch(() => {});
  const lib = await page.$$eval('#library-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const dpa = lib.find((r) => r[0].startsWith('dp_accounting Rdp'));
  // Our rows round up as the headline does (issue 61 #4); a library's row reads as it prints.
  check(lib.length === 6 && dpa && dpa[1] === mnist.grid_epsilon.toFixed(4) && lib[5][2].includes('certified'),
    `library table: ${lib.map((r) => r[0] + ' ' + r[1]).join(' | ')}`);
  // #22: the Opacus-PRV and dp_accounting-PLD rows are what those libraries print for the
  // run (computed; the issue's table, measured with Opacus and dp_accounting 0.6.0), ±0.001;
  // with dataset terms Opacus' own q = 1/⌈N/B⌉ and T = E·⌈N/B⌉ from its loader.
  for (const [query, opacus, dpa] of [
    ['?q=0.01024&sigma=1&steps=2930&delta=1e-5', 3.2477, 3.2375],
    ['?q=0.0001&sigma=1.5&steps=1000000&delta=1e-8', 0.3746, 0.4218],
    ['?q=0.0001&sigma=1.5&steps=10000&delta=1e-5', 0.0301, 0.0232],
    ['?dataset_size=50000&batch_size=512&epochs=30&sigma=1&delta=1e-5', 3.2408, 3.2375],
  ]) {
    const pl = await open(query);
    await pl.waitForFunction(() => /computed here/.test(document.querySelector('#library-table').textContent), null, { timeout: 60000 }).catch(() => {});
    const rows = await pl.$$eval('#library-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    const op = rows.find((r) => r[0].startsWith('Opacus, PrivacyEngine default'));
    const dp = rows.find((r) => r[0].startsWith('dp_accounting PLD'));
    check(op && dp && Math.abs(Number(op[1]) - opacus) <= 1e-3 && Math.abs(Number(dp[1]) - dpa) <= 1e-3 && (!query.startsWith('?dataset') || /1\/98 and 2940 steps/.test(op[2])),
      `library rows ${query}: Opacus ${op && op[1]} (prints ${opacus}), dp_accounting PLD ${dp && dp[1]} (prints ${dpa})`);
    await pl.close();
  }
  const codes = await page.$$eval('#snippets pre', (ps) => ps.map((p) => p.textContent));
  const parsed = codes.map((c) => {
    try { execFileSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], { input: c }); return true; } catch { return false; }
  });
  check(codes.length === 3 && parsed.every(Boolean) && codes.every((c) => c.includes('14063') && c.includes('1.1')),
    `${codes.length} snippets parse as Python (ast.parse) and carry the run's values`);
  // The worker keeps the main thread free: no long task while the PLD numbers and the
  // three charts are recomputed after an input change.
  const longest = await page.evaluate(async () => {
    const tasks = [];
    const po = new PerformanceObserver((l) => { for (const e of l.getEntries()) tasks.push(e.duration); });
    po.observe({ type: 'longtask', buffered: false });
    const before = document.querySelector('#epsilon-pld').textContent;
    const box = document.querySelector('#sigma');
    box.value = '1.2';
    box.dispatchEvent(new Event('input', { bubbles: true }));
    const t0 = performance.now();
    while (document.querySelector('#epsilon-pld').textContent === before && performance.now() - t0 < 20000) await new Promise((r) => setTimeout(r, 20));
    const headline = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 4000));
    po.disconnect();
    return { longest: Math.max(0, ...tasks), headline };
  });
  // Goal 50 ms (printed); only a freeze of a quarter second fails, so load cannot (#17).
  check(longest.longest <= 250, `no main-thread freeze while the worker recomputes (longest task ${longest.longest.toFixed(0)} ms, goal 50, fails over 250); new tight ε after ${longest.headline.toFixed(0)} ms`);
  await writeFile(join(OUT, 'bench-tight.json'), JSON.stringify(longest, null, 2));
  {
    await page.fill('#sigma', '1.1');
    await page.dispatchEvent('#sigma', 'input');
    await page.waitForFunction(() => !document.querySelector('#tight').classList.contains('updating') && /^2\.38/.test(document.querySelector('#epsilon-pld').textContent), null, { timeout: 20000 });
    const staleSeen = await page.evaluate(() => document.querySelectorAll('figure.stale').length);
    await page.waitForFunction(() => !document.querySelector('figure.stale'), null, { timeout: 60000 });
    // (The target's sentence follows the charts after the worker's short rest.)
    await page.waitForFunction(() => /2\.381\d\d at the end/.test(document.querySelector('#training-statement').textContent), null, { timeout: 20000 }).catch(() => {});
    check(/2\.381\d\d at the end/.test(await text(page, '#training-statement')),
      `the charts follow the inputs (stale while recomputed: ${staleSeen} figures marked; then ${await text(page, '#training-statement')})`);
  }
  // Benchmark (reported): time from typing σ to the new tight ε and to the three tight
  // charts, MNIST-like runs, 20 values (includes the 50 ms rest before the worker is asked).
  {
    const tight = await page.evaluate(async () => {
      const box = document.querySelector('#sigma');
      const pld = document.querySelector('#epsilon-pld');
      const head = [], charts = [];
      for (let i = 0; i < 20; i++) {
        const before = pld.getAttribute('data-value');
        box.value = String(1.13 + i * 0.01);
        box.dispatchEvent(new Event('input', { bubbles: true }));
        const t0 = performance.now();
        while (pld.getAttribute('data-value') === before && performance.now() - t0 < 20000) await new Promise((r) => setTimeout(r, 2));
        head.push(performance.now() - t0);
        while (!document.querySelector('figure.stale') && performance.now() - t0 < 300) await new Promise((r) => setTimeout(r, 2));
        while (document.querySelector('figure.stale') && performance.now() - t0 < 30000) await new Promise((r) => setTimeout(r, 5));
        charts.push(performance.now() - t0);
      }
      const stat = (xs) => { const s = [...xs].sort((a, b) => a - b); return { p50: s[Math.floor(s.length / 2)], p95: s[Math.ceil(0.95 * s.length) - 1], max: s[s.length - 1] }; };
      return { headline: stat(head), charts: stat(charts) };
    });
    // The page asks the worker once the inputs rest 50 ms (src/ui/session.rs REST_MS): the goal
    // (#20) counts from then; the keystroke's figure is printed too.
    const REST = 50;
    console.log(`bench tight (page, MNIST-like, σ typed, 20 values): new #epsilon-pld p50 ${tight.headline.p50.toFixed(0)} ms, p95 ${tight.headline.p95.toFixed(0)} ms; three tight charts p50 ${tight.charts.p50.toFixed(0)} ms, p95 ${tight.charts.p95.toFixed(0)} ms from the keystroke = p50 ${(tight.charts.p50 - REST).toFixed(0)} ms, p95 ${(tight.charts.p95 - REST).toFixed(0)} ms after the inputs rest (goal 150 / 300 ms)`);
    // Structural: every typed σ got its own tight ε before the loop's 20 s cap (the time
    // itself is the benchmark line above; it used to be a 2 s pass/fail bar).
    check(tight.headline.max < 20000, `the tight ε follows typed σ (max ${tight.headline.max.toFixed(0)} ms)`);
    // Benchmark (reported): time from typing σ to μ-GDP under the risk chart (#gdp-summary), 8
    // values, each waiting for μ-GDP before the next (issue 64's goal 300 ms; the A/B harness
    // benches/page_updates.mjs measures the same).
    const gdp = await page.evaluate(async () => {
      const box = document.querySelector('#sigma');
      const g = document.querySelector('#gdp-summary');
      const times = [];
      for (let i = 0; i < 8; i++) {
        const before = g.textContent;
        box.value = String(1.135 + i * 0.01);
        box.dispatchEvent(new Event('input', { bubbles: true }));
        const t0 = performance.now();
        while (g.textContent === before && performance.now() - t0 < 30000) await new Promise((r) => setTimeout(r, 2));
        times.push(performance.now() - t0);
      }
      const s = [...times].sort((a, b) => a - b);
      return { p50: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
    });
    tight.gdp = gdp;
    console.log(`bench μ-GDP (page, MNIST-like, σ typed, 8 values, each awaited): #gdp-summary p50 ${gdp.p50.toFixed(0)} ms, max ${gdp.max.toFixed(0)} ms from the keystroke (goal 300 ms)`);
    await writeFile(join(OUT, 'bench-tight-updates.json'), JSON.stringify(tight, null, 2));
    check(gdp.max < 30000, `μ-GDP follows typed σ (max ${gdp.max.toFixed(0)} ms)`);
    await page.fill('#sigma', '1.1');
    await page.dispatchEvent('#sigma', 'input');
    await page.waitForFunction(() => !document.querySelector('figure.stale') && /^2\.38/.test(document.querySelector('#epsilon-pld').textContent), null, { timeout: 30000 });
  }
  await page.screenshot({ path: join(OUT, 'page-1280.png'), fullPage: true });

  // 1c. Batching: shuffled, fixed-size batches are not covered by the Poisson ε; the page
  // says so and gives the bound without amplification (E-fold Gaussian, q = 1).
  {
    await page.selectOption('#batching', 'shuffled');
    await page.waitForFunction(() => /^\d+\.\d{4}$/.test(document.querySelector('#epsilon-shuffled').textContent), null, { timeout: 20000 });
    const g = cli('epsilon', { q: 1, sigma: 1.1, steps: 60, delta: 1e-5, accountant: 'pld' });
    const box = await page.evaluate(() => ({ hidden: document.querySelector('#shuffled-box').hidden, eps: document.querySelector('#epsilon-shuffled').textContent, e: document.querySelector('#shuffled-epochs').textContent, assumed: document.querySelector('#batching-assumed').textContent }));
    check(!box.hidden && box.eps === up4(g.epsilon) && box.e === '60' && Math.abs(g.epsilon - 54) < 1 && /^shuffled, fixed-size batches \(234 steps per epoch, 60 epochs\)/.test(box.assumed),
      `batch=shuffled: the Poisson ε is said not to apply; bound without amplification ε ≤ ${box.eps} for E = ${box.e} (CLI q = 1, T = 60: ${up4(g.epsilon)}); assumed: "${box.assumed.slice(0, 60)}"`);
    // The headline, its gap note and the sentence follow the batching chosen (#23).
    const head = await page.evaluate(() => ({ eps: document.querySelector('#epsilon-pld').textContent, bracket: document.querySelector('#epsilon-pld-bracket').textContent, gap: document.querySelector('#epsilon-gap').textContent, sentence: document.querySelector('#sentence').textContent }));
    check(head.eps === box.eps && /^certified band \[10\.8\d+, 54\.04\d+\] for shuffled, fixed-size batches$/.test(head.bracket) && /Poisson sampling's: not a bound/.test(head.gap) && head.sentence.startsWith('Training with noise multiplier 1.1 and shuffled, fixed-size batches (234 per epoch) for 60 epochs satisfies (54.0459, '),
      `batch=shuffled: the headline is the band's upper end ${head.eps} ("${head.bracket}"), the exact-RDP line "${head.gap}", the sentence "${head.sentence.slice(0, 110)}…"`);
    // The band's lower end: the command line's `--sampling shuffle` (Chua et al.'s pair) for
    // the page's dataset terms (t = ⌊N/B⌋ = 234 steps per epoch, the last 96 examples of each
    // epoch dropped; one derivation everywhere, issue 61 #5) and the same 60 epochs, above
    // MNIST's Poisson ε 2.38.
    const band = cli('epsilon', { sampling: 'shuffle', sigma: 1.1, 'dataset-size': 60000, 'batch-size': 256, epochs: 60, delta: 1e-5 });
    const lowBox = await page.evaluate(() => ({ low: document.querySelector('#epsilon-shuffled-lower').textContent, vs: document.querySelector('#shuffled-vs-poisson').textContent, title: document.querySelector('#epsilon-shuffled').title }));
    check(lowBox.low === down4(band.epsilon_lower) && up4(band.epsilon) === box.eps && /cannot be claimed/.test(lowBox.vs) && lowBox.title.startsWith('certified band ['),
      `batch=shuffled: the certified band [${lowBox.low}, ${box.eps}] = the CLI's --sampling shuffle [${down4(band.epsilon_lower)}, ${up4(band.epsilon)}]; "${lowBox.vs}"`);
    check(new URL(page.url()).searchParams.get('batch') === 'shuffled', 'the batching choice is in the URL');
    // "What do I need?" calibrates the shuffled run shown, not Poisson sampling's (issue 61
    // #1): σ whose band's upper end meets the target, as the CLI's calibrate for the scheme;
    // going back to Poisson sampling drops that answer and its Apply.
    {
      await page.fill('#target-eps', '30');
      await page.click('#solve-sigma');
      await page.waitForFunction(() => /shuffled batches/.test(document.querySelector('#sigma-answer').textContent), null, { timeout: 60000 }).catch(() => {});
      const ans = await text(page, '#sigma-answer');
      const cs = cli('calibrate', { sampling: 'shuffle', 'dataset-size': 60000, 'batch-size': 256, epochs: 60, delta: 1e-5, epsilon: 30 });
      check(ans.startsWith(`σ = ${cs.sigma.toFixed(6)}`) && /band's upper end, shuffled batches/.test(ans),
        `batch=shuffled: Smallest σ "${ans}" = the CLI's calibrate --sampling shuffle (σ = ${cs.sigma})`);
      await page.selectOption('#batching', 'poisson');
      await frames(page);
      check((await text(page, '#sigma-answer')) === '' && (await page.evaluate(() => document.querySelector('#apply-sigma').hidden)),
        'another batching drops the calibration and its Apply');
      await page.fill('#target-eps', '3');
      await frames(page);
      await page.selectOption('#batching', 'shuffled');
    }
    await page.selectOption('#batching', 'poisson');
    check(await page.evaluate(() => document.querySelector('#shuffled-box').hidden), 'back to Poisson: the box is hidden');
    const pb = await open('?batch=fixed');
    check((await text(pb, '#batching-error')).includes("batch must be 'poisson' or 'shuffled' or 'random-allocation' or 'truncated-poisson' or 'fixed-size', got 'fixed'"), `a bad batch is named: ${await text(pb, '#batching-error')}`);
    await pb.close();
  }

  // 1c'. Random allocation (balls in bins): its certified bracket, computed by the worker
  // through the command line's batch line, equals the CLI's `--sampling random-allocation`
  // for the page's dataset terms (t = ⌈N/B⌉ = 235: every example in one step) and E = 60; the box says how it differs from shuffling and carries
  // the PyTorch sampler; the choice is in the link and survives a reload from it.
  {
    await page.selectOption('#batching', 'random-allocation');
    await page.waitForFunction(() => /^\d+\.\d{4}$/.test(document.querySelector('#epsilon-allocation').textContent), null, { timeout: 30000 });
    const ra = cli('epsilon', { sampling: 'random-allocation', sigma: 1.1, 'dataset-size': 60000, 'batch-size': 256, epochs: 60, delta: 1e-5 });
    const box = await page.evaluate(() => ({
      hidden: document.querySelector('#allocation-box').hidden,
      shuffledHidden: document.querySelector('#shuffled-box').hidden,
      up: document.querySelector('#epsilon-allocation').textContent,
      low: document.querySelector('#epsilon-allocation-lower').textContent,
      t: document.querySelector('#allocation-t').textContent,
      e: document.querySelector('#allocation-epochs').textContent,
      assumed: document.querySelector('#batching-assumed').textContent,
      sampler: document.querySelector('#allocation-sampler').textContent,
    }));
    check(!box.hidden && box.shuffledHidden && box.up === up4(ra.epsilon) && box.low === down4(ra.epsilon_lower) && box.t === '235' && box.e === '60' && /^random allocation \(each example in one of 235 steps per epoch, 60 epochs\)/.test(box.assumed),
      `batch=random-allocation: the bracket [${box.low}, ${box.up}] = the CLI's --sampling random-allocation [${down4(ra.epsilon_lower)}, ${up4(ra.epsilon)}] for t = ${box.t}, E = ${box.e}`);
    const head = await page.evaluate(() => ({ eps: document.querySelector('#epsilon-pld').textContent, sentence: document.querySelector('#sentence').textContent }));
    check(await page.evaluate(() => !document.querySelector('#charts-batching').hidden && /follow random allocation/.test(document.querySelector('#charts-batching').textContent)), 'the charts say they follow random allocation');
    // ε over training follows the scheme: its last point is the headline's bracket (12
    // checkpoints by epoch, each the CLI's), and the target's "most steps" is whole epochs.
    await page.waitForFunction(() => !document.querySelector('figure.stale') && /(holds for the first|would hold for) \d+ steps/.test(document.querySelector('#training-statement').textContent), null, { timeout: 60000 }).catch(() => {});
    const mostE = cli('calibrate', { sampling: 'random-allocation', 'dataset-size': 60000, 'batch-size': 256, sigma: 1.1, delta: 1e-5, epsilon: 3, target: 'steps' });
    const stmt = await page.evaluate(() => document.querySelector('#training-statement').textContent);
    check(stmt.includes(`${mostE.epochs * 235} steps`), `random allocation: "${stmt.slice(0, 120)}" (CLI: the most epochs for ε ≤ 3 is ${mostE.epochs}, ${mostE.epochs * 235} steps)`);
    check(head.eps === box.up && head.sentence.startsWith(`Training with noise multiplier 1.1 and random allocation (each example in one of 235 steps per epoch) for 60 epochs satisfies (${box.up}, `),
      `batch=random-allocation: the headline is the bracket's upper end ${head.eps}; the sentence "${head.sentence.slice(0, 120)}…"`);
    check(/class RandomAllocationSampler\(Sampler\)/.test(box.sampler) && /torch\.randint\(self\.t, \(self\.n,\)/.test(box.sampler), 'the box carries the PyTorch sampler');
    check(new URL(page.url()).searchParams.get('batch') === 'random-allocation', 'random allocation is in the URL');
    const again = await open(new URL(page.url()).search);
    await again.waitForFunction(() => /^\d+\.\d{4}$/.test(document.querySelector('#epsilon-allocation').textContent), null, { timeout: 30000 });
    check(await again.evaluate(() => document.querySelector('#batching').value) === 'random-allocation' && await text(again, '#epsilon-allocation') === box.up, 'the link reopens with random allocation and its bracket');
    await again.close();
    await page.selectOption('#batching', 'poisson');
    check(await page.evaluate(() => document.querySelector('#allocation-box').hidden), 'back to Poisson: the allocation box is hidden');
    await page.waitForFunction(() => /^2\.3820$/.test(document.querySelector('#epsilon-pld').textContent) && /^Training with noise multiplier 1\.1 and sampling rate/.test(document.querySelector('#sentence').textContent), null, { timeout: 20000 }).catch(() => {});
    const back = await page.evaluate(() => ({ eps: document.querySelector('#epsilon-pld').textContent, gap: document.querySelector('#epsilon-gap').textContent, assumed: document.querySelector('#batching-assumed').textContent }));
    check(await page.evaluate(() => document.querySelector('#charts-batching').hidden), 'back to Poisson: the charts\' note is hidden');
    check(back.eps === '2.3820' && /above the tight ε/.test(back.gap) && back.assumed === 'Poisson sampling with rate q', `back to Poisson: the headline is Poisson's tight ε again (${back.eps}, "${back.gap}")`);
  }

  // 1c'''. Truncated Poisson and fixed-size batches (#23): N from the dataset terms, the
  // largest batch from its box (default q·N + 4 s.d. = 320 for MNIST); each headline is the
  // command line's; fixed-size chooses replace-one and is an RDP upper bound only (said so);
  // the library table follows the scheme; what is missing is said, never a borrowed number.
  {
    const pt = await open('');
    await pt.waitForFunction(() => /^2\.3820$/.test(document.querySelector('#epsilon-pld').textContent), null, { timeout: 20000 });
    await pt.selectOption('#batching', 'truncated-poisson');
    const run = { q: 256 / 60000, sigma: 1.1, steps: 14063, delta: 1e-5 };
    const tp = cli('epsilon', { ...run, sampling: 'truncated-poisson', 'dataset-size': 60000, 'max-batch': 320, accountant: 'pld' });
    await pt.waitForFunction((w) => document.querySelector('#epsilon-pld').textContent === w, up4(tp.epsilon), { timeout: 30000 }).catch(() => {});
    const a = await pt.evaluate(() => ({
      eps: document.querySelector('#epsilon-pld').textContent,
      bracket: document.querySelector('#epsilon-pld-bracket').textContent,
      sentence: document.querySelector('#sentence').textContent,
      row: !document.querySelector('#max-batch-row').hidden,
      lib: [...document.querySelectorAll('#library-table tbody tr')].map((r) => r.textContent).join(' | '),
      note: document.querySelector('#charts-batching').textContent,
    }));
    check(a.eps === up4(tp.epsilon) && a.row && a.bracket.includes(`${down6(tp.epsilon_lower)}, ${up6(tp.epsilon)}] for truncated Poisson sampling`)
      && a.sentence.includes('over 60000 examples (batches capped at 320) and 14063 steps satisfies') && /TruncatedSubsampledGaussianDpEvent/.test(a.lib) && !/NaN/.test(a.lib) && /follow truncated Poisson/.test(a.note),
      `truncated Poisson: the headline is the CLI's ${up4(tp.epsilon)} ("${a.bracket}"), sentence "${a.sentence.slice(0, 100)}…", library "${a.lib.slice(0, 80)}…"`);
    await pt.fill('#max-batch', '300');
    await pt.keyboard.press('Tab');
    const tp3 = cli('epsilon', { ...run, sampling: 'truncated-poisson', 'dataset-size': 60000, 'max-batch': 300, accountant: 'pld' });
    await pt.waitForFunction((w) => document.querySelector('#epsilon-pld').textContent === w, up4(tp3.epsilon), { timeout: 30000 }).catch(() => {});
    const u = new URL(pt.url()).searchParams;
    check(await text(pt, '#epsilon-pld') === up4(tp3.epsilon) && u.get('batch') === 'truncated-poisson' && u.get('max_batch') === '300',
      `largest batch 300: the CLI's ${up4(tp3.epsilon)}, shown ${await text(pt, '#epsilon-pld')}; link batch=${u.get('batch')}&max_batch=${u.get('max_batch')}`);
    await pt.fill('#max-batch', '2.5');
    await pt.keyboard.press('Tab');
    check(await pt.inputValue('#max-batch') === '300' && /whole number.*keeping 300/.test(await text(pt, '#max-batch-error')) && await text(pt, '#epsilon-pld') === up4(tp3.epsilon),
      `a bad largest batch is named, 300 kept: "${await text(pt, '#max-batch-error')}"`);
    // Charts follow it (no exact-RDP curve): ε over training ends at the headline.
    await pt.waitForFunction(() => !document.querySelector('figure.stale'), null, { timeout: 90000 }).catch(() => {});
    check(await pt.evaluate(() => !document.querySelector('figure.stale') && document.querySelector('#chart-training').width > 0), 'truncated Poisson: its charts arrive');
    // Fixed-size: replace-one is chosen with it; an RDP upper bound only.
    await pt.selectOption('#batching', 'fixed-size');
    const fs = cli('epsilon', { sigma: 1.1, steps: 14063, delta: 1e-5, sampling: 'fixed-size', 'dataset-size': 60000, 'batch-size': 256, adjacency: 'replace-one' });
    await pt.waitForFunction((w) => document.querySelector('#epsilon-pld').textContent === w, up4(fs.epsilon), { timeout: 30000 }).catch(() => {});
    await pt.waitForFunction(() => /RDP bound only/.test(document.querySelector('#profile-status').textContent + document.querySelector('#profile-summary').textContent), null, { timeout: 30000 }).catch(() => {});
    const f = await pt.evaluate(() => ({
      eps: document.querySelector('#epsilon-pld').textContent,
      bracket: document.querySelector('#epsilon-pld-bracket').textContent,
      adj: document.querySelector('#adjacency').value,
      sentence: document.querySelector('#sentence').textContent,
      profile: document.querySelector('#profile-status').textContent + document.querySelector('#profile-summary').textContent,
      lib: [...document.querySelectorAll('#library-table tbody tr')].map((r) => r.textContent).join(' | '),
    }));
    check(f.eps === up4(fs.epsilon) && f.adj === 'replace-one' && f.bracket.startsWith(`certified upper bound from RDP, no lower bound: ≤ ${up6(fs.epsilon)} for fixed-size batches`)
      && /replacing any one example by another/.test(f.sentence) && /RDP bound only/.test(f.profile) && /SampledWithoutReplacementDpEvent/.test(f.lib) && !/NaN/.test(f.bracket + f.lib),
      `fixed-size: the CLI's RDP bound ${up4(fs.epsilon)} ("${f.bracket}"), adjacency ${f.adj}, profile "${f.profile.slice(0, 80)}"`);
    await pt.selectOption('#adjacency', 'add-remove');
    await pt.waitForFunction(() => document.querySelector('#epsilon-pld').textContent === '—', null, { timeout: 20000 }).catch(() => {});
    check(await text(pt, '#epsilon-pld') === '—' && /replace-one adjacency/.test(await text(pt, '#epsilon-pld-note')),
      `fixed-size under add/remove: unavailable with the reason ("${await text(pt, '#epsilon-pld-note')}")`);
    await pt.close();
    // Without dataset terms that describe q, N is unknown: said, no number.
    const pn = await open('?q=0.01&sigma=1&steps=1000&delta=1e-5&batch=truncated-poisson');
    await pn.waitForFunction(() => /needs the dataset size/.test(document.querySelector('#epsilon-pld-note').textContent), null, { timeout: 20000 }).catch(() => {});
    check(await text(pn, '#epsilon-pld') === '—' && /needs the dataset size N/.test(await text(pn, '#epsilon-pld-note')),
      `truncated Poisson without N: "${await text(pn, '#epsilon-pld-note')}"`);
    await pn.close();
  }

  // 1c''. Examples per user (#25): K = 2 makes the headline, its sentence, the charts, μ-GDP
  // and the target user-level — each the command line's `--group-size 2` (tight); the value
  // is in the link and survives a reload; a bad value is named and the last valid one kept.
  {
    const pg = await open('');
    await pg.waitForFunction(() => /^2\.3820$/.test(document.querySelector('#epsilon-pld').textContent), null, { timeout: 20000 });
    await pg.fill('#group-size', '2');
    await pg.keyboard.press('Tab');
    const run = { q: 256 / 60000, sigma: 1.1, steps: 14063, delta: 1e-5 };
    const u = cli('epsilon', { ...run, 'group-size': 2, accountant: 'pld' });
    await pg.waitForFunction((w) => document.querySelector('#epsilon-pld').textContent === w, up4(u.epsilon), { timeout: 30000 }).catch(() => {});
    const st = await pg.evaluate(() => ({
      eps: document.querySelector('#epsilon-pld').textContent,
      bracket: document.querySelector('#epsilon-pld-bracket').textContent,
      sentence: document.querySelector('#sentence').textContent,
      adj: document.querySelector('#adjacency-assumed').textContent,
      gap: document.querySelector('#epsilon-gap').textContent,
      note: document.querySelector('#charts-batching').hidden ? '' : document.querySelector('#charts-batching').textContent,
    }));
    check(st.eps === up4(u.epsilon) && st.bracket.includes(`${down6(u.epsilon_lower)}, ${up6(u.epsilon)}] for users with at most 2 examples`)
      && /for every user with at most 2 examples/.test(st.sentence) && st.sentence.includes(`(${up4(u.epsilon)}, `) && /one user's examples \(at most 2; add\/remove adjacency\)/.test(st.adj)
      && /one example.s/.test(st.gap) && /examples per user and neighbours chosen/.test(st.note),
      `group-size 2: the headline is the CLI's user-level ε ${up4(u.epsilon)} ("${st.bracket}"); sentence "${st.sentence.slice(0, 110)}…"; "${st.adj}"; gap "${st.gap}"`);
    {
      // The CSV names the run of the headline first (#23: the export follows the run).
      const [d] = await Promise.all([pg.waitForEvent('download', { timeout: 15000 }), pg.click('#export-csv')]);
      const first = (await readFile(await d.path())).toString().split('\n')[0];
      // (The worker's wasm FFTs round differently from the native CLI's: compared to 1e-6.)
      const m = /^# headline_epsilon = ([\d.e+-]+) \(certified upper bound; \[([\d.e+-]+), [\d.e+-]+\]: user-level: each user contributes at most 2 examples/.exec(first);
      check(m !== null && Math.abs(Number(m[1]) - u.epsilon) <= 1e-6 * u.epsilon && Math.abs(Number(m[2]) - u.epsilon_lower) <= 1e-6 * u.epsilon,
        `group-size 2: the CSV's first line is the user-level headline ("${first.slice(0, 120)}…")`);
    }
    const g = cli('gdp', { q: run.q, sigma: 1.1, steps: 14063, 'group-size': 2 });
    await pg.waitForFunction(() => /μ = /.test(document.querySelector('#gdp-summary').textContent), null, { timeout: 60000 }).catch(() => {});
    const gd = await text(pg, '#gdp-summary');
    check(gd.includes(`μ = ${up4(g.mu)}`), `group-size 2: μ-GDP is the CLI's gdp --group-size 2 (μ = ${up4(g.mu)}): "${gd.slice(0, 80)}"`);
    await pg.waitForFunction(() => !document.querySelector('figure.stale') && /(holds for the first|would hold for) \d+ steps/.test(document.querySelector('#training-statement').textContent), null, { timeout: 90000 }).catch(() => {});
    const most = cli('calibrate', { q: run.q, sigma: 1.1, 'group-size': 2, accountant: 'pld', delta: 1e-5, epsilon: 3, target: 'steps' });
    const stmt = await text(pg, '#training-statement');
    check(stmt.includes(`${most.steps} steps`), `group-size 2: the target's most steps are user-level ("${stmt.slice(0, 100)}"; CLI ${most.steps})`);
    const sr = await pg.evaluate(() => [document.querySelector('#sentence-risk').textContent, document.querySelector('#risk-sentence').textContent]);
    check(/^An attacker who wrongly flags at most 1(\.0)? % of non-members catches at most/.test(sr[0]) && sr[0] === sr[1],
      `the plain-language sentence states the (user-level) attack bound: "${sr[0]}"`);
    check(new URL(pg.url()).searchParams.get('group') === '2', 'the examples per user are in the link');
    await pg.fill('#group-size', '0');
    await pg.keyboard.press('Tab');
    const bad = await pg.evaluate(() => ({ v: document.querySelector('#group-size').value, err: document.querySelector('#group-size-error').textContent }));
    check(bad.v === '2' && /whole number from 1 to 256/.test(bad.err) && new URL(pg.url()).searchParams.get('group') === '2', `a bad examples-per-user value is named ("${bad.err}") and 2 kept`);
    const again = await open(new URL(pg.url()).search);
    await again.waitForFunction((w) => document.querySelector('#epsilon-pld').textContent === w, up4(u.epsilon), { timeout: 30000 }).catch(() => {});
    check(await again.evaluate(() => document.querySelector('#group-size').value) === '2' && await text(again, '#epsilon-pld') === up4(u.epsilon), 'the link reopens user-level with its ε');
    await again.close();
    await pg.fill('#group-size', '1');
    await pg.keyboard.press('Tab');
    await pg.waitForFunction(() => /^2\.3820$/.test(document.querySelector('#epsilon-pld').textContent), null, { timeout: 20000 }).catch(() => {});
    check(await text(pg, '#epsilon-pld') === '2.3820' && !new URL(pg.url()).searchParams.has('group'), 'back to one example per user: the example-level ε, no group in the link');
    // Replace-one neighbours (#23): the CLI's --adjacency replace-one (tight), said in words,
    // in the link; back to add/remove.
    await pg.selectOption('#adjacency', 'replace-one');
    const ro = cli('epsilon', { ...run, adjacency: 'replace-one', accountant: 'pld' });
    await pg.waitForFunction((w) => document.querySelector('#epsilon-pld').textContent === w, up4(ro.epsilon), { timeout: 30000 }).catch(() => {});
    const rs1 = await pg.evaluate(() => ({ eps: document.querySelector('#epsilon-pld').textContent, adj: document.querySelector('#adjacency-assumed').textContent, sentence: document.querySelector('#sentence').textContent, title: document.querySelector('#epsilon-pld').title }));
    check(rs1.eps === up4(ro.epsilon) && /replacing one example by another \(replace-one adjacency\)/.test(rs1.adj) && /replacing any one example by another/.test(rs1.sentence)
      && /replace-one adjacency \(sensitivity 2C\)/.test(rs1.title) && new URL(pg.url()).searchParams.get('adjacency') === 'replace-one',
      `adjacency replace-one: the headline is the CLI's ${up4(ro.epsilon)}; "${rs1.adj}"; "${rs1.sentence.slice(0, 100)}…"`);
    await pg.selectOption('#adjacency', 'add-remove');
    await pg.waitForFunction(() => /^2\.3820$/.test(document.querySelector('#epsilon-pld').textContent), null, { timeout: 20000 }).catch(() => {});
    check(await text(pg, '#epsilon-pld') === '2.3820' && !new URL(pg.url()).searchParams.has('adjacency'), 'back to add/remove: the example-level ε, no adjacency in the link');
    await pg.close();
  }

  // 1d. A typed value that ends invalid leaves the state at its value from before the edit,
  // never at a valid prefix (the page-state issue: σ "1e9" → σ = 1, q "0.5%" → q = 0.5,
  // steps "60k" → 60, B "70000" → 7000, each carried by the link): typed key by key.
  {
    const pi = await open('');
    const mnistEps = up4(engine(256 / 60000, 1.1, 14063, 1e-5).epsilon);
    for (const [id, typed, param, kept] of [['sigma', '1e9', 'sigma', '1.1'], ['q', '0.5%', 'q', null], ['steps', '60k', 'steps', '14063']]) {
      await pi.click(`#${id}`, { clickCount: 3 });
      await pi.keyboard.type(typed, { delay: 60 });
      await frames(pi);
      const st = await pi.evaluate((id) => ({ eps: document.querySelector('#epsilon').textContent, err: document.getElementById(`${id}-error`).textContent }), id);
      await pi.keyboard.press('Tab');
      await frames(pi);
      const link = new URL(pi.url()).searchParams.get(param);
      check(st.eps === mnistEps && st.err.length > 0 && (kept === null ? Math.abs(Number(link) * 60000 / 256 - 1) < 1e-5 : link === kept),
        `typed ${id} "${typed}": the field says why (${st.err}); the state and the link keep the value from before the edit (ε ${st.eps} = MNIST's ${mnistEps}; link ${param}=${link})`);
      // Back to a valid value for the next field.
      await pi.fill(`#${id}`, { sigma: '1.1', q: '0.0042666666666666667', steps: '14063' }[id]);
      await pi.keyboard.press('Tab');
    }
    await pi.click('#dataset summary');
    await pi.click('#ds-b', { clickCount: 3 });
    await pi.keyboard.type('70000', { delay: 60 });
    await frames(pi);
    const ds = await pi.evaluate(() => ({ eps: document.querySelector('#epsilon').textContent, err: document.querySelector('#ds-error').textContent, q: document.querySelector('#q').value, t: document.querySelector('#steps').value }));
    check(ds.eps === mnistEps && ds.err.length > 0 && ds.t === '14063', `typed B "70000" (> N): named (${ds.err}), q and T from before the edit (q ${ds.q}, T ${ds.t}; ε ${ds.eps})`);
    await pi.close();
  }
  // 1f. The target ε travels in the link, reaches the training chart as it is typed, and
  // the chart's sentence is the same solve as "Most steps" (the page-state issue, item 5:
  // the caption said 25.5 epochs where the inverse mode said 25.95).
  {
    const pt = await open('?target=2.5');
    const most = (e) => cli('calibrate', { q: 0.0042666666666666667, sigma: 1.1, delta: 1e-5, epsilon: e, accountant: 'pld', target: 'steps' }).steps;
    const m3 = most(2.5);
    await pt.waitForFunction((m) => (document.querySelector('#training-statement')?.textContent || '').includes(`${m} steps`), m3, { timeout: 30000 }).catch(() => {});
    const s3 = await text(pt, '#training-statement');
    check((await pt.inputValue('#target-eps')) === '2.5' && s3.includes('stays below 2.5 for the whole run') && s3.includes(`would hold for ${m3} steps`),
      `?target=2.5 fills the box and the sentence: "${s3}" (CLI most steps ${m3}, beyond the run)`);
    await pt.fill('#target-eps', '2');
    const m2 = most(2);
    await pt.waitForFunction((m) => (document.querySelector('#training-statement')?.textContent || '').includes(`first ${m} steps`), m2, { timeout: 30000 }).catch(() => {});
    const s2 = await text(pt, '#training-statement');
    await pt.click('#solve-steps');
    await pt.waitForFunction(() => /T = \d/.test(document.querySelector('#steps-answer').textContent), null, { timeout: 30000 }).catch(() => {});
    const inv = await text(pt, '#steps-answer');
    check(s2.includes(`holds for the first ${m2} steps`) && inv.startsWith(`T = ${m2}`) && new URL(pt.url()).searchParams.get('target') === '2',
      `typed target 2 (no Enter): the sentence "${s2.slice(0, 90)}…" and "Most steps" ("${inv}") are the same solve (CLI ${m2}); the link carries target=2`);
    await pt.close();
  }
  // Hardening round 3, #12: with shuffled batches the band stands even when the Poisson
  // answer fails (q = 1e-3, σ = 0.25, T = 10⁸ — 10⁵ shuffled epochs — δ = 1e-5: exact RDP's ε
  // is above 10³, beyond the domain the tight accountant covers, and it refuses there; the
  // band, [804617.4908, 805393.7093] on the page, is below 10⁶ and shown in digits; checked against the
  // CLI below. In-domain refusals served until the tight accountant answered them: q = 2e-9,
  // σ = 1.232, T = 10⁹, then q = 2.136e-9, σ = 0.5108, T = 581,266,865, δ = 3.33e-15, then
  // q = 4.845e-9, σ = 0.4324, T = 454,685,135, δ = 4.12e-14, then q = 4.443e-9, σ = 0.3754,
  // T = 450,000,000, δ = 5.3e-15, then q = 5.35e-9, σ = 0.3614, T = 373,831,774,
  // δ = 8.53e-6, then q = 1e-8, σ = 0.32, T = 2·10⁸, δ = 1e-3, then q = 6.214e-7,
  // σ = 0.5486, T = 69,744,471, δ = 0.0077; 400 random draws of the corner found one more,
  // which answers too); #16: a page whose wasm cannot load says why instead of leaving its
  // placeholders.
  {
    check(cliError('epsilon', { q: 1e-3, sigma: 0.25, steps: 100000000, delta: 1e-5, accountant: 'pld' }) !== null, 'the CLI refuses q = 1e-3, σ = 0.25, T = 1e8, δ = 1e-5 too');
    const ps = await open('?q=1e-3&sigma=0.25&steps=100000000&delta=1e-5&batch=shuffled');
    await ps.waitForFunction(() => /^\d+\.\d{4}$/.test(document.querySelector('#epsilon-shuffled')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    const st = await ps.evaluate(() => ({ band: document.querySelector('#epsilon-shuffled').textContent, low: document.querySelector('#epsilon-shuffled-lower').textContent, head: document.querySelector('#epsilon-pld').textContent }));
    check(/^\d+\.\d{4}$/.test(st.band) && /^\d+(\.\d{4})?$/.test(st.low) && st.head === st.band, `batch=shuffled with a failing Poisson answer: the band stands ([${st.low}, ${st.band}]) and leads the headline ("${st.head}")`);
    await ps.close();
    const pb = await newPage(browser, [], 'no-wasm', { viewport: { width: 1280, height: 1000 } });
    await pb.route('**/sgm-rdp-page_bg.wasm', (r) => r.fulfill({ status: 404, body: 'not found' }));
    await pb.goto(BASE);
    await pb.waitForFunction(() => /could not load/.test(document.querySelector('#sentence')?.textContent || ''), null, { timeout: 15000 }).catch(() => {});
    const why = await pb.textContent('#sentence');
    check(/The calculator could not load/.test(why) && (await pb.textContent('#epsilon-pld')) === '—', `no wasm: the page says why ("${why.slice(0, 90)}…")`);
    await pb.close();
  }
  // 1e. Dataset terms are live and forgiving: "50,000" / 512 / 30 epochs → q = 0.01024, T = 2930.
  {
    const pd = await open('');
    await pd.click('#dataset summary');
    await pd.fill('#ds-n', '50,000');
    await pd.fill('#ds-b', '512');
    await pd.fill('#ds-e', '30');
    await pd.waitForFunction(() => document.querySelector('#steps').value === '2930', null, { timeout: 5000 }).catch(() => {});
    const got = await pd.evaluate(() => ({ q: document.querySelector('#q').value, t: document.querySelector('#steps').value, d: document.querySelector('#ds-derived').textContent }));
    check(got.q === '0.01024' && got.t === '2930' && got.d.includes('2930'), `dataset terms typed live: ${JSON.stringify(got)}`);
    await pd.fill('#ds-b', '60,001');
    await pd.waitForTimeout(200);
    check((await text(pd, '#ds-error')).length > 0 && (await pd.inputValue('#steps')) === '2930', `B > N is named, the last good values kept: ${await text(pd, '#ds-error')}`);
    await pd.close();
  }

  // 1d. δ ≥ 1/N is flagged once N is known (the dataset terms describe q).
  {
    const pd = await open('?delta=0.0001');
    const w = await text(pd, '#delta-warning');
    check(/δ = 1e-4 ≥ 1\/N = 1\.66667e-5: the usual rule asks for δ < 1\/N/.test(w), `δ = 1e-4 with N = 60000: "${w}"`);
    check((await text(page, '#delta-warning')) === '', 'δ = 1e-5 < 1/N: no warning');
    await pd.close();
  }

  // 2. Presets.
  const presets = { mnist: [256 / 60000, 1.1, 14063, 1e-5], cifar: [4096 / 50000, 3, 2000, 1e-5], tiny: [1e-6, 0.8, 100000000, 1e-8] };
  for (const [name, [q, s, t, d]] of Object.entries(presets)) {
    await page.selectOption('#preset', name);
    await frames(page);
    const want = up4(engine(q, s, t, d).epsilon);
    check((await text(page, '#epsilon')) === want, `preset ${name}: #epsilon ${await text(page, '#epsilon')} = engine ${want}`);
  }
  await page.fill('#sigma', '0.9');
  await frames(page);
  check((await page.inputValue('#preset')) === '', `a value that no longer matches the preset returns the menu to "—" (${await page.inputValue('#preset')})`);
  {
    const pp = await open('?q=0.08192&sigma=3&steps=2000&delta=1e-5');
    check((await pp.inputValue('#preset')) === 'cifar', `a link with a preset's values shows its name (${await pp.inputValue('#preset')})`);
    await pp.close();
  }

  // 3. Every slider changes the canvas.
  await page.selectOption('#preset', 'mnist');
  await frames(page);
  for (const id of ['q', 'sigma', 'steps', 'delta']) {
    const before = await canvasData(page, 'chart-a');
    const eps = await text(page, '#epsilon');
    await page.focus(`#${id}-range`);
    for (let i = 0; i < 40; i++) await page.keyboard.press('ArrowRight');
    await frames(page);
    check((await canvasData(page, 'chart-a')) !== before, `slider ${id} changes chart A's pixels`);
    check((await text(page, '#epsilon')) !== eps, `slider ${id} changes #epsilon`);
    const vt = await page.getAttribute(`#${id}-range`, 'aria-valuetext');
    check(vt && vt.includes(await page.inputValue(`#${id}`)), `slider ${id} aria-valuetext "${vt}" gives the value`);
  }

  // 3b. Sliders land on round values; arrow keys move to the next round value.
  {
    await page.selectOption('#preset', 'mnist');
    await frames(page);
    await page.focus('#sigma-range');
    await page.keyboard.press('ArrowRight');
    const up = await page.inputValue('#sigma');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    const down = await page.inputValue('#sigma');
    await page.keyboard.press('PageUp');
    const decade = await page.inputValue('#sigma');
    check(up === '1.2' && down === '1' && decade === '10', `arrow keys step σ 1.1 → ${up} → ${down}, Page Up → ${decade}`);
    const dragged = await page.evaluate(() => {
      const r = document.querySelector('#sigma-range');
      const out = [];
      for (const x of [0.0419, 0.3011, 0.6532, -0.6994]) {
        r.value = String(x);
        r.dispatchEvent(new Event('input', { bubbles: true }));
        out.push(document.querySelector('#sigma').value);
      }
      return out;
    });
    check(JSON.stringify(dragged) === JSON.stringify(['1.1', '2', '4.5', '0.2']), `dragging σ gives round values: ${dragged.join(', ')}`);
    await page.selectOption('#preset', 'mnist');
    await frames(page);
  }

  // 3c. Hover on chart A: the readout and a crosshair at the nearest order, placed by the
  // chart's own mapping (the crosshair's x within a few px of the pointer on the dense grid).
  {
    const box = await page.$eval('#chart-a', (c) => { c.scrollIntoView({ block: 'center' }); const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
    await page.mouse.move(box.x + box.w * 0.4, box.y + box.h * 0.5);
    await page.waitForTimeout(50);
    const hov = await page.evaluate(() => {
      const l = document.querySelector('#crosshair');
      return { readout: document.querySelector('#readout').textContent, hidden: l.hidden, left: parseFloat(l.style.left), top: parseFloat(l.style.top), height: parseFloat(l.style.height) };
    });
    check(/^α = [\d.]+: per-step RDP/.test(hov.readout) && !hov.hidden && Math.abs(hov.left - box.w * 0.4) < 12 && hov.top > 0 && hov.height > box.h / 2,
      `hovering chart A reads out the nearest order with a crosshair there (${JSON.stringify(hov)}, pointer at ${(box.w * 0.4).toFixed(1)} px)`);
    await page.mouse.move(2, 2);
    check(await page.evaluate(() => document.querySelector('#crosshair').hidden), 'the crosshair goes when the pointer leaves');
  }

  // 3d. Readouts on the three tight charts (#22): hover at the right edge of ε over training
  // reads out the last checkpoint — the run's own T and the headline's certified ε — with a
  // crosshair; End and ← on the profile move along its points; the attack chart names its
  // rates; a change of inputs takes every value away until the new charts arrive.
  {
    await page.waitForFunction(() => !document.querySelector('figure.stale') && /^2\.38/.test(document.querySelector('#epsilon-pld').textContent), null, { timeout: 60000 });
    const hint = await text(page, '#training-readout');
    const box = await page.$eval('#chart-training', (c) => { c.scrollIntoView({ block: 'center' }); const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
    await page.mouse.move(box.x + box.w - 3, box.y + box.h * 0.5);
    await page.waitForTimeout(50);
    const tr = await page.evaluate(() => ({
      text: document.querySelector('#training-readout').textContent,
      line: !document.querySelector('#crosshair-training').hidden,
      eps: Number(document.querySelector('#epsilon-pld').dataset.value),
    }));
    const m = /^after 14063 steps \(60(\.\d+)? epochs\): tight ε \(PLD, certified upper bound\) = ([\d.]+) \(bracket \[([\d.]+), [\d.]+\]\); exact RDP ε = ([\d.]+)$/.exec(tr.text);
    check(/Hover/.test(hint) && m && Math.abs(Number(m[2]) - tr.eps) <= 1e-5 * tr.eps && tr.line,
      `ε over training reads out its last checkpoint with the headline's ε ${tr.eps} and a crosshair (${tr.text})`);
    await page.focus('#chart-profile');
    await page.keyboard.press('End');
    const end = await text(page, '#profile-readout');
    await page.keyboard.press('ArrowLeft');
    const before = await text(page, '#profile-readout');
    check(/^ε = [\d.e-]+: tight δ\(ε\) \(PLD bracket\) δ ∈ \[/.test(end) && /^ε = /.test(before) && before !== end,
      `the profile reads out by keyboard: End "${end}", then ← "${before}"`);
    await page.focus('#chart-risk');
    await page.keyboard.press('Home');
    const risk = await text(page, '#risk-readout');
    check(/^false-positive rate [\d.e-]+: true-positive rate ≤ [\d.e-]+ \(bound on any attack/.test(risk), `the attack chart reads out its rates (${risk})`);
    await page.fill('#sigma', '1.2');
    await page.waitForFunction(() => document.querySelector('figure.stale'), null, { timeout: 5000 }).catch(() => {});
    const gone = await page.evaluate(() => ['#training-readout', '#profile-readout', '#risk-readout'].map((id) => document.querySelector(id).textContent));
    check(gone.every((t) => /^Hover/.test(t)), `a change of inputs takes the read-out values away (${gone.join(' | ')})`);
    await page.fill('#sigma', '1.1');
    await frames(page);
    await page.$eval('#sigma', (e) => e.blur());
    await frames(page);
    check((await page.$eval('#preset', (e) => e.value)) === 'mnist', 'back on MNIST after the readouts');
  }

  // Every chart is focusable and described by a text summary with its numbers.
  {
    const summaries = () => [...document.querySelectorAll('canvas')].map((c) => {
      const d = document.getElementById(c.getAttribute('aria-describedby') || '');
      return { id: c.id, tab: c.tabIndex, text: d ? d.textContent.trim() : '' };
    });
    await page.waitForFunction((f) => eval(f)().every((c) => /\d/.test(c.text)), summaries.toString(), { timeout: 20000 }).catch(() => {});
    const got = await page.evaluate((f) => eval(f)(), summaries.toString());
    check(got.length === 7 && got.every((c) => c.tab === 0 && /\d/.test(c.text)), `every chart focusable with a text summary: ${JSON.stringify(got.map((c) => [c.id, c.tab, c.text.slice(0, 60)]))}`);
  }
  // Every input's message is tied to it (screen readers read it with the field).
  check(await page.evaluate(() => ['q', 'sigma', 'steps', 'delta', 'ds-n', 'ds-b', 'ds-e', 'target-eps', 'omega', 'cb-sigma', 'cb-eps', 'batching', 'accountant']
    .every((id) => { const d = document.getElementById(id).getAttribute('aria-describedby'); return d && document.getElementById(d); })), 'each field names its message element with aria-describedby');
  // 4. Bad typed input: message next to the field, last good numbers kept.
  await page.selectOption('#preset', 'mnist');
  await frames(page);
  const good = await text(page, '#epsilon');
  const goodChart = await canvasData(page, 'chart-a');
  for (const [id, bad] of [['q', '0'], ['q', '2'], ['sigma', '-1'], ['delta', '1'], ['steps', '0'], ['q', 'abc'], ['sigma', 'abc']]) {
    await page.fill(`#${id}`, bad);
    await frames(page);
    const msg = await text(page, `#${id}-error`);
    check(msg.length > 0 && (await text(page, '#epsilon')) === good, `typed ${id} = ${bad}: "${msg}", epsilon kept`);
    await page.fill(`#${id}`, { q: String(256 / 60000), sigma: '1.1', delta: '1e-5', steps: '14063' }[id]);
    await frames(page);
  }
  check((await canvasData(page, 'chart-a')) === goodChart, 'charts unchanged after bad input');
  const body = await text(page, 'body');
  check(!/NaN|undefined/.test(body), 'no NaN/undefined on screen');

  // 5. URL state: reproduces a view; bad values named, defaults kept; nothing reaches innerHTML.
  const p2 = await open('?v=1&q=0.01&sigma=2&steps=1000&delta=1e-6');
  const want2 = up4(engine(0.01, 2, 1000, 1e-6).epsilon);
  check((await text(p2, '#epsilon')) === want2, `URL state reproduces epsilon ${want2}`);
  const p3 = await open('?q=2&sigma=-1&steps=0&delta=1&x=<img src=x onerror=alert(1)>');
  for (const id of ['q', 'sigma', 'steps', 'delta']) {
    check((await text(p3, `#${id}-error`)).length > 0, `bad URL ${id} is named next to the field`);
  }
  check((await text(p3, '#epsilon')) === up4(mnist.epsilon), 'bad URL keeps the default numbers');
  check((await p3.$$('img')).length === 0, 'nothing from the URL reaches the DOM as HTML');
  const p4 = await open('?q=%3Cb%3Ehi%3C%2Fb%3E');
  check((await p4.$$('b')).length === 0 && (await text(p4, '#q-error')).includes('<b>'), 'markup in the URL is shown as text');
  await p2.close(); await p3.close(); await p4.close();

  // 5b. The link holds all state (ω, overlays, chart D's inputs, dataset terms) and names a
  // bad value of any parameter, its default kept; a typed change keeps the rest.
  {
    const full = '?v=1&q=0.01024&sigma=1.1&steps=2930&delta=1e-5&conv=classic&acct=rdp&batch=shuffled&omega=16&overlays=1&cb_sigma=2&cb_eps=0.5&dataset_size=50000&batch_size=512&epochs=30';
    const pf = await open(full);
    const got = await pf.evaluate(() => ({
      omega: document.querySelector('#omega').value, overlays: document.querySelector('#overlays').checked,
      cbs: document.querySelector('#cb-sigma').value, cbe: document.querySelector('#cb-eps').value,
      n: document.querySelector('#ds-n').value, b: document.querySelector('#ds-b').value, e: document.querySelector('#ds-e').value,
      open: document.querySelector('#dataset').open, conv: document.querySelector('#conversion').value,
      acct: document.querySelector('#accountant').value, batch: document.querySelector('#batching').value }));
    check(JSON.stringify(got) === JSON.stringify({ omega: '16', overlays: true, cbs: '2', cbe: '0.5', n: '50000', b: '512', e: '30', open: true, conv: 'classic', acct: 'rdp', batch: 'shuffled' }),
      `a link restores every control: ${JSON.stringify(got)}`);
    await pf.fill('#sigma', '1.2');
    await pf.dispatchEvent('#sigma', 'change');
    const u = new URL(pf.url()).searchParams;
    const kept = ['omega', 'overlays', 'cb_sigma', 'cb_eps', 'dataset_size', 'batch_size', 'epochs', 'conv', 'acct', 'batch'].every((k) => u.get(k) === new URLSearchParams(full).get(k));
    check(kept && u.get('sigma') === '1.2', `a typed change rewrites the link with every setting kept (${new URL(pf.url()).search})`);
    await pf.fill('#cb-eps', '0.25');
    await pf.waitForTimeout(600);
    check(new URL(pf.url()).searchParams.get('cb_eps') === '0.25', 'chart D\'s inputs follow into the link');
    await pf.close();
    const pb = await open('?conv=improvd&omega=-1&overlays=yes&cb_sigma=0&epochs=0&v=2');
    const errs = await pb.evaluate(() => ['conversion-error', 'omega-error', 'overlays-error', 'cb-error', 'ds-error', 'link-error'].map((id) => document.getElementById(id).textContent));
    check(errs.every((e) => e.startsWith('from the link: ')) && errs[0].includes("conv must be 'improved' or 'classic', got 'improvd'"),
      `every bad link value is named next to its control: ${JSON.stringify(errs)}`);
    check((await text(pb, '#epsilon')) === up4(mnist.epsilon) && (await pb.inputValue('#omega')) === '32', 'bad link values keep the defaults');
    await pb.close();
  }

  // 6. URL is written on change; copy-link, CSV export exist.
  await page.fill('#sigma', '1.3');
  await page.dispatchEvent('#sigma', 'change');
  check(page.url().includes('sigma=1.3') && page.url().includes('v=1'), `URL written on change: ${page.url()}`);

  // 6d. The URL follows typing (debounced), and Copy link works with or without a clipboard.
  {
    await page.fill('#steps', '14000');
    await page.waitForTimeout(600);
    check(new URL(page.url()).searchParams.get('steps') === '14000', `the URL follows typed values without a change event (${new URL(page.url()).search})`);
    await page.fill('#steps', '14063');
    // A user's click comes with the page in front (the clipboard writes only for a focused
    // document); many pages are open by now, and the write may take a while on a busy machine.
    await page.bringToFront();
    await page.click('#copy-link');
    await page.waitForFunction(() => /copied|selected/.test(document.querySelector('#copy-status').textContent), null, { timeout: 15000 }).catch(() => {});
    check(/link copied|selected below/.test(await text(page, '#copy-status')), `Copy link says what happened: "${await text(page, '#copy-status')}"`);
    const nc = await newPage(browser, consoleErrors, 'no clipboard', { viewport: { width: 1280, height: 1000 } });
    await nc.addInitScript(() => Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined, configurable: true }));
    await nc.goto(BASE + '?sigma=1.2');
    await nc.waitForFunction(() => /\d/.test(document.querySelector('#epsilon')?.textContent || ''), null, { timeout: 15000 });
    await nc.click('#copy-link');
    const fb = await nc.evaluate(() => ({ status: document.querySelector('#copy-status').textContent, box: document.querySelector('#copy-url').value, hidden: document.querySelector('#copy-url').hidden, selected: document.activeElement?.id }));
    check(!fb.hidden && fb.box.includes('sigma=1.2') && fb.selected === 'copy-url' && /Ctrl\+C/.test(fb.status), `no navigator.clipboard: the link is selected in a box (${JSON.stringify(fb)})`);
    await nc.close();
  }

  // 6b. Hardening #8: the URL writer parses parameters (a substring test took `xembed=1`
  // and `embed=10` for embed=1 and appended embed=1, so a reload lost the page chrome).
  for (const q of ['?q=0.02&xembed=1', '?q=0.02&embed=10']) {
    const pe = await open(q);
    await pe.fill('#sigma', '1.4');
    await pe.dispatchEvent('#sigma', 'change');
    const u = new URL(pe.url());
    check(u.searchParams.get('embed') === null && u.searchParams.get('sigma') === '1.4', `${q}: the rewritten URL does not claim embed=1 (${u.search})`);
    await pe.close();
  }

  // 6a. Comparison panel (issue 6): filled after the inputs rest; chart D draws.
  await page.waitForFunction(() => {
    const td = document.querySelector('#compare-table tbody tr td:nth-child(2)');
    return document.querySelectorAll('#compare-table tbody tr').length >= 8 && td && td.textContent === document.querySelector('#epsilon').textContent;
  }, null, { timeout: 15000 }).catch(() => {});
  const rows = await page.$$eval('#compare-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  check(rows[0][1] === (await text(page, '#epsilon')), `compare panel's exact route (${rows[0][1]}) = headline`);
  check(rows.some((r) => r[1] === 'n/a' && r[2].startsWith('n/a:')), 'compare panel names why a route does not apply');
  const d0 = await canvasData(page, 'chart-d');
  await page.fill('#cb-eps', '2');
  await frames(page);
  check((await canvasData(page, 'chart-d')) !== d0, 'chart D redraws from its own ε box');
  await page.fill('#cb-eps', 'x');
  check((await text(page, '#cb-error')).length > 0, 'chart D names a bad ε');
  await page.fill('#cb-eps', '1');

  // 6b. Exports: CSV, and SVG + PNG of each chart (SVG from the same drawing code).
  const download = async (pg, sel) => {
    const [d] = await Promise.all([pg.waitForEvent('download', { timeout: 15000 }), pg.click(sel)]);
    return { name: d.suggestedFilename(), body: await readFile(await d.path()) };
  };
  // The tight charts as data (#22): every series of the three charts, with the run.
  {
    await page.waitForFunction(() => !document.querySelector('figure.stale'), null, { timeout: 60000 }).catch(() => {});
    const cc = await download(page, '#export-charts-csv');
    const lines = cc.body.toString().split('\n').filter((l) => l);
    const head = lines.filter((l) => l.startsWith('#')).join(' ');
    const rows = lines.filter((l) => !l.startsWith('#'));
    const n = (p) => rows.filter((l) => l.startsWith(p)).length;
    check(cc.name === 'sgm-rdp-charts.csv' && rows[0] === 'chart,x_name,x,series,value' && n('training,steps,') >= 32 && n('profile,epsilon,') >= 120 && n('risk,fpr,') >= 10
      && /noise_multiplier = /.test(head) && /charts_for = /.test(head) && !/NaN/.test(cc.body.toString()),
      `charts CSV: ${rows.length - 1} values (training ${n('training,')}, profile ${n('profile,')}, risk ${n('risk,')}); ${head.slice(0, 120)}…`);
  }
  const csv = await download(page, '#export-csv');
  const csvLines = csv.body.toString().split('\n');
  const csvHead = csvLines.filter((l) => l.startsWith('#')).join(' ');
  check(csv.name === 'sgm-rdp.csv' && csvLines.find((l) => !l.startsWith('#')).startsWith('alpha,rdp_per_step')
    && /sample_rate = /.test(csvHead) && /noise_multiplier = 1\.3/.test(csvHead) && /epsilon_rdp = /.test(csvHead),
    `CSV export carries the run and its headline numbers (${csvHead.slice(0, 160)}…)`);
  // Headless Chromium drops an 11th download from one page within seconds, so the tight
  // charts are exported from a second page.
  const exporter = await open('');
  await exporter.waitForFunction(() => !document.querySelector('figure.stale') && document.querySelector('#training-statement').textContent.length > 0, null, { timeout: 30000 });
  for (const [pg, c] of [[page, 'a'], [page, 'b'], [page, 'c'], [page, 'd'], [exporter, 'training'], [exporter, 'profile'], [exporter, 'risk']]) {
    await pg.selectOption('#export-chart', c);
    const svg = await download(pg, '#export-svg');
    const fonts = [...svg.body.toString().matchAll(/font-size="([\d.]+)"/g)].map((m) => +m[1]);
    // The picture names its run (#22): version, inputs with units; the run's adjacency.
    const body = svg.body.toString();
    const named = /sgm-rdp \d+\.\d+\.\d+ · /.test(body) && body.includes('(noise std / ')
      && (['c', 'd'].includes(c) || (/q = [\d.e-]+, σ = [\d.]+ \(noise std \/ clipping norm\), T = \d+, δ = [\de.-]+ · Poisson sampling, add\/remove-one adjacency/.test(body)));
    check(svg.name === `sgm-rdp-chart-${c}.svg` && body.includes('<svg') && body.includes('polyline') && fonts.length > 0 && Math.min(...fonts) >= 11 - 1e-6 && named,
      `SVG export of chart ${c} names its run (text ${Math.min(...fonts).toFixed(2)}–${Math.max(...fonts).toFixed(2)} px; ${(/sgm-rdp \d[^<]*/.exec(body) || ['no caption'])[0]})`);
    const png = await download(pg, '#export-png');
    const dims = [png.body.readUInt32BE(16), png.body.readUInt32BE(20)];
    check(png.name === `sgm-rdp-chart-${c}.png` && png.body.subarray(1, 4).toString() === 'PNG' && dims[0] === 1800 && dims[1] === 1120,
      `PNG export of chart ${c} (${dims.join(' × ')} px)`);
  }
  await exporter.close();
  // The same export from a dark page at devicePixelRatio 3 and a light one at 1: one picture.
  {
    const pngOf = async (opts) => {
      const pg = await newPage(browser, consoleErrors, 'export dpr', { viewport: { width: 900, height: 900 }, acceptDownloads: true, ...opts });
      await pg.goto(BASE + '?q=0.01&sigma=1.5&steps=5000');
      await pg.waitForFunction(() => /\d/.test(document.querySelector('#epsilon')?.textContent || ''), null, { timeout: 15000 });
      await pg.selectOption('#export-chart', 'a');
      const png = await download(pg, '#export-png');
      const status = await pg.textContent('#copy-status');
      await pg.close();
      return { png, status };
    };
    const one = await pngOf({ deviceScaleFactor: 1, colorScheme: 'light' });
    const three = await pngOf({ deviceScaleFactor: 3, colorScheme: 'dark' });
    // Compare the decoded pixels (text antialiasing may differ by a shade between DPRs).
    const cmp = await page.evaluate(async ([a, b]) => {
      const px = async (b64) => {
        const img = new Image();
        img.src = 'data:image/png;base64,' + b64;
        await img.decode();
        const c = document.createElement('canvas');
        [c.width, c.height] = [img.width, img.height];
        const x = c.getContext('2d');
        x.drawImage(img, 0, 0);
        return { w: img.width, h: img.height, d: x.getImageData(0, 0, img.width, img.height).data };
      };
      const [p, q] = [await px(a), await px(b)];
      // The chart, and apart from it the footer naming the run (its bottom 44 px: one
      // line of small text, whose antialiasing differs more between the two pages).
      const foot = p.w * (p.h - 44);
      let [diff, footDiff] = [0, 0];
      for (let i = 0; i < p.d.length; i += 4) {
        if (Math.abs(p.d[i] - q.d[i]) + Math.abs(p.d[i + 1] - q.d[i + 1]) + Math.abs(p.d[i + 2] - q.d[i + 2]) > 96) {
          if (i / 4 < foot) diff++; else footDiff++;
        }
      }
      return { same: p.w === q.w && p.h === q.h, diff: diff / foot, foot: footDiff / (p.w * 44), corner: [q.d[0], q.d[1], q.d[2]] };
    }, [one.png.body.toString('base64'), three.png.body.toString('base64')]);
    check(cmp.same && cmp.diff < 0.002 && cmp.foot < 0.05 && cmp.corner.every((v) => v === 255) && /PNG, 1800 × 1120 px \(light theme\)/.test(three.status),
      `PNG export is the same picture at DPR 1 (light page) and DPR 3 (dark page): ${(cmp.diff * 100).toFixed(3)} % of the chart's pixels differ, ${(cmp.foot * 100).toFixed(2)} % of its footer's, background ${cmp.corner}; "${three.status}"`);
  }

  // 6c. Small σ never freezes the page: the RDP model, chart C and the comparison are
  // computed in the worker (longest main-thread task measured from navigation on).
  for (const [url, want] of [
    ['?q=0.5&sigma=0.001&steps=1000000000', 'over 10⁶ — no meaningful guarantee'],
    ['?sigma=0.003', null],
  ]) {
    const p = await newPage(browser, consoleErrors, 'small sigma', { viewport: { width: 1280, height: 1000 } });
    await p.addInitScript(() => {
      window.__lt = [];
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__lt.push([Math.round(e.startTime), Math.round(e.duration)]); }).observe({ type: 'longtask', buffered: true });
    });
    await p.goto(BASE + url);
    await p.waitForFunction(() => /\d/.test(document.querySelector('#epsilon')?.textContent || ''), null, { timeout: 30000 });
    await p.waitForFunction(() => document.querySelectorAll('#compare-table tbody tr').length >= 8, null, { timeout: 30000 }).catch(() => {});
    // Type σ = 0.001 too (the case that took 6.7 s on the main thread).
    await p.fill('#sigma', '0.001');
    // And solve "What do I need?" with exact RDP at σ = 0.001 (it ran on the main thread).
    await p.selectOption('#accountant', 'rdp');
    await p.fill('#target-eps', '1000000');
    await p.press('#target-eps', 'Enter');
    await p.waitForFunction(() => /^T = \d+/.test(document.querySelector('#steps-answer').textContent) || document.querySelector('#target-error').textContent, null, { timeout: 30000 }).catch(() => {});
    await p.waitForTimeout(2000);
    const solved = await p.evaluate(() => [document.querySelector('#sigma-answer').textContent, document.querySelector('#steps-answer').textContent, document.querySelector('#target-error').textContent]);
    check(/^σ = [\d.]+ \(ε = /.test(solved[0]) && /^T = \d+/.test(solved[1]), `${url}: exact-RDP calibration at σ = 0.001 answered from the worker: ${JSON.stringify(solved)}`);
    const tasks = await p.evaluate(() => window.__lt);
    const lt = Math.max(0, ...tasks.map((x) => x[1]));
    const eps = await p.textContent('#epsilon');
    // Target 50 ms (met when the machine is quiet); only a freeze of a quarter second fails:
    // other pages of this run may still be computing on the same two cores (#17).
    check(lt <= 250 && (want === null || eps === want || /\d/.test(eps)), `${url} then typing σ = 0.001 and solving: longest main-thread task ${lt.toFixed(0)} ms (fails over 250, target 50; [start, ms]: ${JSON.stringify(tasks)}), ε shown: ${eps}`);
    const rows = await p.$$eval('#compare-table tbody tr', (trs) => trs.length);
    check(rows >= 8, `${url}: the comparison table is filled from the worker (${rows} rows)`);
    await p.close();
  }

  // 7. Narrow screen.
  const narrow = await open('', 360);
  const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(overflow <= 0, `no horizontal scroll at 360 px (overflow ${overflow})`);
  await narrow.screenshot({ path: join(OUT, 'page-360.png'), fullPage: true });
  await narrow.close();
  // A phone (390 × 844): the headline on the first screen, the charts right after it.
  {
    const phone = await open('', 390);
    await phone.setViewportSize({ width: 390, height: 844 });
    // Measured once everything has arrived — the tight answer and its sentence, the charts,
    // the μ-GDP line under the risk chart — the layout a reader sees (measuring earlier made
    // the result depend on which answers had arrived: chart A moved by the μ-GDP line's 50 px).
    // Chart A comes after the three tight charts and their sentences: 3.6 screens.
    await phone.waitForFunction(() => /^2\.3820$/.test(document.querySelector('#epsilon-pld').textContent)
      && !document.querySelector('figure.stale') && /μ = /.test(document.querySelector('#gdp-summary').textContent), null, { timeout: 60000 }).catch(() => {});
    await phone.waitForTimeout(300);
    const top = await phone.evaluate(() => Object.fromEntries(['epsilon-pld', 'chart-training', 'chart-a'].map((id) => [id, Math.round(document.getElementById(id).getBoundingClientRect().top + scrollY)])));
    check(top['epsilon-pld'] < 844 && top['chart-training'] < 1.6 * 844 && top['chart-a'] < 3.6 * 844,
      `at 390 × 844: headline at ${top['epsilon-pld']} px, first chart at ${top['chart-training']} px, chart A at ${top['chart-a']} px`);
    const clipped = await phone.evaluate(() => [...document.querySelectorAll('select')].filter((s) => s.offsetParent && s.scrollWidth > s.clientWidth + 1).map((s) => s.id));
    check(clipped.length === 0, `at 390 px no menu is clipped (${JSON.stringify(clipped)})`);
    await phone.close();
  }

  // 8. Iframe mode posts its height.
  const host = await newPage(browser, consoleErrors, 'embed host');
  await host.goto(BASE + 'index.html?none');
  const height = await host.evaluate((src) => new Promise((resolve) => {
    addEventListener('message', (e) => { if (e.data && e.data.type === 'sgm-rdp-height') resolve(e.data.height); });
    const f = document.createElement('iframe');
    f.src = src;
    document.body.appendChild(f);
    setTimeout(() => resolve(-1), 10000);
  }), BASE + 'index.html?embed=1&q=0.01');
  check(height > 100, `iframe mode posts its height (${height})`);
  // The frame follows later size changes too (the comparison table fills in after the first
  // frame): the last posted height equals the page's final height.
  const follow = await host.evaluate(() => new Promise((resolve) => {
    let last = -1;
    addEventListener('message', (e) => { if (e.data && e.data.type === 'sgm-rdp-height') last = e.data.height; });
    const f = document.querySelector('iframe');
    setTimeout(() => {
      const d = f.contentDocument.documentElement;
      f.contentDocument.getElementById('sigma').value = '3';
      f.contentDocument.getElementById('sigma').dispatchEvent(new Event('input'));
      // A size change with no redraw after it (only a size observer can report it).
      // Then the last posted height is read once it has caught up (polled, up to 10 s: a
      // fixed 600 ms read 9092 against 9131 on a loaded machine, the post still on its way).
      setTimeout(() => {
        f.contentDocument.body.style.paddingBottom = '333px';
        const t0 = performance.now();
        const poll = () => {
          const now = d.scrollHeight;
          if ((last === now && performance.now() - t0 > 600) || performance.now() - t0 > 10000) {
            resolve({ last, now, chrome: getComputedStyle(f.contentDocument.querySelector('header')).display });
          } else {
            setTimeout(poll, 100);
          }
        };
        poll();
      }, 600);
    }, 500);
  }));
  check(follow.last === follow.now, `iframe mode posts its height after later size changes (${follow.last} = ${follow.now})`);
  check(follow.chrome === 'none', 'iframe mode hides the page chrome');
  await host.close();

  // 9. Benchmark: drag each slider through 100 positions; frame cost = recompute + redraw.
  const bench = await page.evaluate(async () => {
    const m = await import('./sgm-rdp-page.js');
    const raf = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const out = {};
    for (const id of ['q', 'sigma', 'steps', 'delta']) {
      const r = document.getElementById(`${id}-range`);
      const [lo, hi] = [Number(r.min), Number(r.max)];
      const costs = [];
      for (let i = 0; i < 100; i++) {
        r.value = String(lo + ((hi - lo) * i) / 99);
        r.dispatchEvent(new Event('input'));
        await raf();
        costs.push(m.lastFrameMs());
      }
      costs.sort((a, b) => a - b);
      out[id] = { p50: costs[49], p95: costs[94], max: costs[99] };
    }
    return out;
  });
  for (const [id, s] of Object.entries(bench)) {
    console.log(`bench slider ${id}: frame cost p50 ${s.p50.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms, max ${s.max.toFixed(2)} ms (goal p95 <= 16 ms)`);
  }
  await writeFile(join(OUT, 'bench.json'), JSON.stringify(bench, null, 2));
  await page.close();

  // Opened from disk (file://) the browser runs no module script: the page says why instead
  // of leaving its placeholders (issue 61 #6); served, boot.js removes that note.
  {
    const fp = await browser.newPage();
    await fp.goto('file://' + join(DIST, 'index.html'));
    await fp.waitForTimeout(3000);
    const vis = await fp.evaluate(() => {
      const e = document.getElementById('needs-http');
      return e ? getComputedStyle(e).visibility : 'absent';
    });
    check(vis === 'visible', `file:// page: the "serve it over http(s)" note shows (${vis})`);
    await fp.close();
    const served = await open('');
    check(await served.evaluate(() => !document.getElementById('needs-http')), 'served page: the file:// note is removed');
    await served.close();
  }

  // The hosted page (issue 66 #1): dist/ served under a sub-path only, as GitHub Pages serves a
  // project site — the page, its wasm, its worker and the tight ε all load from there.
  {
    const sub = await serve(DIST, { prefix: 'sgm-rdp/' });
    const ps = await newPage(browser, consoleErrors, 'sub-path', { viewport: { width: 1280, height: 1000 } });
    await ps.goto(sub.base + '?q=0.01&sigma=1&steps=1000&delta=0.00001');
    await ps.waitForFunction(() => /\d/.test(document.querySelector('#epsilon-pld')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
    const want = cli('epsilon', { q: 0.01, sigma: 1, steps: 1000, delta: 1e-5, accountant: 'pld' });
    const shown = await ps.textContent('#epsilon-pld');
    const outside = sub.hits.filter((h) => !(h + '/').startsWith('sgm-rdp/'));
    check(shown.includes(up4(want.epsilon)) && outside.length === 0,
      `dist/ served under /sgm-rdp/ only: the page, its wasm and worker load and the tight ε is the CLI's (${shown.trim()} = ${up4(want.epsilon)}); requests outside the sub-path: ${outside.length}`);
    await ps.close();
    sub.close();
  }

  check(consoleErrors.length === 0, `zero console errors${consoleErrors.length ? ': ' + consoleErrors.join(' | ') : ''}`);
  console.log(`screenshots: ${join(OUT, 'page-1280.png')}, ${join(OUT, 'page-360.png')}`);
} catch (e) {
  console.log(`FAIL e2e crashed: ${e.stack || e}`);
  t.failures++;
} finally {
  await browser.close();
  site.close();
}
console.log(t.failures ? `e2e page: ${t.failures} failure(s)` : 'e2e page: all passed');
process.exit(t.failures ? 1 : 0);

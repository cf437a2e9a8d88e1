// The worker's wasm in Node (V8, as in Chromium), without the page: the tight ε and the two
// halves of the three tight charts that the worker and its helper compute side by side (ε over
// training; the profile with the attack risk), each the best of N calls, on MNIST and the
// three large-dataset runs of issue 64's table. Several builds are measured in turn, rounds
// alternating (A/B in one run):
//
//   node benches/worker_halves.mjs dist [OTHER_DIST ...] [--reps=N] [--rounds=R]
//
// (after `make dist`; a DIST holds sgm-rdp-worker.js and sgm-rdp-worker_bg.wasm). Each line
// also prints the headline's certified bracket, so two builds' answers can be compared.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const flag = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? fallback : Number(a.slice(name.length + 3));
};
const reps = flag('reps', 2);
const rounds = flag('rounds', 2);
const dists = process.argv.slice(2).filter((x) => !x.startsWith('--'));
if (dists.length === 0 || !(reps >= 1) || !(rounds >= 1)) {
  console.error('usage: node benches/worker_halves.mjs DIST [DIST ...] [--reps=N] [--rounds=R]');
  process.exit(2);
}
const RUNS = [
  { q: 256 / 60000, sigma: 1.1, steps: 14063, delta: 1e-5 },
  { q: 1e-4, sigma: 1, steps: 1e5, delta: 1e-5 },
  { q: 1e-5, sigma: 1, steps: 1e6, delta: 1e-5 },
  { q: 2e-5, sigma: 1, steps: 5e6, delta: 1e-6 },
];
const modules = [];
for (const dist of dists) {
  const dir = resolve(dist);
  const m = await import(pathToFileURL(`${dir}/sgm-rdp-worker.js`).href);
  await m.default({ module_or_path: readFileSync(`${dir}/sgm-rdp-worker_bg.wasm`) });
  modules.push(m);
}
const best = (f) => {
  let b = Infinity;
  let r;
  for (let k = 0; k < reps; k++) {
    const t = performance.now();
    r = f();
    b = Math.min(b, performance.now() - t);
  }
  return [b, r];
};
const ms = (x) => `${x.toFixed(0)} ms`;
for (let round = 1; round <= rounds; round++) {
  dists.forEach((dist, i) => {
    const m = modules[i];
    for (const run of RUNS) {
      const [th, h] = best(() => m.epsilon({ ...run, accountant: 'pld' }));
      const [up, lo] = [h.epsilon, h.epsilonLower];
      const [tt] = best(() => m.tightCharts(run, up, lo, 'training'));
      const [tp] = best(() => m.tightCharts(run, up, lo, 'profile-risk'));
      console.log(
        `${dist} (round ${round}) q ${run.q.toPrecision(4)} σ ${run.sigma} T ${run.steps} δ ${run.delta}: ` +
          `tight ε ${ms(th)} [${lo.toFixed(6)}, ${up.toFixed(6)}], ε over training ${ms(tt)}, profile + risk ${ms(tp)}`,
      );
    }
  });
}

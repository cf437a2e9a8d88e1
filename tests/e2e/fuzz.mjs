// Standing fuzzes of the JS API and of the worker protocol (hardening round 3, "standing
// checks"), in headless Chromium. The JS API:
// random valid and invalid argument objects for every exported function of both modules —
// `sgm-rdp.js` (the page's wasm: the public synchronous API) and `sgm-rdp-worker.js` (the
// worker-only wasm: the same API over the whole engine) — including getters that throw,
// Proxies, wrong types, unknown keys and absurd values. Asserts, for every call: it returns
// or throws an `Error` (never a trap, a non-Error or a hang), a thrown message starts with the
// function's name and, when one key was made invalid, names that key; a returned ε or δ is a
// finite number ≥ 0 (δ ≤ 1) and every bracket has lower ≤ upper; afterwards each module still
// answers MNIST as the CLI does. Bounded: a fixed number of calls (SGM_RDP_FUZZ_JS calls per
// module, default 600; the tight accountant's share is kept small, each call ≤ ~1 s) and the
// seed printed (SGM_RDP_FUZZ_SEED=n replays it; =random explores).
import { DIST, serve, checker, cli, launch, newPage } from './lib.mjs';

const N = Number(process.env.SGM_RDP_FUZZ_JS || 600);
// `make test` runs a fixed seed (deterministic: CI cannot fail at random); `make fuzz` a new one.
const SEED = process.env.SGM_RDP_FUZZ_SEED === 'random' ? Date.now() % 2147483647 : Number(process.env.SGM_RDP_FUZZ_SEED || 20261124);
const site = await serve(DIST);
const t = checker();
const browser = await launch();
const errors = [];
try {
  const page = await newPage(browser, errors, 'fuzz');
  // mulberry32: a small seeded generator in the page, so a failure can be replayed.
  await page.addInitScript(() => {
    self.seeded = (seed) => {
      let s = seed >>> 0;
      return () => {
        s = (s + 0x6d2b79f5) >>> 0;
        let x = s;
        x = Math.imul(x ^ (x >>> 15), x | 1);
        x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
        return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
      };
    };
  });
  await page.goto(site.base + 'embed.html');
  console.log(`JS API fuzz: ${N} calls per module, seed ${SEED} (SGM_RDP_FUZZ_SEED=${SEED} replays it)`);
  for (const mod of ['sgm-rdp', 'sgm-rdp-worker']) {
    const r = await page.evaluate(async ({ mod, N, SEED }) => {
      const m = await import(`./${mod}.js`);
      await m.default({ module_or_path: new URL(`./${mod}_bg.wasm`, location.href) });
      const rand = self.seeded(SEED);
      const pick = (a) => a[Math.floor(rand() * a.length)];
      const logU = (lo, hi) => Math.exp(Math.log(lo) + rand() * (Math.log(hi) - Math.log(lo)));
      // Valid values, each over the documented domain (the tight accountant's on a smaller one,
      // so the fuzz stays bounded in time).
      const valid = {
        q: () => (rand() < 0.1 ? 1 : logU(1e-9, 1)),
        sigma: () => logU(0.3, 1000),
        steps: () => Math.max(1, Math.round(logU(1, 1e9))),
        delta: () => logU(1e-15, 0.1),
        epsilon: () => logU(1e-3, 100),
        orders: () => Array.from({ length: 1 + Math.floor(rand() * 5) }, () => 1 + logU(1e-3, 1e5)),
        conversion: () => pick(['improved', 'classic']),
      };
      const bad = [NaN, Infinity, -Infinity, -1, 0, 1e300, -1e-300, '0.01', null, true, [], {}, 'x'.repeat(200), 2 ** 53 + 2];
      const FNS = {
        rdp: ['q', 'sigma', 'orders', 'steps'],
        epsilon: ['q', 'sigma', 'steps', 'delta', 'conversion', 'orders', 'accountant'],
        delta: ['q', 'sigma', 'steps', 'epsilon', 'conversion', 'orders', 'accountant'],
        calibrateSigma: ['q', 'steps', 'delta', 'epsilon', 'accountant'],
        calibrateSteps: ['q', 'sigma', 'delta', 'epsilon', 'accountant'],
        bounds: ['q', 'sigma', 'orders'],
        compare: ['q', 'sigma', 'steps', 'delta'],
        profile: ['q', 'sigma', 'steps'],
        attackRisk: ['q', 'sigma', 'steps'],
      };
      const REQUIRED = { rdp: ['q', 'sigma'], bounds: ['q', 'sigma'], epsilon: ['q', 'sigma', 'steps', 'delta'], delta: ['q', 'sigma', 'steps', 'epsilon'],
        calibrateSigma: ['q', 'steps', 'delta', 'epsilon'], calibrateSteps: ['q', 'sigma', 'delta', 'epsilon'], compare: ['q', 'sigma', 'steps', 'delta'],
        profile: ['q', 'sigma', 'steps'], attackRisk: ['q', 'sigma', 'steps'] };
      const problems = [];
      const counts = { returned: 0, threw: 0, tight: 0 };
      const finiteNonNeg = (x) => typeof x === 'number' && Number.isFinite(x) && x >= 0;
      // Every ε/δ-like number in a result, and each (lower, upper) pair.
      const checkResult = (fn, res) => {
        const out = [];
        // `key` is the name the number sits under (an array's elements: the array's).
        const walk = (v, path, key) => {
          if (typeof v === 'number') {
            if (Number.isNaN(v)) out.push(`${path} is NaN`);
            if (/^(epsilon|delta)/i.test(key) && !(v >= 0)) out.push(`${path} = ${v} < 0`);
            if (/^delta/i.test(key) && v > 1 + 1e-12) out.push(`${path} = ${v} > 1`);
          } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`, key));
          else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`, k);
        };
        walk(res, fn, fn);
        for (const [lo, up] of [['epsilonLower', 'epsilon'], ['deltaLower', 'delta'], ['epsilonPldLower', 'epsilonPld'], ['deltaPldLower', 'deltaPld']]) {
          if (res && typeof res[lo] === 'number' && typeof res[up] === 'number' && !(res[lo] <= res[up] * (1 + 1e-12))) out.push(`${fn}: ${lo} ${res[lo]} > ${up} ${res[up]}`);
        }
        if (fn === 'profile' && Array.isArray(res)) {
          for (const p of res) if (!(p.delta && finiteNonNeg(p.delta.lower) && p.delta.lower <= p.delta.upper * (1 + 1e-12) && p.delta.upper <= 1 + 1e-12)) out.push(`profile point ${JSON.stringify(p)}`);
        }
        return out;
      };
      const keys = Object.keys(FNS);
      for (let i = 0; i < N; i++) {
        const fn = keys[i % keys.length];
        const args = {};
        for (const k of REQUIRED[fn]) args[k] = valid[k]();
        for (const k of FNS[fn]) if (!REQUIRED[fn].includes(k) && k in valid && rand() < 0.3) args[k] = valid[k]();
        // The tight accountant (and the heavy calls that always use it) on a bounded share.
        const heavy = ['profile', 'attackRisk'].includes(fn);
        if (FNS[fn].includes('accountant') && rand() < 0.08) args.accountant = pick(['pld', 'both']);
        if (heavy || args.accountant) {
          if (rand() < 0.5 && !heavy) delete args.accountant;
          else { counts.tight++; args.steps = Math.min(args.steps ?? 1, Math.round(logU(1, 1e5))); }
        }
        if (fn === 'profile') args.epsilons = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => logU(1e-3, 50));
        if (fn.startsWith('calibrate') && !args.accountant) args.accountant = 'rdp';
        // One mutation, or none.
        let mutated = null;
        const roll = rand();
        let arg = args;
        if (roll < 0.35) {
          mutated = pick(Object.keys(args));
          args[mutated] = pick(bad);
        } else if (roll < 0.42) {
          mutated = pick(REQUIRED[fn]);
          delete args[mutated];
        } else if (roll < 0.47) {
          args['noise' + Math.floor(rand() * 10)] = 1;
          mutated = 'noise';
        } else if (roll < 0.52) {
          const k = pick(Object.keys(args));
          Object.defineProperty(args, k, { get() { throw new Error('getter boom'); }, enumerable: true });
          mutated = 'getter boom';
        } else if (roll < 0.55) {
          arg = new Proxy(args, { ownKeys() { throw new Error('proxy boom'); } });
          mutated = 'proxy';
        } else if (roll < 0.57) {
          arg = pick([null, undefined, 42, 'q=0.1', [args]]);
          mutated = 'object';
        }
        const desc = () => { try { return JSON.stringify(arg, (k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)); } catch { return String(mutated); } };
        let res;
        try {
          res = m[fn](arg);
        } catch (e) {
          counts.threw++;
          if (!(e instanceof Error)) { problems.push(`${fn}(${desc()}) threw a non-Error: ${String(e)}`); continue; }
          if (!e.message.startsWith(`${fn}: `) || e.message.length < fn.length + 4) problems.push(`${fn}(${desc()}): message does not name the function: "${e.message}"`);
          const aliases = { q: /\bq\b|sample_rate/, sigma: /sigma|noise_multiplier/, noise: /noise\d/ };
          if (mutated && mutated in args && !['getter boom', 'proxy', 'object'].includes(mutated)) {
            const re = aliases[mutated] || new RegExp(mutated);
            if (!re.test(e.message) && !/budget|PLD accountant|unreachable|target|no sigma|reaches|even one step|exceeds|too wide|at most/i.test(e.message)) problems.push(`${fn}(${desc()}): error does not name '${mutated}': "${e.message}"`);
          }
          if (mutated === 'getter boom' && !/getter boom/.test(e.message)) problems.push(`${fn}: a throwing getter's message is lost: "${e.message}"`);
          continue;
        }
        counts.returned++;
        if (mutated && ['proxy', 'object', 'getter boom', 'noise'].includes(mutated)) problems.push(`${fn}(${desc()}) returned despite ${mutated}`);
        for (const p of checkResult(fn, res)) problems.push(`${p} for ${desc()}`);
      }
      // Found by this fuzz: the tight calibrations returned alpha = NaN (now null: no order).
      for (const [fn, p] of [['calibrateSigma', { q: 0.0328, steps: 125, delta: 4.7e-10, epsilon: 3.785, accountant: 'pld' }],
        ['calibrateSteps', { q: 0.01, sigma: 1.1, delta: 1e-5, epsilon: 1, accountant: 'pld' }]]) {
        const res = m[fn](p);
        if (res.alpha !== null) problems.push(`${fn}(accountant: "pld").alpha is ${res.alpha}, not null`);
        for (const x of checkResult(fn, res)) problems.push(x);
      }
      const after = m.epsilon({ q: 256 / 60000, sigma: 1.1, steps: 14063, delta: 1e-5, accountant: 'pld' });
      return { problems, counts, after };
    }, { mod, N, SEED });
    console.log(`  ${mod}.js: ${r.counts.returned} returned, ${r.counts.threw} threw, ${r.counts.tight} on the tight accountant`);
    t.check(r.problems.length === 0, `${mod}.js: ${N} fuzzed calls, every one returned a valid answer or threw an Error naming the function and the key${r.problems.length ? `: ${r.problems.length} problems, first: ${r.problems.slice(0, 5).join(' || ')}` : ''}`);
    const want = cli('epsilon', { q: 256 / 60000, sigma: 1.1, steps: 14063, delta: 1e-5, accountant: 'pld' });
    t.check(Math.abs(r.after.epsilon - want.epsilon) <= 1e-9 * want.epsilon, `${mod}.js still answers MNIST afterwards (${r.after.epsilon} = CLI ${want.epsilon})`);
  }
  // The worker protocol (pld-worker.js), fuzzed: several clients post valid requests with
  // generations out of order and duplicated, malformed messages of every shape, calibrations
  // and floods; then each posts one last valid request. Asserts: every client gets an answer
  // for its last request (none silenced); after it, nothing older arrives for that client (the
  // newest wins); every answer is for the inputs of the generation it carries (compared with
  // the worker-only wasm called directly: no stale or borrowed number).
  {
    const r = await page.evaluate(async ({ SEED }) => {
      const rand = self.seeded(SEED ^ 0x5bd1e995);
      const pick = (a) => a[Math.floor(rand() * a.length)];
      const m = await import('./sgm-rdp-worker.js');
      await m.default({ module_or_path: new URL('./sgm-rdp-worker_bg.wasm', location.href) });
      const w = new Worker('pld-worker.js', { type: 'module' });
      const got = [];
      w.onmessage = ({ data }) => got.push({ ...data, at: performance.now() });
      const clients = ['a', 'b', 'c', 'd'];
      const sent = new Map(); // `${client}|${gen}` → inputs of that valid headline request
      const runFor = () => ({ q: pick([0.01, 0.001, 0.05]), sigma: pick([0.8, 1, 1.5, 3]), steps: pick([10, 100, 1000]), delta: pick([1e-5, 1e-6]) });
      const junk = () => pick([null, 7, 'x', [], { client: 5, gen: 1 }, { gen: NaN }, { gen: -1, q: 0.1, sigma: 1, steps: 10, delta: 1e-5 },
        { gen: 1, q: '0.01', sigma: 1, steps: 10, delta: 1e-5 }, { gen: 2 ** 60, q: 0.1, sigma: 1, steps: 10, delta: 1e-5 }, { kind: 'calibrate', gen: 1 },
        { gen: 3, q: Infinity, sigma: 1, steps: 10, delta: 1e-5 }, { gen: 3, q: 0.1, sigma: 1, steps: 10, delta: 1e-5, epochs: 'x' }]);
      let posted = 0;
      const maxGen = new Map();
      for (let i = 0; i < 120; i++) {
        const c = pick(clients);
        const roll = rand();
        if (roll < 0.25) {
          w.postMessage(junk());
        } else if (roll < 0.32) {
          w.postMessage({ client: c, gen: Math.floor(rand() * 50), kind: 'calibrate', which: pick(['sigma', 'steps']), accountant: 'pld', q: 0.01, sigma: 1, steps: 100, delta: 1e-5, target: pick([1, 2, 5]) });
        } else {
          // Generations out of order and sometimes repeated (the same gen, other inputs).
          const gen = Math.floor(rand() * 60);
          const run = runFor();
          const key = `${c}|${gen}`;
          if (!sent.has(key)) sent.set(key, []);
          sent.get(key).push(run);
          w.postMessage({ client: c, gen, charts: false, ...run });
          maxGen.set(c, Math.max(maxGen.get(c) ?? -1, gen));
        }
        posted++;
        if (rand() < 0.1) await new Promise((res) => setTimeout(res, Math.floor(rand() * 20)));
      }
      // The last request of each client: a generation above all it sent, a fresh run.
      const last = new Map();
      for (const c of clients) {
        const gen = (maxGen.get(c) ?? 0) + 100;
        const run = runFor();
        sent.set(`${c}|${gen}`, [run]);
        last.set(c, gen);
        w.postMessage({ client: c, gen, charts: false, ...run });
      }
      // Another protocol version is refused by name (ui::protocol::VERSION = 1).
      w.postMessage({ v: 2, client: 'other-version', gen: 1, q: 0.01, sigma: 1, steps: 10, delta: 1e-5 });
      const deadline = performance.now() + 30000;
      const answered = () => clients.every((c) => got.some((g) => g.client === c && g.gen === last.get(c) && (g.kind === 'headline' || g.kind === 'error')));
      while (!answered() && performance.now() < deadline) await new Promise((res) => setTimeout(res, 50));
      await new Promise((res) => setTimeout(res, 500)); // anything late would show now
      const problems = [];
      for (const c of clients) {
        const fin = got.find((g) => g.client === c && g.gen === last.get(c) && (g.kind === 'headline' || g.kind === 'error'));
        if (!fin) { problems.push(`client ${c} got no answer for its last request (gen ${last.get(c)})`); continue; }
        const later = got.filter((g) => g.client === c && g.at > fin.at && (g.kind === 'headline' || g.kind === 'error'));
        if (later.length) problems.push(`client ${c}: ${later.length} answer(s) after its newest (gens ${later.map((g) => g.gen).join(',')})`);
      }
      const refused = got.find((g) => g.client === 'other-version');
      if (!refused || refused.kind !== 'error' || !/protocol version 2/.test(refused.message)) problems.push(`a request of protocol version 2 was not refused by name: ${JSON.stringify(refused)}`);
      const unversioned = got.filter((g) => g.v !== 1);
      if (unversioned.length) problems.push(`${unversioned.length} answer(s) without the protocol's version`);
      for (const g of got.filter((g) => g.kind === 'headline')) {
        const runs = sent.get(`${g.client}|${g.gen}`);
        if (!runs) { problems.push(`an answer for a generation never sent: ${g.client}|${g.gen}`); continue; }
        // (A repeated generation may carry either of its runs; the answer must be one of them.)
        const ok = runs.some((run) => {
          const e = m.epsilon({ ...run, accountant: 'pld' });
          return Math.abs(e.epsilon - g.epsilon) <= 1e-12 * e.epsilon && Math.abs(e.epsilonLower - g.epsilonLower) <= 1e-12 * e.epsilon;
        });
        if (!ok) problems.push(`${g.client}|${g.gen}: epsilon ${g.epsilon} is not the answer for the inputs of its generation`);
      }
      w.terminate();
      return { problems, posted, answers: got.length, headlines: got.filter((g) => g.kind === 'headline').length, errors: got.filter((g) => g.kind === 'error').length };
    }, { SEED });
    console.log(`  worker protocol: ${r.posted} messages, ${r.answers} answers (${r.headlines} headlines, ${r.errors} errors)`);
    t.check(r.problems.length === 0, `worker-protocol fuzz (seed ${SEED}): every client answered for its newest request, nothing older after it, every answer for its own generation's inputs${r.problems.length ? ': ' + r.problems.slice(0, 5).join(' || ') : ''}`);
  }
  t.check(errors.length === 0, `zero console errors${errors.length ? ': ' + errors.join(' | ') : ''}`);
} catch (e) {
  console.log(`FAIL fuzz crashed: ${e.stack || e}`);
  t.failures++;
} finally {
  await browser.close();
  site.close();
}
console.log(t.failures === 0 ? 'fuzz: all checks passed' : `fuzz: ${t.failures} check(s) FAILED`);
process.exit(t.failures === 0 ? 0 : 1);

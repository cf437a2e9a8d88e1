// The Web Worker shared by the page and every <sgm-rdp-calculator> on it: the worker-only wasm
// (sgm-rdp-worker_bg.wasm: the whole engine, ladder included, no page; scripts/wasm.sh),
// answering the heavy questions (the tight PLD accountant, ε over training, the privacy
// profile, attack risk) off the main thread so the page never freezes. A module worker
// from the page's own origin, so the strict CSP (default-src 'self') allows it without
// blob: or inline code.
//
// Protocol (ui::protocol, version 1): a client posts {v?, client?, gen, q, sigma, steps, delta, charts?, epochs?,
// sampling?, groupSize?, adjacency?, datasetSize?, batchSize?, maxBatch?, schemeError?, library?,
// loaderN?, loaderB?, loaderE?}; the worker answers first {client, gen, kind: "headline", epsilon,
// epsilonLower, shuffled?, allocation?, user?, scheme?} (or {…, kind: "error", message}; with groupSize
// K > 1, `user` is the user-level bracket {epsilon, epsilonLower, groupSize} or {error}; with epochs, the
// band for shuffled batches or, with sampling "random-allocation", the bracket for random
// allocation: {epsilon, epsilonLower, epochs, stepsPerEpoch} or {error, …}; with sampling
// "truncated-poisson" (datasetSize, maxBatch) or "fixed-size" (datasetSize, batchSize),
// `scheme` is {epsilon, epsilonLower (null: RDP only), sampling} or {error, sampling}, and a
// schemeError the page sends is returned as that error), then, unless charts === false, {client, gen, kind: "charts",
// training, profile, risk} (or "charts-error"). Requests are handled newest-first per
// client: a request that is no longer its client's newest when its turn comes is skipped.
// Before starting any computation a handler yields to the task queue once, so messages
// already posted get delivered and mark older ones superseded (hardening round 3, #3: 40
// queued requests from one client were all computed, in order); calibrations are likewise
// newest-only per client and kind ("sigma" or "steps").
// Answers are cached by run, so many widgets showing the same run cost one computation.
// A calibration ({kind: "calibrate", which, accountant: "pld"|"rdp", conversion, q, sigma,
// steps, delta, target}) is answered with {kind: "calibrated", which, accountant, value, epsilon} or {kind: "calibrate-error", which, message}.
// The page's exact-RDP model at small σ ({kind: "rdp", client, gen, q, sigma, steps, delta,
// conversion, omega}) is answered with {kind: "rdp", gen, rdp, value, alpha, …, compare}
// (or {…, error}), then {kind: "chart-c", sigma, chartC} when chart C's σ is new.
import init, { epsilon, calibrateSigma, calibrateSteps, compare, heavyModel, heavyChartC, batchLine, command, tightCharts } from './sgm-rdp-worker.js';

const ready = init({ module_or_path: new URL('./sgm-rdp-worker_bg.wasm', import.meta.url) });
const newest = new Map();
const newestCalibration = new Map();
// One turn of the task queue: messages posted meanwhile are delivered first.
const yieldToQueue = () => new Promise((r) => setTimeout(r, 0));
// The protocol's version (ui::protocol::VERSION): a request may carry it as `v` and must
// then match; every answer carries it.
const VERSION = 1;
const CACHE = 64;
// The rest after the charts before the target's solve and μ-GDP (ms).
const AFTER_CHARTS_MS = 150;
const headlines = new Map();
const charts = new Map();
const gdps = new Map();
const targets = new Map();
const libraries = new Map();

// Every answer, with the protocol's version.
const reply = (answer) => self.postMessage({ v: VERSION, ...answer });

const messageOf = (err) => String(err && err.message ? err.message : err);

// A small LRU: the newest 64 runs. `recall` moves a hit to the newest end; `remember`
// stores an answer ({ok} or {err}) and drops the oldest beyond 64.
function recall(map, key) {
  if (!map.has(key)) return undefined;
  const v = map.get(key);
  map.delete(key);
  map.set(key, v);
  return v;
}
function remember(map, key, v) {
  map.set(key, v);
  if (map.size > CACHE) map.delete(map.keys().next().value);
  return v;
}
function cached(map, key, compute) {
  const hit = recall(map, key);
  if (hit) return hit;
  try {
    return remember(map, key, { ok: compute() });
  } catch (err) {
    return remember(map, key, { err: messageOf(err) });
  }
}

// Each chart stands alone (hardening round 3, #11): one that fails is reported in
// `errors` under its name and the others are still drawn; only when all three fail is
// the whole answer an error. `charted(errors)(name, f)` is f() or, when it throws,
// undefined with the reason in errors[name].
const charted = (errors) => (name, f) => {
  try {
    return f();
  } catch (err) {
    errors[name] = messageOf(err);
    return undefined;
  }
};

// The three tight charts of a Poisson run of one example: one call into the engine, which
// decides the grids (16 checkpoints, the profile up to 2.5 × the largest ε shown, the attack
// rates) and joins the headline's tighter bracket at the run's last step. Each chart stands
// alone (hardening round 3, #11): one that fails is reported in `errors` under its name and
// the others are still drawn; only when all three fail is the whole answer an error.
async function chartsFor(p, d, headline) {
  const run = { ...p, delta: d };
  const [up, lo] = headline ? [headline.epsilon, headline.epsilonLower] : [NaN, NaN];
  // The profile and the risk on the helper (another core) while ε over training is
  // computed here; without a helper (or the headline the profile's range needs), in turn.
  const side = helper && headline ? askHelper({ run, up, lo }) : null;
  let c;
  if (side) {
    const a = tightCharts(run, up, lo, 'training');
    const b = (await side) ?? tightCharts(run, up, lo, 'profile-risk');
    c = { training: a.training, profile: b.profile, risk: b.risk, errors: { ...a.errors, ...b.errors } };
  } else {
    c = tightCharts(run, up, lo, 'all');
  }
  if (!c.training && !c.profile && !c.risk) throw new Error(c.errors.training);
  return c;
}

// The helper: this same script as a nested worker (`?helper`), answering only
// {id, run, up, lo} with the profile and the risk ({id, result}, result null when it
// failed). Where a worker cannot start one (a cross-origin script from a widget's blob:
// worker, older browsers) there is none and the charts are computed in turn.
const isHelper = new URL(import.meta.url).searchParams.has('helper');
let helper = null;
let helperSeq = 0;
const helping = new Map();
if (!isHelper && typeof Worker !== 'undefined') {
  try {
    helper = new Worker(new URL('./pld-worker.js?helper', import.meta.url), { type: 'module' });
    helper.onmessage = ({ data }) => {
      const done = helping.get(data.id);
      helping.delete(data.id);
      if (done) done(data.result ?? null);
    };
    helper.onerror = () => {
      helper = null;
      for (const done of helping.values()) done(null);
      helping.clear();
    };
  } catch {
    helper = null;
  }
}
function askHelper(req) {
  return new Promise((done) => {
    const id = ++helperSeq;
    helping.set(id, done);
    helper.postMessage({ id, ...req });
  });
}
async function help({ data }) {
  await ready;
  let result = null;
  try {
    result = tightCharts(data.run, data.up, data.lo, 'profile-risk');
  } catch {
    result = null;
  }
  self.postMessage({ id: data.id, result });
}

// A run the command line names by a scheme (the page's batching control, its examples-per-user
// field, a widget's attributes): random allocation (t = ⌊1/q⌋ steps per epoch, E epochs) or
// user-level Poisson sampling (K examples per user). `line(n)`: its batch line at n epochs
// (allocation) or n steps (user-level); `flags`: its command-line flags for profile, gdp
// and calibrate; `checkpoints`: the n of ε over training; `steps(n)`: n in steps.
function schemeOf(data) {
  const t = Math.max(1, Math.floor(1 / data.q));
  const { sigma, delta } = data;
  if (data.sampling === 'random-allocation') {
    const n = data.epochs;
    return {
      key: ['random-allocation', t, n, sigma, delta],
      line: (e) => ({ sigma, delta, sampling: 'random-allocation', steps_per_epoch: t, epochs: e }),
      flags: ['--sampling', 'random-allocation', '--steps-per-epoch', String(t), '--epochs', String(n), '--sigma', String(sigma)],
      checkpoints: [...new Set(Array.from({ length: 12 }, (_, i) => Math.max(1, Math.round(n ** ((i + 1) / 12)))))],
      steps: (e) => e * t,
      // The most whole epochs, in steps (the command line's calibrate).
      most: (target) => JSON.parse(command(['calibrate', '--sampling', 'random-allocation', '--steps-per-epoch', String(t), '--sigma', String(sigma),
        '--delta', String(delta), '--epsilon', String(target), '--target', 'steps', '--json'])).epochs * t,
      answer: (a) => ({ epsilon: a.epsilon, epsilonLower: a.epsilon_lower, epochs: n, stepsPerEpoch: t }),
    };
  }
  // Truncated Poisson (rate q over N examples, batches capped) and fixed-size batches (B of
  // N without replacement, replace-one, RDP only): the sizes come from the page's Rust side.
  if (data.sampling === 'truncated-poisson' || data.sampling === 'fixed-size') {
    const T = data.steps;
    const fixed = data.sampling === 'fixed-size';
    const sizes = fixed
      ? { dataset_size: data.datasetSize, batch_size: data.batchSize, adjacency: 'replace-one' }
      : { q: data.q, dataset_size: data.datasetSize, max_batch: data.maxBatch, accountant: 'pld' };
    const sizeFlags = fixed
      ? ['--dataset-size', String(data.datasetSize), '--batch-size', String(data.batchSize), '--adjacency', 'replace-one']
      : ['--q', String(data.q), '--dataset-size', String(data.datasetSize), '--max-batch', String(data.maxBatch)];
    return {
      key: [data.sampling, data.q, data.datasetSize, data.batchSize, data.maxBatch, sigma, T, delta],
      line: (n) => ({ sigma, delta, steps: n, sampling: data.sampling, ...sizes }),
      flags: ['--sampling', data.sampling, ...sizeFlags, '--sigma', String(sigma)],
      stepFlags: ['--steps', String(T)],
      checkpoints: [...new Set(Array.from({ length: 12 }, (_, i) => Math.max(1, Math.round(T ** ((i + 1) / 12)))))],
      steps: (n) => n,
      most: (target) => JSON.parse(command(['calibrate', '--sampling', data.sampling, ...sizeFlags, '--sigma', String(sigma),
        ...(fixed ? [] : ['--accountant', 'pld']), '--delta', String(delta), '--epsilon', String(target), '--target', 'steps', '--json'])).steps,
      // Fixed-size batches: an RDP upper bound only (no lower end, no profile).
      noProfile: fixed && 'the privacy profile and attack risk need a privacy-loss distribution; fixed-size batches have an RDP bound only (Wang, Balle, Kasiviswanathan)',
      answer: (a) => ({ epsilon: a.epsilon, epsilonLower: a.epsilon_lower ?? null, sampling: data.sampling }),
    };
  }
  if (data.sampling === 'shuffled') {
    // Shuffled batches: the band of `--sampling shuffle` (t = ⌊1/q⌋ per epoch, E epochs).
    const n = data.epochs;
    return {
      key: ['shuffle', t, n, sigma, delta, data.adjacency ?? 'add-remove'],
      line: (e) => ({ sigma, delta, sampling: 'shuffle', steps_per_epoch: t, epochs: e, ...(data.adjacency === 'replace-one' ? { adjacency: 'replace-one' } : {}) }),
      flags: ['--sampling', 'shuffle', '--steps-per-epoch', String(t), '--epochs', String(n), '--sigma', String(sigma), ...(data.adjacency === 'replace-one' ? ['--adjacency', 'replace-one'] : [])],
      checkpoints: [...new Set(Array.from({ length: 12 }, (_, i) => Math.max(1, Math.round(n ** ((i + 1) / 12)))))],
      steps: (e) => e * t,
      most: (target) => JSON.parse(command(['calibrate', '--sampling', 'shuffle', '--steps-per-epoch', String(t), '--sigma', String(sigma),
        ...(data.adjacency === 'replace-one' ? ['--adjacency', 'replace-one'] : []),
        '--delta', String(delta), '--epsilon', String(target), '--target', 'steps', '--json'])).steps,
      answer: (a) => ({ epsilon: a.epsilon, epsilonLower: a.epsilon_lower, epochs: n, stepsPerEpoch: t }),
    };
  }
  const k = data.groupSize ?? 1;
  const adj = data.adjacency ?? 'add-remove';
  const T = data.steps;
  return {
    key: ['user', k, adj, data.q, sigma, T, delta],
    line: (n) => ({ q: data.q, sigma, delta, steps: n, group_size: k, adjacency: adj, accountant: 'pld' }),
    flags: ['--q', String(data.q), '--sigma', String(sigma), '--group-size', String(k), '--adjacency', adj],
    stepFlags: ['--steps', String(T)],
    checkpoints: [...new Set(Array.from({ length: 12 }, (_, i) => Math.max(1, Math.round(T ** ((i + 1) / 12)))))],
    steps: (n) => n,
    most: (target) => JSON.parse(command(['calibrate', '--q', String(data.q), '--sigma', String(sigma), '--group-size', String(k), '--adjacency', adj, '--accountant', 'pld',
      '--delta', String(delta), '--epsilon', String(target), '--target', 'steps', '--json'])).steps,
    answer: (a) => ({ epsilon: a.epsilon, epsilonLower: a.epsilon_lower, groupSize: k, adjacency: adj }),
  };
}

// A scheme's charts: ε over training (12 checkpoints, each the command line's batch line),
// its privacy profile and the attack-risk curve (the command line's `profile` for it), in
// chartsFor's shape; no exact-RDP series (Poisson sampling's example-level RDP does not
// bound these runs).
function schemeCharts(sc, headline) {
  const errors = {};
  const part = charted(errors);
  const training = part('training', () => {
    const tr = { steps: [], pldUpper: [], pldLower: [], rdp: [] };
    for (const n of sc.checkpoints) {
      const a = JSON.parse(batchLine(JSON.stringify(sc.line(n))));
      if (a.error !== undefined) throw new Error(a.error);
      tr.steps.push(sc.steps(n));
      tr.pldUpper.push(a.epsilon);
      tr.pldLower.push(a.epsilon_lower);
    }
    return tr;
  });
  const top = Math.max(...(training ? training.pldUpper : [headline ? headline.epsilon : 1]), 1e-3) * 2.5;
  const p = part('profile', () => {
    if (sc.noProfile) throw new Error(sc.noProfile);
    return JSON.parse(command(['profile', ...sc.flags, ...(sc.stepFlags || []), '--epsilon', String(top), '--json']));
  });
  if (p === undefined) errors.risk = errors.profile;
  const prof = p && p.profile.map((pt) => ({ epsilon: pt.epsilon, delta: pt.delta }));
  const risk = p && { curve: p.attack_curve, fpr: p.attack.map((r) => r.fpr), tpr: p.attack.map((r) => r.tpr_max) };
  if (!training && !prof) throw new Error(errors.training);
  return { training, profile: prof, risk, errors };
}

const chartsC = new Map();

// A batch line's answer (a scheme's headline), cached: {ok: answer} or {err: reason}.
function lineAnswer(obj) {
  const line = JSON.stringify(obj);
  return cached(headlines, line, () => {
    const a = JSON.parse(batchLine(line));
    if (a.error !== undefined) throw new Error(a.error);
    return a;
  });
}

// Every message is checked before it touches the worker's state: a malformed one is
// answered with {kind: "error", message} for its client and changes nothing else (a NaN
// generation used to silence its client for good; a null message threw in the worker).
function invalid(data) {
  if (data === null || typeof data !== 'object') return 'a message must be an object';
  if (data.v !== undefined && data.v !== VERSION) return `protocol version ${String(data.v).slice(0, 20)} is not this worker's (${VERSION}): reload the page`;
  if (data.client !== undefined && typeof data.client !== 'string') return "'client' must be a string";
  if (!Number.isSafeInteger(data.gen) || data.gen < 0) return `'gen' must be a whole number >= 0, got ${String(data.gen).slice(0, 40)}`;
  const need = data.kind === 'calibrate' ? ['q', 'delta', 'target'] : ['q', 'sigma', 'steps', 'delta'];
  for (const k of need) {
    if (typeof data[k] !== 'number' || !Number.isFinite(data[k])) return `'${k}' must be a finite number, got ${typeof data[k] === 'string' ? `the string '${data[k].slice(0, 40)}'` : String(data[k]).slice(0, 40)}`;
  }
  if (data.epochs !== undefined && (typeof data.epochs !== 'number' || !Number.isFinite(data.epochs))) return "'epochs' must be a finite number";
  if (data.sampling !== undefined && !['poisson', 'shuffled', 'random-allocation', 'truncated-poisson', 'fixed-size'].includes(data.sampling)) return "'sampling' must be 'poisson', 'shuffled', 'random-allocation', 'truncated-poisson' or 'fixed-size'";
  for (const k of ['datasetSize', 'batchSize', 'maxBatch']) {
    if (data[k] !== undefined && !(Number.isSafeInteger(data[k]) && data[k] >= 1)) return `'${k}' must be a whole number >= 1`;
  }
  if (data.schemeError !== undefined && typeof data.schemeError !== 'string') return "'schemeError' must be a string";
  for (const k of ['loaderN', 'loaderB', 'loaderE']) {
    if (data[k] !== undefined && (typeof data[k] !== 'number' || !Number.isFinite(data[k]))) return `'${k}' must be a finite number`;
  }
  if (data.groupSize !== undefined && !(Number.isInteger(data.groupSize) && data.groupSize >= 1 && data.groupSize <= 256)) return "'groupSize' must be a whole number in [1, 256]";
  if (data.adjacency !== undefined && !['add-remove', 'replace-one'].includes(data.adjacency)) return "'adjacency' must be 'add-remove' or 'replace-one'";
  if (data.target !== undefined && (typeof data.target !== 'number' || !(data.target > 0) || !Number.isFinite(data.target))) return "'target' must be a finite number > 0";
  return null;
}

// The same for answers computed asynchronously (the charts: the helper's half is awaited).
async function cachedAsync(map, key, compute) {
  const hit = recall(map, key);
  if (hit) return hit;
  try {
    return remember(map, key, { ok: await compute() });
  } catch (err) {
    return remember(map, key, { err: messageOf(err) });
  }
}

self.onmessage = isHelper ? help : async ({ data }) => {
  const bad = invalid(data);
  if (bad !== null) {
    const client = data !== null && typeof data === 'object' && typeof data.client === 'string' ? data.client : 'page';
    const gen = data !== null && typeof data === 'object' && Number.isSafeInteger(data.gen) ? data.gen : -1;
    reply({ client, gen, kind: data && data.kind === 'calibrate' ? 'calibrate-error' : 'error', which: data && data.which, message: `worker: ${bad}` });
    return;
  }
  const client = data.client ?? 'page';
  if (data.kind === 'rdp') {
    newest.set(client, Math.max(newest.get(client) ?? -1, data.gen));
    await ready;
    await yieldToQueue();
    if (data.gen !== newest.get(client)) return;
    const run = { q: data.q, sigma: data.sigma, steps: data.steps, delta: data.delta };
    let m = {};
    if (data.model) {
      try {
        m = heavyModel({ ...run, conversion: data.conversion }, data.omega);
      } catch (err) {
        reply({ client, gen: data.gen, kind: 'rdp', error: messageOf(err) });
        return;
      }
    }
    // The comparison table's rows: route, ε (null: the route does not apply), note; the
    // page words them.
    let rows = null;
    if (data.compare !== false) try {
      rows = compare(run).map((r) => [r.name, r.epsilon, r.note ?? '']);
    } catch {
      rows = null;
    }
    reply({ client, gen: data.gen, kind: 'rdp', ...m, compare: rows });
    await new Promise((r) => setTimeout(r, 0));
    if (data.gen !== newest.get(client) || data.chartC === false) return;
    const c = cached(chartsC, data.sigma, () => Array.from(heavyChartC(data.sigma)));
    if (c.ok) reply({ client, kind: 'chart-c', sigma: data.sigma, chartC: c.ok });
    return;
  }
  if (data.kind === 'calibrate') {
    // "What do I need?" with the tight accountant: {kind, which: "sigma"|"steps", …}.
    const slot = `${client}|${data.which}`;
    newestCalibration.set(slot, Math.max(newestCalibration.get(slot) ?? -1, data.gen));
    await ready;
    await yieldToQueue();
    if (data.gen !== newestCalibration.get(slot)) return;
    try {
      // accountant 'pld' (certified tight ε) or 'rdp' (exact RDP with data.conversion).
      const k = data.groupSize ?? 1;
      // An attack-risk target (which "risk-sigma" | "risk-steps"): TPR ≤ target at FPR fpr,
      // the command line's calibrate --tpr --fpr (one example per user).
      if (data.which === 'risk-sigma' || data.which === 'risk-steps') {
        if (k > 1 || (data.adjacency ?? 'add-remove') !== 'add-remove') throw new Error('attack-risk targets are calibrated for one example per user under add/remove adjacency');
        if (!(typeof data.fpr === 'number' && data.fpr > 0 && data.fpr < 1)) throw new Error("'fpr' must be a number in (0, 1)");
        const sigmaOf = data.which === 'risk-sigma';
        const r = JSON.parse(command(['calibrate', '--q', String(data.q), ...(sigmaOf ? ['--steps', String(data.steps)] : ['--sigma', String(data.sigma)]),
          '--tpr', String(data.target), '--fpr', String(data.fpr), '--json']));
        reply({ client, gen: data.gen, kind: 'calibrated', which: data.which, accountant: 'pld', value: sigmaOf ? r.sigma : r.steps, epsilon: r.tpr, fpr: data.fpr });
        return;
      }
      // User-level (groupSize K > 1) or replace-one: the command line's calibrate
      // --group-size K --adjacency …, tight (no exact-RDP route for these).
      const adj = data.adjacency ?? 'add-remove';
      const acct = data.accountant === 'rdp' && k === 1 && adj === 'add-remove' ? 'rdp' : 'pld';
      const p = { q: data.q, delta: data.delta, epsilon: data.target, accountant: acct, conversion: data.conversion };
      const user = (which) => JSON.parse(command(['calibrate', '--q', String(data.q), '--group-size', String(k), '--adjacency', adj, '--accountant', 'pld',
        '--delta', String(data.delta), '--epsilon', String(data.target), '--target', which,
        ...(which === 'sigma' ? ['--steps', String(data.steps)] : ['--sigma', String(data.sigma)]), '--json']));
      const r = k > 1 || adj !== 'add-remove'
        ? user(data.which)
        : data.which === 'sigma'
          ? calibrateSigma({ ...p, steps: data.steps })
          : calibrateSteps({ ...p, sigma: data.sigma });
      reply({ client, gen: data.gen, kind: 'calibrated', which: data.which, accountant: acct, value: data.which === 'sigma' ? r.sigma : r.steps, epsilon: r.epsilon });
    } catch (err) {
      reply({ client, gen: data.gen, kind: 'calibrate-error', which: data.which, message: messageOf(err) });
    }
    return;
  }
  newest.set(client, Math.max(newest.get(client) ?? -1, data.gen));
  const current = () => data.gen === newest.get(client);
  await ready;
  await yieldToQueue();
  if (!current()) return;
  const p = { q: data.q, sigma: data.sigma, steps: data.steps };
  // The key is the parsed numbers (validated above), never a string a caller chose.
  const key = JSON.stringify([data.q, data.sigma, data.steps, data.delta]);
  // The page's batching control, t = ⌊1/q⌋ steps per epoch and E epochs from the page (each
  // through the command line's batch line, so the same numbers; computed first: each stands
  // even when the Poisson answer fails).
  // Shuffled, fixed-size batches (sampling 'shuffled', or epochs alone): the certified band of
  // `--sampling shuffle`: upper end no amplification (the Gaussian mechanism over E epochs),
  // lower end Chua et al.'s shuffled pair.
  // Random allocation ('random-allocation'): the certified bracket of `--sampling
  // random-allocation` (each example in one of the t steps of every epoch).
  let shuffled;
  let allocation;
  // User-level (groupSize K > 1) and/or replace-one adjacency with Poisson sampling: the
  // tight bracket of `--group-size K --adjacency …`.
  let user;
  // Truncated Poisson or fixed-size batches ('truncated-poisson', 'fixed-size', with the sizes
  // datasetSize, batchSize, maxBatch, or schemeError: why the page cannot ask): `scheme`.
  let scheme;
  const k = data.groupSize ?? 1;
  const replace = data.adjacency === 'replace-one';
  const poisson = data.sampling === undefined || data.sampling === 'poisson';
  const sized = data.sampling === 'truncated-poisson' || data.sampling === 'fixed-size';
  if (sized) {
    if (data.schemeError !== undefined) scheme = { error: data.schemeError, sampling: data.sampling };
    else {
      const sc = schemeOf(data);
      const g = lineAnswer(sc.line(data.steps));
      scheme = g.err !== undefined ? { error: g.err, sampling: data.sampling } : sc.answer(g.ok);
    }
  } else if (k > 1 || (replace && poisson)) {
    if (data.sampling === 'shuffled' || data.sampling === 'random-allocation') {
      user = { error: 'user-level ε (examples per user > 1) is computed for Poisson sampling only', groupSize: k };
    } else {
      const sc = schemeOf(data);
      const g = lineAnswer(sc.line(data.steps));
      user = g.err !== undefined ? { error: g.err, groupSize: k } : sc.answer(g.ok);
    }
  }
  if (data.epochs && !sized) {
    const t = Math.max(1, Math.floor(1 / data.q));
    const scheme = data.sampling === 'random-allocation' ? 'random-allocation' : 'shuffle';
    const g = lineAnswer({ sigma: data.sigma, delta: data.delta, sampling: scheme, steps_per_epoch: t, epochs: data.epochs, ...(replace ? { adjacency: 'replace-one' } : {}) });
    const answer = g.err !== undefined ? { error: g.err, epochs: data.epochs, stepsPerEpoch: t } : { epsilon: g.ok.epsilon, epsilonLower: g.ok.epsilon_lower, epochs: data.epochs, stepsPerEpoch: t };
    if (scheme === 'shuffle') shuffled = answer;
    else allocation = answer;
  }
  const h = cached(headlines, key, () => epsilon({ ...p, delta: data.delta, accountant: 'pld' }));
  if (h.err !== undefined) {
    reply({ client, gen: data.gen, kind: 'error', message: h.err, shuffled, allocation, user, scheme });
    return;
  }
  reply({ client, gen: data.gen, kind: 'headline', epsilon: h.ok.epsilon, epsilonLower: h.ok.epsilonLower, shuffled, allocation, user, scheme });
  if (data.charts === false) return;
  // Let a newer request pre-empt the (slower) charts.
  await new Promise((r) => setTimeout(r, 0));
  if (!current()) return;
  // Random allocation or a user-level run chosen: its own charts, target and μ-GDP (the
  // Poisson ones of one example per user do not apply).
  // Shuffled batches: the band's own charts (both ends); truncated Poisson and fixed-size
  // batches: theirs.
  const ok = (a) => (a && a.error === undefined ? a : null);
  const own = ok(allocation) || ok(shuffled) || ok(scheme) || ok(user);
  const sc = own && schemeOf(data);
  const c = own
    ? cached(charts, JSON.stringify(sc.key), () => schemeCharts(sc, own))
    : await cachedAsync(charts, key, () => chartsFor(p, data.delta, h.ok));
  // (While the helper's half was awaited, a newer request may have come.)
  if (!current()) return;
  if (c.err !== undefined) reply({ client, gen: data.gen, kind: 'charts-error', message: c.err });
  else reply({ client, gen: data.gen, kind: 'charts', ...c.ok });
  // The target ε (asked with target: ε): the most steps whose certified ε meets it — the
  // very call "What do I need?"'s "Most steps" makes, so the chart's sentence and the inverse
  // mode agree: {kind: "target", target, steps} or {kind: "target", target, error}.
  // The target's solve and μ-GDP come after a short rest (a newer request meanwhile skips
  // them): a synchronous solve cannot be interrupted, and while σ is typed the next
  // headline would otherwise wait for the previous run's target and μ-GDP.
  await new Promise((r) => setTimeout(r, AFTER_CHARTS_MS));
  if (!current()) return;
  if (data.target !== undefined) {
    const tk = JSON.stringify([data.q, data.sigma, data.delta, data.target, own && sc.key]);
    // A scheme: its most steps (random allocation: whole epochs) by the command line's calibrate.
    const r = cached(targets, tk, () => (own
      ? sc.most(data.target)
      : calibrateSteps({ q: data.q, sigma: data.sigma, delta: data.delta, epsilon: data.target, accountant: 'pld' }).steps));
    reply(r.err !== undefined
      ? { client, gen: data.gen, kind: 'target', target: data.target, error: r.err }
      : { client, gen: data.gen, kind: 'target', target: data.target, steps: r.ok });
  }
  // μ-GDP with its fit (asked with gdp: true; the command line's `gdp`, δ-free), after the
  // charts: {kind: "gdp", mu, muLower, regret, tradeoff} or {kind: "gdp", error}.
  if (data.gdp) {
    await new Promise((r) => setTimeout(r, 0));
    if (!current()) return;
    const g = own
      ? cached(gdps, JSON.stringify(sc.key), () => JSON.parse(command(['gdp', ...sc.flags, ...(sc.stepFlags || []), '--json'])))
      : cached(gdps, JSON.stringify([data.q, data.sigma, data.steps]), () =>
        JSON.parse(command(['gdp', '--q', String(data.q), '--sigma', String(data.sigma), '--steps', String(data.steps), '--json'])));
    if (g.err !== undefined) reply({ client, gen: data.gen, kind: 'gdp', error: g.err });
    else reply({ client, gen: data.gen, kind: 'gdp', mu: g.ok.mu, muLower: g.ok.mu_lower, regret: g.ok.regret, tradeoff: g.ok.tradeoff });
  }
  // "What your library reports" (asked with library: true, Poisson sampling of one example):
  // the command line's `libraries` — each library's own output for this run, computed —
  // with Opacus' loader terms (loaderN, loaderB, loaderE) when the page has them:
  // {kind: "library", rows: [{tool, epsilon, note}]} (nothing when it fails).
  if (data.library === true && !own) {
    // Only once the inputs rest (0.4 s with no newer request): its compositions (dp_accounting's
    // grid, a second tight solve) would otherwise hold up the next headline while typing.
    await new Promise((r) => setTimeout(r, 400));
    if (!current()) return;
    const terms = data.loaderN !== undefined
      ? ['--dataset-size', String(data.loaderN), '--batch-size', String(data.loaderB), '--epochs', String(data.loaderE)]
      : ['--q', String(data.q), '--steps', String(data.steps)];
    const lib = cached(libraries, JSON.stringify([terms, data.sigma, data.delta]), () => JSON.parse(command(['libraries', ...terms, '--sigma', String(data.sigma), '--delta', String(data.delta), '--json'])));
    if (lib.ok !== undefined) reply({ client, gen: data.gen, kind: 'library', rows: lib.ok.rows });
  }
};

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
import init, { epsilon, compare, heavyModel, heavyChartC, tightCharts, tightRiskFirst, workerCheck, workerCheckConfig, workerSide, workerSchemeCharts, workerGdp, WorkerTargetSearch, workerLibrary, workerCalibrate, workerAudit, workerCorrelated } from './sgm-rdp-worker.js';

const WASM = new URL('./sgm-rdp-worker_bg.wasm', import.meta.url);
// The helper (below): this same script as a nested worker.
const isHelper = new URL(import.meta.url).searchParams.has('helper');
// The compiled module: the page's worker fetches and compiles it once and hands it to each
// helper ({module}, the helper's first message), which only instantiates it (ready 1–2 ms
// after its script ran, in a trace in headless Chromium) instead of fetching and compiling
// the 1.4 MB module on every take-over; V8 shares the compiled code. Where the module cannot
// be handed over ({module: null}) or compiled here, the file itself.
let handed = null;
const compiled = isHelper
  ? new Promise((r) => {
      handed = r;
    })
  : Promise.resolve()
      .then(() => WebAssembly.compileStreaming(fetch(WASM)))
      // (A server that does not say application/wasm: from the bytes.)
      .catch(() => fetch(WASM).then((r) => r.arrayBuffer()).then((b) => WebAssembly.compile(b)))
      .catch(() => null);
const ready = compiled.then((module) => init({ module_or_path: module ?? WASM }));
const newest = new Map();
const newestCalibration = new Map();
// One turn of the task queue (a timer: Chromium may run it before messages already waiting;
// `yieldToMessages` below queues behind them).
const yieldToQueue = () => new Promise((r) => setTimeout(r, 0));
// A turn behind the messages already posted to this worker: a message to itself, which
// queues behind them (Chromium runs a worker's timers before its waiting messages, so
// a timer's turn can let a search run on for seconds with a newer run's charts waiting).
const turn = new MessageChannel();
const turnWaiting = [];
turn.port1.onmessage = () => turnWaiting.shift()?.();
const yieldToMessages = () => new Promise((r) => {
  turnWaiting.push(r);
  turn.port2.postMessage(null);
});
// The protocol's version (ui::protocol::VERSION): a request may carry it as `v` and must
// then match; every answer carries it.
const VERSION = 1;
const CACHE = 64;
// The rest after the charts before the target's solve and μ-GDP where no helper ran them (ms).
const AFTER_CHARTS_MS = 150;
// The helper's rest before the target's most steps (ms from the charts): a search of many
// tight solves, seconds on a large-dataset run in the wasm, started only once the inputs
// have rested (a newer run's charts meanwhile skip it; one already running is stopped,
// `freeHelper`).
const TARGET_REST_MS = 400;
// Whether the helper starts a run's risk chart beside its headline (below): where a core is
// idle for it — more than two (on two, the page's own thread shares them, and the headline of a
// large-dataset run came ~30–80 ms later for charts ~20–60 ms sooner, `benches/page_updates.mjs`);
// `pld-worker.js?risk-first=1` (or `=0`) decides it for tests and benchmarks.
const RISK_FIRST = (() => {
  const flag = new URL(import.meta.url).searchParams.get('risk-first');
  return flag === null ? (self.navigator?.hardwareConcurrency ?? 2) > 2 : flag !== '0';
})();
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
// `early`: the helper's risk chart asked beside the headline (`tightRiskFirst`), or null.
async function chartsFor(p, d, headline, round, early) {
  const run = { ...p, delta: d };
  const [up, lo] = headline ? [headline.epsilon, headline.epsilonLower] : [NaN, NaN];
  // The profile and the risk on the helper (another core) while ε over training is
  // computed here; without a helper (or the headline the profile's range needs), in turn.
  // With the risk asked early, the helper's part is the profile (and the risk only where it
  // is read with the profile after all: that one is the chart's).
  if (headline) freeHelper();
  const part = early ? 'profile' : 'profile-risk';
  const side = helper && headline ? helperCharts({ round, run, up, lo, part }) : null;
  let c;
  if (side) {
    const a = tightCharts(run, up, lo, 'training');
    let b = (await side) ?? tightCharts(run, up, lo, part);
    if (early && b.risk === undefined && b.errors?.risk === undefined) {
      const r = (await early) ?? tightCharts(run, NaN, NaN, 'risk');
      b = { profile: b.profile, risk: r.risk, errors: { ...b.errors, ...r.errors } };
    }
    c = { training: a.training, profile: b.profile, risk: b.risk, errors: { ...a.errors, ...b.errors } };
  } else {
    c = tightCharts(run, up, lo, 'all');
  }
  if (!c.training && !c.profile && !c.risk) throw new Error(c.errors.training);
  return c;
}

// The helper: this same script as a nested worker (`?helper`), answering only
// {id, round, run, up, lo, part} with that part of the charts ("profile-risk", "profile" or
// "risk"; {id, result}, result null when it failed, or for a "risk" of an older round than
// the newest it has seen), and {id, round, task: "gdp"|"target", rest, data, side} with μ-GDP or the target's
// most steps after `rest` ms ({id, answer: {ok} | {err}}, answer null when a request of a
// newer round came first). Where a worker cannot start one (a cross-origin script from a widget's blob:
// worker, older browsers) there is none: the charts are computed in turn, and μ-GDP and the
// target here after a rest. Its first message is {module}, the compiled wasm (above).
let helper = null;
let helperSeq = 0;
const helping = new Map();
// The id of the task (μ-GDP or the target) the helper said it started and has not answered
// yet; null when it runs none.
let helperRunning = null;
// Every request waiting on the helper resolves to null (it will not answer).
const dropHelping = () => {
  for (const done of helping.values()) done(null);
  helping.clear();
};
function startHelper() {
  try {
    const w = new Worker(new URL('./pld-worker.js?helper', import.meta.url), { type: 'module' });
    compiled.then((module) => {
      try {
        w.postMessage({ module });
      } catch {
        w.postMessage({ module: null });
      }
    });
    w.onmessage = ({ data }) => {
      if (data.started) {
        helperRunning = data.id;
        return;
      }
      if (helperRunning === data.id) helperRunning = null;
      const done = helping.get(data.id);
      helping.delete(data.id);
      if (done) done(data);
    };
    w.onerror = () => {
      if (spare === w) spare = null;
      if (helper !== w) return;
      helper = null;
      helperRunning = null;
      dropHelping();
    };
    return w;
  } catch {
    return null;
  }
}
// A second helper, loaded but idle, takes over from a stopped one at once. It starts with the
// first helper and after each take-over: it only instantiates the module compiled here, a few
// ms. (It used to start 2 s later, when each helper compiled its own, so that its compiling
// did not take a core from the charts; while σ was typed a take-over then often found no
// spare, and a new helper's script, fetched through this worker, waited for the charts' half
// computed here: its charts started ~220 ms late, in headless Chromium at q = 1e-5, T = 10⁶.)
let spare = null;
const startSpare = () =>
  setTimeout(() => {
    spare ??= helper && startHelper();
  }, 0);
if (!isHelper && typeof Worker !== 'undefined') {
  helper = startHelper();
  startSpare();
}
// A newer run's charts do not wait for an older run's task: a synchronous solve cannot be
// interrupted, so a helper running one is stopped and the spare (or a new helper) takes its
// place (the target's most steps at q = 1e-4, σ ≈ 1.2, T = 10⁵ held the next run's charts
// 3–4.5 s in headless Chromium: `node benches/page_updates.mjs dist --query=…`). A stopped
// task's requests resolve to null: its client's answer is then computed here if that client
// still wants it, as where no helper ran it.
function freeHelper() {
  if (helper === null || helperRunning === null) return;
  helper.terminate();
  helperRunning = null;
  dropHelping();
  helper = spare ?? startHelper();
  spare = null;
  startSpare();
}
// (Each request's promise resolves to the helper's whole answer; null when it failed.)
function askHelper(req) {
  return new Promise((done) => {
    const id = ++helperSeq;
    helping.set(id, done);
    helper.postMessage({ id, ...req });
  });
}
// The profile and the risk from the helper (null when it failed).
const helperCharts = (req) => askHelper(req).then((m) => m?.result ?? null);
// A task after the charts from the helper: {ok} or {err}, null when it did not run.
const helperTask = (round, task, rest, data, side) => askHelper({ round, task, rest, data, side }).then((m) => m?.answer ?? null);
// The rounds: one per request past its first turn of the queue; the helper skips a task (and
// an early risk) of an older round than the newest it has seen.
let rounds = 0;
let newestRound = 0;
// The target's most steps a tight solve at a time (WorkerTargetSearch), a turn of the task
// queue between solves: {ok} or {err}, null once `wanted()` is false (a newer run came).
// Its search takes seconds on a large-dataset run (q = 2e-5, δ = 1e-6 to ε = 3: 16 solves of
// ~0.2 s natively at σ = 1, 22 of ~1 s at σ = 1.13); run whole, a stopped helper ran it on
// (a worker stopped inside the wasm stops when it returns, or 2 s later in Chromium), a
// third thread on two cores beside the next run's charts. Now it stops after one solve.
async function mostSteps(data, side, wanted) {
  let search;
  try {
    search = new WorkerTargetSearch(data, side);
    for (;;) {
      const steps = search.advance();
      if (steps !== undefined) return { ok: steps };
      await yieldToMessages();
      if (!wanted()) return null;
    }
  } catch (err) {
    return { err: messageOf(err) };
  } finally {
    search?.free();
  }
}
// A task after the charts ("gdp" or "target") for a request and its side answers: {ok} or
// {err}, null when a newer run came first (only the target's search stops on the way).
async function runTask(task, data, side, wanted) {
  if (task === 'target') return mostSteps(data, side, wanted);
  try {
    return { ok: workerGdp(data, side) };
  } catch (err) {
    return { err: messageOf(err) };
  }
}
async function help({ data }) {
  if (handed !== null && data && 'module' in data) {
    handed(data.module instanceof WebAssembly.Module ? data.module : null);
    handed = null;
    return;
  }
  await ready;
  newestRound = Math.max(newestRound, data.round ?? 0);
  if (data.task) {
    // (Its rest, at least one turn of the queue, first: a newer round's charts go before an
    // older round's task.)
    await new Promise((r) => setTimeout(r, data.rest ?? 0));
    let answer = null;
    if (data.round === newestRound) {
      // (Said first: the page's worker stops this helper when a newer run's charts come.)
      self.postMessage({ id: data.id, started: true });
      answer = await runTask(data.task, data.data, data.side, () => data.round === newestRound);
    }
    self.postMessage({ id: data.id, answer });
    return;
  }
  let result = null;
  if (data.part === 'risk') {
    // Asked beside a headline, so while σ is typed one per keystroke: only the newest round's
    // (a turn behind the messages waiting first, so that a newer one is seen).
    await yieldToMessages();
    if (data.round !== newestRound) {
      self.postMessage({ id: data.id, result: null });
      return;
    }
  }
  try {
    result = tightCharts(data.run, data.up, data.lo, data.part ?? 'profile-risk');
  } catch {
    result = null;
  }
  self.postMessage({ id: data.id, result });
}

// What is computed beyond Poisson sampling's headline and charts — the schemes' answers,
// charts, most steps and μ-GDP, the library rows, the calibrations, the check of every
// request — is decided in Rust (src/worker.rs, as typed requests of the query
// layer, tested natively); this script only schedules (newest request per client and kind,
// the helper worker) and caches.
const chartsC = new Map();
const sides = new Map();

// Every message is checked (workerCheck) before it touches the worker's state: a malformed
// one is answered with {kind: "error", message} for its client and changes nothing else.
function invalid(data) {
  if (data === null || typeof data !== 'object') return 'a message must be an object';
  return workerCheck(data) ?? null;
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
  await ready;
  const bad = invalid(data);
  if (bad !== null) {
    const client = data !== null && typeof data === 'object' && typeof data.client === 'string' ? data.client : 'page';
    const gen = data !== null && typeof data === 'object' && Number.isSafeInteger(data.gen) ? data.gen : -1;
    const failed = { calibrate: 'calibrate-error', check: 'check-error' }[data && data.kind] ?? 'error';
    reply({ client, gen, kind: failed, which: data && data.which, message: `worker: ${bad}` });
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
  if (data.kind === 'check') {
    // "Check my training code": {kind: "check", config} → {kind: "checked", …the check's
    // fields} or {kind: "check-error", message}; the newest check per client wins.
    const slot = `${client}|check`;
    newestCalibration.set(slot, Math.max(newestCalibration.get(slot) ?? -1, data.gen));
    await yieldToQueue();
    if (data.gen !== newestCalibration.get(slot)) return;
    try {
      reply({ client, gen: data.gen, kind: 'checked', ...workerCheckConfig(data) });
    } catch (err) {
      reply({ client, gen: data.gen, kind: 'check-error', message: messageOf(err) });
    }
    return;
  }
  if (data.kind === 'correlated') {
    // Correlated noise for the run shown: {kind: "correlated", strategy, participation, …the
    // run} → {kind: "correlated-answer", …the correlated-noise line's fields} or
    // {kind: "correlated-error", message}; the newest per client wins.
    const slot = `${client}|correlated`;
    newestCalibration.set(slot, Math.max(newestCalibration.get(slot) ?? -1, data.gen));
    await ready;
    await yieldToQueue();
    if (data.gen !== newestCalibration.get(slot)) return;
    try {
      reply({ client, gen: data.gen, kind: 'correlated-answer', ...workerCorrelated(data) });
    } catch (err) {
      reply({ client, gen: data.gen, kind: 'correlated-error', message: messageOf(err) });
    }
    return;
  }
  if (data.kind === 'audit') {
    // "Audit against the certificate": {kind: "audit", csv, lowerIsMember, …the run} →
    // {kind: "audited", …the audit's fields} or {kind: "audit-error", message}; the newest
    // audit per client wins.
    const slot = `${client}|audit`;
    newestCalibration.set(slot, Math.max(newestCalibration.get(slot) ?? -1, data.gen));
    await ready;
    await yieldToQueue();
    if (data.gen !== newestCalibration.get(slot)) return;
    try {
      reply({ client, gen: data.gen, kind: 'audited', ...workerAudit(data) });
    } catch (err) {
      reply({ client, gen: data.gen, kind: 'audit-error', message: messageOf(err) });
    }
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
      reply({ client, gen: data.gen, kind: 'calibrated', ...workerCalibrate(data) });
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
  // The answers beside Poisson sampling's (a scheme's band or bracket, user-level,
  // replace-one, truncated Poisson, fixed-size), each through the command line's batch line
  // and computed first: each stands even when the Poisson answer fails.
  const sideKey = JSON.stringify([data.q, data.sigma, data.steps, data.delta, data.sampling, data.epochs, data.groupSize,
    data.adjacency, data.datasetSize, data.batchSize, data.maxBatch, data.schemeError]);
  const sd = cached(sides, sideKey, () => workerSide(data));
  const side = sd.ok ?? {};
  const { shuffled, allocation, user, scheme } = side;
  // A scheme or a user-level run chosen: its own charts, target and μ-GDP (the Poisson
  // ones of one example per user do not apply).
  const own = side.own === true;
  const round = ++rounds;
  // The risk chart where it is read apart from the profile needs no headline (its range is
  // exact RDP's): the helper starts it now, beside the headline computed here (q = 1e-5,
  // σ = 1.14, T = 10⁶ natively: the headline 72 ms, the risk's attack profile 120 ms, the
  // profile 129 ms, ε over training 142 ms).
  let early = null;
  if (RISK_FIRST && helper && data.charts !== false && !own && side.asked !== true && !charts.has(key)) {
    let first = false;
    try {
      first = tightRiskFirst({ ...p, delta: data.delta });
    } catch {
      first = false;
    }
    if (first) {
      freeHelper();
      early = helperCharts({ round, run: { ...p, delta: data.delta }, up: NaN, lo: NaN, part: 'risk' });
    }
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
  // Asked for a run of its own that has no answer (a refused user-level run, a scheme
  // without its sizes): no chart, target or μ-GDP of another run stands in for it.
  if (side.asked === true && !own) {
    const why = side.why ?? 'the run shown has no certified answer';
    reply({ client, gen: data.gen, kind: 'charts-error', message: why });
    if (data.target !== undefined) reply({ client, gen: data.gen, kind: 'target', target: data.target, error: why });
    if (data.gdp) reply({ client, gen: data.gen, kind: 'gdp', error: why });
    return;
  }
  const c = own
    ? cached(charts, sideKey, () => workerSchemeCharts(data, side))
    : await cachedAsync(charts, key, () => chartsFor(p, data.delta, h.ok, round, early));
  // (While the helper's half was awaited, a newer request may have come.)
  if (!current()) return;
  if (c.err !== undefined) reply({ client, gen: data.gen, kind: 'charts-error', message: c.err });
  else reply({ client, gen: data.gen, kind: 'charts', ...c.ok });
  // μ-GDP with its fit (asked with gdp: true; the command line's `gdp`, δ-free):
  // {kind: "gdp", mu, muLower, regret, tradeoff} or {kind: "gdp", error}. The target ε
  // (asked with target: ε): the most steps whose certified ε meets it — the very call "What do
  // I need?"'s "Most steps" makes, so the chart's sentence and the inverse mode agree:
  // {kind: "target", target, steps} or {kind: "target", target, error}.
  // Both on the helper (the other core): there they cannot hold up the next headline.
  // μ-GDP as soon as the charts are out (p50 510–554 → ~300 ms from the keystroke on MNIST:
  // `node benches/page_updates.mjs`); the target after it and a short rest (a newer request
  // meanwhile skips it), since the helper's next task is the next run's charts. Without a
  // helper, or where it did not run them, here after that rest: a synchronous solve cannot be
  // interrupted, and while σ is typed the next headline would otherwise wait for the previous
  // run's target and μ-GDP.
  const tasks = [
    data.gdp === true && {
      task: 'gdp', rest: 0, map: gdps, key: JSON.stringify([sideKey, own]),
      send: (g) => reply(g.err !== undefined
        ? { client, gen: data.gen, kind: 'gdp', error: g.err }
        : { client, gen: data.gen, kind: 'gdp', ...g.ok }),
    },
    data.target !== undefined && {
      task: 'target', rest: TARGET_REST_MS, map: targets, key: JSON.stringify([sideKey, data.target]),
      send: (r) => reply(r.err !== undefined
        ? { client, gen: data.gen, kind: 'target', target: data.target, error: r.err }
        : { client, gen: data.gen, kind: 'target', target: data.target, steps: r.ok }),
    },
  ].filter(Boolean);
  for (const t of tasks) {
    const hit = recall(t.map, t.key);
    if (hit) {
      t.done = Promise.resolve(true);
      t.send(hit);
    } else if (helper) {
      t.done = helperTask(round, t.task, t.rest, data, side).then((a) => {
        if (a === null) return false;
        remember(t.map, t.key, a);
        if (current()) t.send(a);
        return true;
      });
    }
  }
  await new Promise((r) => setTimeout(r, AFTER_CHARTS_MS));
  if (!current()) return;
  for (const t of tasks) {
    if (t.done && (await t.done)) continue;
    await yieldToQueue();
    if (!current()) return;
    const hit = recall(t.map, t.key);
    const a = hit ?? (await runTask(t.task, data, side, current));
    if (a === null) return;
    t.send(hit ?? remember(t.map, t.key, a));
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
    const lib = cached(libraries, JSON.stringify([data.q, data.sigma, data.steps, data.delta, data.loaderN, data.loaderB, data.loaderE]), () => workerLibrary(data));
    if (lib.ok !== undefined) reply({ client, gen: data.gen, kind: 'library', rows: lib.ok.rows });
  }
};

// The JS API off the main thread: every function of `sgm-rdp.js`, returning a Promise,
// computed in a dedicated Web Worker that runs the worker-only wasm (the whole engine: the
// ladder for long runs, and `batchLine`, the command line's query layer). For the heavy
// calls — the tight accountant (`accountant: "pld"`), profile, attackRisk,
// epsilonOverTraining, calibrations — which can take up to about a second each and would
// block the caller's thread in the synchronous API.
//
//   import { epsilon } from './sgm-rdp-async.js';
//   const r = await epsilon({ sample_rate: 0.01, noise_multiplier: 1.1, steps: 10000, delta: 1e-5, accountant: 'pld' });
//
// Same parameters, same results, same error messages (a rejected Promise with an `Error`
// whose message is the synchronous call's). Options, as a second argument: `{ signal }`, an
// AbortSignal: aborting rejects with an AbortError and, if the call is running, stops it by
// terminating the worker (wasm cannot be interrupted); the other calls are re-sent to a new
// one. The worker is also replaced after a call leaves its wasm memory above 256 MB (a wasm
// memory never shrinks; a new worker starts small), and `terminate()` ends it. Calls run one
// at a time, in order.
const FUNCTIONS = ['rdp', 'epsilon', 'delta', 'profile', 'gdp', 'attackRisk', 'epsilonOverTraining', 'calibrateSigma', 'calibrateSteps', 'bounds', 'compare', 'batchLine', 'command', 'check', 'audit', 'auditPlan', 'correlated'];

let worker = null;
let started = 0;
let memoryBound = 256 * 1024 * 1024;
let nextId = 1;
const pending = new Map(); // id → { fn, args, resolve, reject }

function abortError() {
  return new DOMException('the call was aborted', 'AbortError');
}

function start() {
  started++;
  let w;
  try {
    // (The literal form a bundler rewrites to the worker it emits.)
    w = new Worker(new URL('./sgm-rdp-async-worker.js', import.meta.url), { type: 'module' });
  } catch {
    // From another origin: a module worker from a blob: URL importing the real file (needs
    // CORS on these files and, under a CSP, worker-src blob:).
    const url = new URL('./sgm-rdp-async-worker.js', import.meta.url);
    const blob = new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' });
    w = new Worker(URL.createObjectURL(blob), { type: 'module' });
  }
  // Its memory bound, before any call (messages arrive in order).
  w.postMessage({ memoryBound });
  w.onmessage = ({ data }) => {
    const call = pending.get(data.id);
    if (data.recycle && w === worker) {
      // Its memory grew past the bound: the next calls go to a new worker.
      w.terminate();
      worker = null;
      for (const [id, c] of pending) if (id !== data.id) post(id, c);
    }
    if (!call) return;
    pending.delete(data.id);
    if ('ok' in data) call.resolve(data.ok);
    else call.reject(new Error(data.error));
  };
  w.onerror = (ev) => {
    ev.preventDefault();
    if (w !== worker) return;
    worker = null;
    const why = new Error(`sgm-rdp-async: the worker did not start (${url.href})`);
    for (const c of pending.values()) c.reject(why);
    pending.clear();
  };
  return w;
}

function post(id, c) {
  worker ??= start();
  try {
    worker.postMessage({ id, fn: c.fn, args: c.args });
  } catch (e) {
    // A value the structured clone cannot copy (a function, a Proxy, a getter that throws).
    pending.delete(id);
    c.reject(new TypeError(`${c.fn}: the parameters cannot be sent to the worker (${e && e.message ? e.message : e})`));
  }
}

function call(fn, args, options = {}) {
  const signal = options && options.signal;
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) {
      reject(abortError());
      return;
    }
    const id = nextId++;
    const c = { fn, args, resolve, reject };
    pending.set(id, c);
    if (signal) {
      signal.addEventListener('abort', () => {
        if (!pending.has(id)) return;
        pending.delete(id);
        reject(abortError());
        // Stop whatever runs now (this call, or another: they run one at a time), then give
        // the remaining calls to a new worker.
        if (worker) worker.terminate();
        worker = null;
        for (const [other, oc] of pending) post(other, oc);
      }, { once: true });
    }
    post(id, c);
  });
}

export const rdp = (p, o) => call('rdp', p, o);
export const epsilon = (p, o) => call('epsilon', p, o);
export const delta = (p, o) => call('delta', p, o);
export const profile = (p, o) => call('profile', p, o);
export const gdp = (p, o) => call('gdp', p, o);
export const attackRisk = (p, o) => call('attackRisk', p, o);
export const epsilonOverTraining = (p, o) => call('epsilonOverTraining', p, o);
export const calibrateSigma = (p, o) => call('calibrateSigma', p, o);
export const calibrateSteps = (p, o) => call('calibrateSteps', p, o);
export const bounds = (p, o) => call('bounds', p, o);
export const compare = (p, o) => call('compare', p, o);
/** One `sgm-rdp batch` line (a JSON string) → its answer line (a JSON string). */
export const batchLine = (line, o) => call('batchLine', line, o);
/** One command line (the words after `sgm-rdp`, an array of strings) → its stdout text. */
export const command = (args, o) => call('command', args, o);
/** A training configuration in its library's terms → what it prints, the certified ε of the code that ran, each mismatch. */
export const check = (config, o) => call('check', config, o);
/** Canary scores ({ inScores, outScores, delta, ...the run }) → empirical lower bounds beside the run's certificate (docs/audit.md). */
export const audit = (p, o) => call('audit', p, o);
/** The run and δ → how many canaries an audit needs, and the one-run ceiling. */
export const auditPlan = (p, o) => call('auditPlan', p, o);
/** Correlated noise (DP-FTRL / BandMF / BLT / tree) ({ strategy, participation?, q, sigma, steps, delta, monteCarlo?, ... }) → its certified bracket or upper bound, "bound" saying which (docs/correlated-noise.md). */
export const correlated = (p, o) => call('correlated', p, o);
/** End the worker (pending calls reject); the next call starts a new one. */
export function terminate() {
  if (worker) worker.terminate();
  worker = null;
  for (const c of pending.values()) c.reject(abortError());
  pending.clear();
}
/** The wasm memory (bytes) above which the worker is replaced after a call (default 256 MB);
 *  applies to the next worker started. */
export function setMemoryBound(bytes) {
  if (!(Number.isFinite(bytes) && bytes > 0)) throw new TypeError(`setMemoryBound: bytes must be a positive number, got ${String(bytes).slice(0, 40)}`);
  memoryBound = bytes;
}
/** How many workers this module has started (1 until an abort or a memory recycle). */
export const workersStarted = () => started;
export { FUNCTIONS as functions };

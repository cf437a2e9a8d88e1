// The worker behind sgm-rdp-async.js: {id, fn, args} → {id, ok} or {id, error} (the
// synchronous call's own message), and `recycle: true` once its wasm memory exceeds 256 MB
// (the caller then starts a new worker; a wasm memory never shrinks; the bound comes in the
// first message). Only the functions
// listed are callable. Runs the worker-only wasm (the whole engine).
import init, * as api from './sgm-rdp-worker.js';

const ready = init({ module_or_path: new URL('./sgm-rdp-worker_bg.wasm', import.meta.url) });
const FUNCTIONS = new Set(['rdp', 'epsilon', 'delta', 'profile', 'gdp', 'attackRisk', 'epsilonOverTraining', 'calibrateSigma', 'calibrateSteps', 'bounds', 'compare', 'batchLine', 'command', 'check', 'audit', 'auditPlan', 'correlated']);
// The memory bound arrives as the first message ({memoryBound}) from sgm-rdp-async.js.
let memoryBound = 256 * 1024 * 1024;

self.onmessage = async ({ data }) => {
  if (data && typeof data.memoryBound === 'number' && !('fn' in data)) {
    if (data.memoryBound > 0) memoryBound = data.memoryBound;
    return;
  }
  const wasm = await ready;
  const id = data && data.id;
  const fn = data && data.fn;
  let reply;
  if (typeof fn !== 'string' || !FUNCTIONS.has(fn)) {
    reply = { id, error: `sgm-rdp-async: no function '${String(fn).slice(0, 40)}'` };
  } else {
    try {
      reply = { id, ok: api[fn](data.args) };
    } catch (e) {
      reply = { id, error: String(e && e.message ? e.message : e) };
    }
  }
  if (wasm.memory.buffer.byteLength > memoryBound) reply.recycle = true;
  self.postMessage(reply);
};

// The page's Web Worker: the same wasm as the page, answering the heavy questions (the
// tight PLD accountant, ε over training, the privacy profile, attack risk) off the main
// thread so the page never freezes. A module worker from the page's own origin, so the
// strict CSP (default-src 'self') allows it without blob: or inline code.
//
// Protocol: the page posts {gen, q, sigma, steps, delta}; the worker answers first
// {gen, kind: "headline", epsilon, epsilonLower} (or {gen, kind: "error", message}), then
// {gen, kind: "charts", training, profile, risk}. Requests are handled newest-first: a
// request that is no longer the newest when its turn comes is skipped. A calibration
// ({kind: "calibrate", which, q, sigma, steps, delta, target}) is answered with
// {kind: "calibrated", which, value, epsilon} or {kind: "calibrate-error", which, message}.
import init, { epsilon, delta, epsilonOverTraining, profile, attackRisk, calibrateSigma, calibrateSteps } from './sgm-rdp.js';

const ready = init({ module_or_path: new URL('./sgm-rdp_bg.wasm', import.meta.url) });
let newest = -1;

self.onmessage = async ({ data }) => {
  if (data.kind === 'calibrate') {
    // "What do I need?" with the tight accountant: {kind, which: "sigma"|"steps", …}.
    await ready;
    try {
      const p = { q: data.q, delta: data.delta, epsilon: data.target, accountant: 'pld' };
      const r = data.which === 'sigma'
        ? calibrateSigma({ ...p, steps: data.steps })
        : calibrateSteps({ ...p, sigma: data.sigma });
      self.postMessage({ gen: data.gen, kind: 'calibrated', which: data.which, value: data.which === 'sigma' ? r.sigma : r.steps, epsilon: r.epsilon });
    } catch (err) {
      self.postMessage({ gen: data.gen, kind: 'calibrate-error', which: data.which, message: String(err && err.message ? err.message : err) });
    }
    return;
  }
  newest = Math.max(newest, data.gen);
  await ready;
  if (data.gen !== newest) return;
  const p = { q: data.q, sigma: data.sigma, steps: data.steps };
  try {
    const e = epsilon({ ...p, delta: data.delta, accountant: 'pld' });
    self.postMessage({ gen: data.gen, kind: 'headline', epsilon: e.epsilon, epsilonLower: e.epsilonLower });
  } catch (err) {
    self.postMessage({ gen: data.gen, kind: 'error', message: String(err && err.message ? err.message : err) });
    return;
  }
  // Let a newer request pre-empt the (slower) charts.
  await new Promise((r) => setTimeout(r, 0));
  if (data.gen !== newest) return;
  try {
    const training = epsilonOverTraining({ ...p, delta: data.delta, points: 24 });
    const top = Math.max(...training.pldUpper, 1e-3) * 2.5;
    const prof = profile({ ...p, epsilons: Array.from({ length: 60 }, (_, i) => top * (i + 1) / 60) })
      .map((pt) => ({ ...pt, rdp: delta({ ...p, epsilon: pt.epsilon }).delta }));
    const risk = attackRisk(p);
    self.postMessage({ gen: data.gen, kind: 'charts', training, profile: prof, risk });
  } catch (err) {
    self.postMessage({ gen: data.gen, kind: 'charts-error', message: String(err && err.message ? err.message : err) });
  }
};

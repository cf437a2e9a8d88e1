// <sgm-rdp-calculator>: the sgm-rdp calculator as a custom element.
//
//   <script type="module" src="…/widget.js"></script>
//   <sgm-rdp-calculator q="0.01" sigma="1.1" steps="10000" delta="1e-5"></sgm-rdp-calculator>
//
// Attributes: q, sigma, steps, delta; mode="compact|full"; accountant="both|pld|rdp" (default both:
// the tight PLD ε first, exact RDP next to it); charts= any of "epsilon bound training profile
// risk", or "none"; conversion="improved|classic"; theme="auto|light|dark"; calculator="URL of the
// full page" (adds a link "open in the full calculator" with the current values; http(s) only);
// sampling="poisson|shuffled|random-allocation|truncated-poisson|fixed-size" (default poisson;
// "shuffle" and "balls-in-bins" too): another scheme shows its certified ε (shuffled: the band)
// for t = ⌊1/q⌋ steps per epoch and ⌈steps·q⌉ epochs, from the worker; truncated-poisson (rate q
// over dataset-size="N" examples, batches capped at max-batch="M", default q·N + 4 s.d.) and
// fixed-size (B = q·N of N without replacement, adjacency="replace-one", an RDP upper bound only,
// epsilonPldLower 0) need dataset-size; ε-vs-α and bound charts are Poisson sampling's and not
// drawn, the tight charts follow the scheme (fixed-size: ε over training only); group-size="K" (1 … 256,
// property groupSize): above 1 the tight ε, its sentence and tight charts are user-level (users
// with at most K examples, Poisson sampling; the command line's --group-size K); adjacency=
// "add-remove|replace-one" (default add-remove; replace-one: the tight ε under replace-one).
// Each recompute fires one `change` CustomEvent (bubbles, composed) whose detail is {q, sigma,
// steps, delta, epsilon, alpha, conversion, epsilonPld, epsilonPldLower, sampling, groupSize,
// adjacency, datasetSize, maxBatch}:
// `epsilon` is exact RDP of one example (null with another scheme than Poisson sampling or K > 1),
// `epsilonPld` the tight ε (certified
// upper bound; the scheme's) and `epsilonPldLower` its bracket's lower end.
// With the tight accountant the event waits for it (computed in a Web Worker, pld-worker.js next
// to this file, so the host page never freezes); they are null with accountant="rdp", or when
// no worker can start (then the widget says why).
//
// This file is only the element's life cycle; the contents (parsing, engine, charts) are the
// Rust `Widget` in the same wasm as the page and the JS API, loaded relative to this file's URL,
// once per page however many widgets there are.
import init, { Widget, widgetCss } from './sgm-rdp-page.js';

const TAG = 'sgm-rdp-calculator';
const ATTRIBUTES = ['q', 'sigma', 'steps', 'delta', 'mode', 'accountant', 'charts', 'conversion', 'theme', 'calculator', 'sampling', 'group-size', 'adjacency', 'dataset-size', 'max-batch'];
// Each attribute's property: its name in camelCase (group-size → groupSize).
const propOf = (a) => a.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

let ready = null;
// Every URL of a file beside this module is written `new URL('./file', import.meta.url)`, the
// form bundlers (Vite, webpack, Rollup) rewrite to the file they emit: `npm install` + one
// import works with a bundler as from a static folder.
const pageWasm = () => new URL('./sgm-rdp-page_bg.wasm', import.meta.url);
const load = () => (ready ??= init({ module_or_path: pageWasm() }));

// One IntersectionObserver for every widget: "near" = within one viewport height of the
// screen. Printing draws them all.
const nearWidgets = new Map();
let near = null;
let flushNow = null; // set by the element class: run every queued render now
function nearObserver() {
  if (near || typeof IntersectionObserver !== 'function') return near;
  near = new IntersectionObserver((entries) => {
    for (const e of entries) nearWidgets.get(e.target)?.(e.isIntersecting);
  }, { rootMargin: '100% 0px' });
  // Print: every chart drawn before the page is laid out for paper (synchronously).
  addEventListener('beforeprint', () => {
    for (const f of nearWidgets.values()) f(true);
    flushNow?.();
  });
  return near;
}

// A new task without setTimeout's 4 ms clamp on nested calls (the render queue yields
// between slices this way).
const channel = new MessageChannel();
const tasks = [];
channel.port1.onmessage = () => tasks.shift()?.();
const nextTask = (f) => {
  tasks.push(f);
  channel.port2.postMessage(0);
};

// One Web Worker per page for every widget: the tight (PLD) accountant off the main thread.
// Same origin as the page: a module worker from this file's directory (allowed by a strict
// CSP). Served from another origin, browsers refuse that; then a module worker from a blob:
// URL importing the real file (needs CORS on these files and, under a CSP, worker-src blob:).
// If neither starts, each widget says so and shows exact RDP only.
let worker; // undefined: not tried yet; null: unavailable
let workerFailure = '';
const waiting = new Map(); // client id → answer callback
let clients = 0;
function tightWorker() {
  if (worker !== undefined) return worker;
  try {
    worker = new Worker(new URL('./pld-worker.js', import.meta.url), { type: 'module' });
  } catch (e) {
    try {
      const url = new URL('./pld-worker.js', import.meta.url);
      const blob = new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' });
      worker = new Worker(URL.createObjectURL(blob), { type: 'module' });
    } catch (e2) {
      worker = null;
      workerFailure = `the tight accountant needs a Web Worker (${e2 && e2.message ? e2.message : e2})`;
      return worker;
    }
  }
  worker.onmessage = ({ data }) => {
    const answer = data && waiting.get(data.client);
    if (answer) answer(data);
  };
  worker.onerror = (ev) => {
    // Could not load (CSP, network): every waiting widget falls back to exact RDP.
    ev.preventDefault();
    worker = null;
    workerFailure = `the tight accountant's worker did not start (${url.href})`;
    for (const answer of waiting.values()) answer({ kind: 'error', message: workerFailure, failed: true });
  };
  return worker;
}

// One constructed stylesheet per document, shared by every widget in it (CSP-safe: no
// inline <style> needed). Per document, because a constructed sheet may only be adopted
// in the document whose window constructed it: a widget moved into an iframe gets that
// document's sheet.
const sheets = new WeakMap();
function style(root) {
  const doc = root.ownerDocument;
  const win = doc.defaultView;
  if (win && 'adoptedStyleSheets' in win.Document.prototype && 'replaceSync' in win.CSSStyleSheet.prototype) {
    let sheet = sheets.get(doc);
    if (!sheet) {
      sheet = new win.CSSStyleSheet();
      sheet.replaceSync(widgetCss());
      sheets.set(doc, sheet);
    }
    root.adoptedStyleSheets = [sheet];
  } else if (!root.querySelector('style[data-sgm-rdp]')) {
    const s = doc.createElement('style');
    s.dataset.sgmRdp = '';
    s.textContent = widgetCss();
    root.append(s);
  }
}

function rgb(c) {
  const m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+%?))?\s*\)$/.exec(c || '');
  if (!m) return null;
  const a = m[4] === undefined ? 1 : m[4].endsWith('%') ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
  return { r: +m[1], g: +m[2], b: +m[3], a };
}

// The host page's colour scheme at this element: a declared `color-scheme: dark|light`,
// else the nearest painted background's luminance, else the page canvas (dark only when
// the page opts into dark and the reader prefers it).
function hostIsDark(el) {
  const scheme = getComputedStyle(el).colorScheme || '';
  const words = scheme.split(/\s+/);
  const prefersDark = matchMedia('(prefers-color-scheme: dark)').matches;
  if (words.includes('dark') && !words.includes('light')) return true;
  if (words.includes('light') && !words.includes('dark')) return false;
  for (let n = el.parentElement; n; n = n.parentElement) {
    const c = rgb(getComputedStyle(n).backgroundColor);
    if (c && c.a >= 0.5) return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b < 128;
  }
  return prefersDark && words.includes('dark');
}

export class SgmRdpCalculator extends HTMLElement {
  static observedAttributes = ATTRIBUTES;
  #w = null;
  #cleanup = [];
  #generation = 0;
  #client = `w${++clients}`;
  #tightGen = 0;
  #settling = false; // a request's headline is awaited (its `change` is due)
  #chartsAfter = false; // the widget came near meanwhile: ask for its charts then
  #rdpGen = 0;

  // Mounts and renders are queued page-wide and run in slices of at most ~8 ms, so two
  // hundred widgets appearing at once never block the page in one long task; a lone
  // widget still renders in the same task (a microtask).
  static #queue = new Set();
  static #flushing = false;
  static {
    flushNow = () => SgmRdpCalculator.#flush(Infinity);
  }
  static #flush(sliceMs = 8) {
    const queue = SgmRdpCalculator.#queue;
    const t0 = performance.now();
    for (const el of queue) {
      queue.delete(el);
      el.#run();
      if (queue.size && performance.now() - t0 > sliceMs) {
        nextTask(() => SgmRdpCalculator.#flush());
        return;
      }
    }
    SgmRdpCalculator.#flushing = false;
  }

  constructor() {
    super();
    this.attachShadow({ mode: 'open' });
    // A property set before this module loaded is an own property shadowing the
    // accessor below: move it onto the attribute.
    for (const name of ATTRIBUTES.map(propOf)) {
      if (Object.prototype.hasOwnProperty.call(this, name)) {
        const v = this[name];
        delete this[name];
        this[name] = v;
      }
    }
    // `value` is read-only: an own `value` set before the module loaded would hide the
    // getter forever (it stayed stale), so it is dropped.
    if (Object.prototype.hasOwnProperty.call(this, 'value')) delete this.value;
  }

  // Moved into another document (e.g. adopted into an iframe): that document's sheet.
  adoptedCallback() {
    if (this.#w) style(this.shadowRoot);
  }

  connectedCallback() {
    const generation = ++this.#generation;
    if (!this.#w) this.#say('loading the sgm-rdp calculator…');
    load().then(
      () => {
        if (generation === this.#generation && this.isConnected && !this.#w) this.#schedule();
      },
      (e) => this.#say(`sgm-rdp-calculator: could not load ${pageWasm().href} (${e && e.message ? e.message : e})`),
    );
  }

  disconnectedCallback() {
    this.#generation++;
    this.#tightGen++;
    this.#rdpGen++;
    this.#settling = false;
    this.#chartsAfter = false;
    waiting.delete(this.#client);
    waiting.delete(`${this.#client}-rdp`);
    for (const f of this.#cleanup.splice(0)) f();
    if (this.#w) {
      this.#w.free();
      this.#w = null;
    }
  }

  attributeChangedCallback(name, _old, value) {
    if (this.#w) {
      this.#w.attr(name, value);
      this.#schedule();
    }
  }

  /** The values shown: {q, sigma, steps, delta, epsilon, alpha, conversion, epsilonPld, epsilonPldLower, sampling, groupSize}, or undefined before the first render. */
  get value() {
    return this.#w ? this.#w.value() : undefined;
  }

  /** Chart `which` ("epsilon", "bound", "training", "profile" or "risk") of the values shown as
   *  an SVG document (light theme, 900 × 560, the run named under it), or with format "csv" the
   *  tight charts' data; null when the widget does not show it or has no answer for the values
   *  shown yet (an export is never of another run). */
  exportChart(which = 'training', format = 'svg') {
    return (this.#w && this.#w.exportChart(String(which), String(format))) ?? null;
  }

  // A one-line text in place of the calculator (loading, or why it cannot load).
  #say(text) {
    const p = document.createElement('div');
    p.className = 'loading';
    p.textContent = text;
    this.shadowRoot.replaceChildren(p);
  }

  #mount() {
    const w = new Widget(this.shadowRoot, () => this.#schedule());
    style(this.shadowRoot);
    for (const a of ATTRIBUTES) w.attr(a, this.getAttribute(a));
    this.#w = w;

    // Redraw only when the resolved theme changes: docs themes toggle classes on
    // <html>/<body> on every scroll, and 200 widgets redrawing each time froze the page.
    let dark = hostIsDark(this);
    const theme = () => {
      if (!this.#w) return;
      const now = hostIsDark(this);
      if (now !== dark) {
        dark = now;
        this.#w.setHostDark(now);
        this.#schedule();
      }
    };
    const mq = matchMedia('(prefers-color-scheme: dark)');
    mq.addEventListener('change', theme);
    this.#cleanup.push(() => mq.removeEventListener('change', theme));
    // Docs themes switch by attributes on <html>/<body> (class, data-theme, style).
    const mo = new MutationObserver(theme);
    mo.observe(document.documentElement, { attributes: true });
    if (document.body) mo.observe(document.body, { attributes: true });
    this.#cleanup.push(() => mo.disconnect());

    let width = -1;
    const ro = new ResizeObserver((entries) => {
      const now = Math.round(entries[entries.length - 1].contentRect.width);
      if (now !== width) {
        width = now;
        // The first observation usually reports the width the first render drew at.
        if (this.#w && this.#w.drawnWidth() === now) return;
        this.#schedule();
      }
    });
    ro.observe(this.shadowRoot.querySelector('[part=container]'));
    this.#cleanup.push(() => ro.disconnect());

    // Charts are drawn only near the viewport (a page of two hundred widgets draws the
    // few on screen first); numbers, text and `change` events stay current everywhere.
    const io = nearObserver();
    if (io) {
      w.setOffscreen(true);
      nearWidgets.set(this, (near) => {
        if (this.#w !== w) return;
        w.setOffscreen(!near);
        if (near) {
          this.#schedule();
          // Tight charts are asked for only near the viewport (hardening round 3, #4).
          this.#askCharts(w);
        }
      });
      io.observe(this);
      this.#cleanup.push(() => { io.unobserve(this); nearWidgets.delete(this); });
    }

    w.setHostDark(dark);
  }

  // One render per task however many attributes changed; one `change` event per
  // recompute, once its numbers are settled (with the tight ε when it is asked for).
  #schedule() {
    SgmRdpCalculator.#queue.add(this);
    if (SgmRdpCalculator.#flushing) return;
    SgmRdpCalculator.#flushing = true;
    queueMicrotask(() => SgmRdpCalculator.#flush());
  }

  #run() {
    if (!this.#w) {
      if (!this.isConnected) return;
      this.#mount();
    }
    const w = this.#w;
    if (!w) return;
    const detail = w.render();
    if (!detail) {
      // Small σ: the exact-RDP model is computed in the worker, never on this thread.
      const hr = w.heavyRequest();
      if (!hr) {
        // Same values, other settings (a `charts` attribute asking for a tight chart now):
        // fetch what is missing (nothing when the charts are current).
        this.#askCharts(w);
        return;
      }
      const wk = tightWorker();
      if (!wk) {
        w.heavyAnswer({ error: `small σ needs a Web Worker: ${workerFailure}` });
        return;
      }
      const gen = ++this.#rdpGen;
      const client = `${this.#client}-rdp`;
      waiting.set(client, (data) => {
        if (this.#w !== w) return;
        if (data.failed) {
          w.heavyAnswer({ error: data.message });
          return;
        }
        if (data.gen !== gen || data.kind !== 'rdp') return;
        const d = w.heavyAnswer(data);
        if (d) this.#settle(w, d);
      });
      wk.postMessage({ ...hr, kind: 'rdp', client, gen, model: true, compare: false, chartC: false });
      return;
    }
    this.#settle(w, detail);
  }

  // The tight charts for the values shown, once the widget is near the viewport: after the
  // headline of a request in flight has settled (its `change` must not be lost), else now.
  // The answers' headline is not a new `change` (the values did not change).
  #askCharts(w) {
    if (this.#settling) {
      this.#chartsAfter = true;
      return;
    }
    if (!w.needsTightCharts()) return;
    const wk = tightWorker();
    if (!wk) return;
    const gen = ++this.#tightGen;
    waiting.set(this.#client, (data) => {
      if (this.#w !== w || data.gen !== gen) return;
      if (data.kind === 'charts' || data.kind === 'charts-error' || data.kind === 'gdp') w.tight(data);
    });
    wk.postMessage({ client: this.#client, gen, ...w.tightRequest() });
  }

  // A recompute's numbers are ready: fire `change` now, or once the tight ε is in.
  #settle(w, detail) {
    if (!w.wantsTight()) {
      this.#changed(detail);
      return;
    }
    const gen = ++this.#tightGen;
    const wk = tightWorker();
    if (!wk) {
      this.#changed(w.tight({ kind: 'error', message: workerFailure }));
      return;
    }
    this.#settling = true;
    waiting.set(this.#client, (data) => {
      // Answers for an older request of this widget are dropped.
      if (this.#w !== w || (data.gen !== gen && !data.failed)) return;
      const settled = w.tight(data);
      if (settled) {
        this.#settling = false;
        this.#changed(settled);
        if (this.#chartsAfter) {
          this.#chartsAfter = false;
          this.#askCharts(w);
        }
      }
    });
    wk.postMessage({ client: this.#client, gen, ...w.tightRequest() });
  }

  #changed(detail) {
    if (detail) this.dispatchEvent(new CustomEvent('change', { detail, bubbles: true, composed: true }));
  }
}

// Properties mirror the attributes, so frameworks that set properties (React 19, Lit, Vue) work:
// reading gives the attribute's text (or null); writing sets it (null or undefined removes it).
for (const name of ATTRIBUTES) {
  Object.defineProperty(SgmRdpCalculator.prototype, propOf(name), {
    configurable: true,
    enumerable: true,
    get() {
      return this.getAttribute(name);
    },
    set(v) {
      if (v === null || v === undefined) this.removeAttribute(name);
      else this.setAttribute(name, String(v));
    },
  });
}

if (!customElements.get(TAG)) customElements.define(TAG, SgmRdpCalculator);

/** Resolves once the wasm is loaded (the element works without awaiting this). */
export const whenReady = () => load().then(() => undefined);

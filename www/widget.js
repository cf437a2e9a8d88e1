// <sgm-rdp-calculator>: the sgm-rdp calculator as a custom element.
//
//   <script type="module" src="…/widget.js"></script>
//   <sgm-rdp-calculator q="0.01" sigma="1.1" steps="10000" delta="1e-5"></sgm-rdp-calculator>
//
// Attributes: q, sigma, steps, delta; mode="compact|full"; charts="epsilon bound|epsilon|bound|none";
// conversion="improved|classic"; theme="auto|light|dark". Each recompute fires a `change`
// CustomEvent (bubbles, composed) whose detail is {q, sigma, steps, delta, epsilon, alpha, conversion}.
//
// This file is only the element's life cycle; the contents (parsing, engine, charts) are the
// Rust `Widget` in the same wasm as the page and the JS API, loaded relative to this file's URL,
// once per page however many widgets there are.
import init, { Widget } from './sgm-rdp.js';

const HERE = import.meta.url;
const TAG = 'sgm-rdp-calculator';
const ATTRIBUTES = ['q', 'sigma', 'steps', 'delta', 'mode', 'charts', 'conversion', 'theme'];

let ready = null;
const load = () => (ready ??= init({ module_or_path: new URL('./sgm-rdp_bg.wasm', HERE) }));

// Fixed sizes in px (never rem/em): the host's font sizes must not reach in.
const CSS = `
:host { display: block !important; contain: content; }
:host([hidden]) { display: none !important; }
[hidden] { display: none !important; }
.w, .loading { all: initial; display: block; box-sizing: border-box; container-type: inline-size;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1e1e1e;
  background: #fff; border: 1px solid #d5d6dc; border-radius: 8px; padding: 10px 12px; }
.w *, .w *::before, .w *::after { box-sizing: border-box; }
.w[data-theme=dark] { color: #e6e6e6; background: #181a1f; border-color: #3a3d45; }
.head { font-size: 15px; }
.eps { font-size: 22px; font-weight: 700; }
.ctx, .sentence, .foot { color: #5f6068; font-size: 12px; }
.w[data-theme=dark] .ctx, .w[data-theme=dark] .sentence, .w[data-theme=dark] .foot { color: #a4a6ad; }
.msg, .ferr { color: #b00020; font-size: 13px; margin: 6px 0; }
.w[data-theme=dark] .msg, .w[data-theme=dark] .ferr { color: #ff8a80; }
.ferr:empty { display: none; }
.controls { display: grid; gap: 6px; margin: 8px 0; }
.field { display: grid; grid-template-columns: 150px 1fr 92px; gap: 2px 8px; align-items: center; font-size: 13px; }
.field input[type=range] { width: 100%; margin: 0; accent-color: #1f77b4; }
.field input[type=text] { width: 100%; font: 13px system-ui, sans-serif; color: inherit; background: transparent;
  border: 1px solid #9a9ba3; border-radius: 4px; padding: 2px 5px; }
.field input[aria-invalid=true] { outline: 2px solid #b00020; }
.ferr { grid-column: 1 / -1; margin: 0; }
.chart { display: block; width: 100%; margin-top: 8px; }
.sentence { margin: 8px 0 0; }
.foot { margin-top: 6px; text-align: right; }
.foot a { color: #1f77b4; }
.w[data-theme=dark] .foot a { color: #64aaf0; }
@container (max-width: 440px) {
  .field { grid-template-columns: 1fr 92px; }
  .field .name { grid-column: 1 / -1; }
}
`;

let sheet = null;
function style(root) {
  if ('adoptedStyleSheets' in Document.prototype && 'replaceSync' in CSSStyleSheet.prototype) {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
    }
    root.adoptedStyleSheets = [sheet];
  } else {
    const s = document.createElement('style');
    s.textContent = CSS;
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
  #pending = false;
  #generation = 0;

  constructor() {
    super();
    this.attachShadow({ mode: 'open' });
  }

  connectedCallback() {
    const generation = ++this.#generation;
    if (!this.#w) this.#say('loading the sgm-rdp calculator…');
    load().then(
      () => {
        if (generation === this.#generation && this.isConnected && !this.#w) this.#mount();
      },
      (e) => this.#say(`sgm-rdp-calculator: could not load ${new URL('./sgm-rdp_bg.wasm', HERE).href} (${e && e.message ? e.message : e})`),
    );
  }

  disconnectedCallback() {
    this.#generation++;
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

  /** The values shown: {q, sigma, steps, delta, epsilon, alpha, conversion}, or undefined before the first render. */
  get value() {
    return this.#w ? this.#w.value() : undefined;
  }

  // A one-line text in place of the calculator (loading, or why it cannot load).
  #say(text) {
    const p = document.createElement('div');
    p.className = 'loading';
    p.textContent = text;
    this.shadowRoot.replaceChildren(p);
    style(this.shadowRoot);
  }

  #mount() {
    const w = new Widget(this.shadowRoot, new URL('./index.html', HERE).href, () => this.#schedule());
    style(this.shadowRoot);
    for (const a of ATTRIBUTES) w.attr(a, this.getAttribute(a));
    this.#w = w;

    const theme = () => {
      if (this.#w) {
        this.#w.setHostDark(hostIsDark(this));
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
        this.#schedule();
      }
    });
    ro.observe(this.shadowRoot.querySelector('[part=container]'));
    this.#cleanup.push(() => ro.disconnect());

    w.setHostDark(hostIsDark(this));
    this.#schedule();
  }

  // One render per task however many attributes changed.
  #schedule() {
    if (this.#pending) return;
    this.#pending = true;
    queueMicrotask(() => {
      this.#pending = false;
      const w = this.#w;
      if (!w) return;
      const detail = w.render();
      if (detail) this.dispatchEvent(new CustomEvent('change', { detail, bubbles: true, composed: true }));
    });
  }
}

if (!customElements.get(TAG)) customElements.define(TAG, SgmRdpCalculator);

/** Resolves once the wasm is loaded (the element works without awaiting this). */
export const whenReady = () => load().then(() => undefined);

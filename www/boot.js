// Loads the page's wasm (sgm-rdp-page: the page and the widget, no JS API) and attaches it to this page (no inline script: strict CSP).
// If it cannot load (no WebAssembly, a failed download, memory exhausted), the page says
// why instead of leaving its placeholders (hardening round 3, #16); text only, no markup.
import init, { mountPage } from './sgm-rdp-page.js';

// The scripts run: the file:// note in index.html is not needed.
document.getElementById('needs-http')?.remove();

try {
  await init({ module_or_path: new URL('./sgm-rdp-page_bg.wasm', import.meta.url) });
  mountPage();
} catch (err) {
  const why = String(err && err.message ? err.message : err).slice(0, 300);
  const say = `The calculator could not load (${why}). Reload the page, or try another browser.`;
  for (const id of ['epsilon', 'epsilon-pld']) {
    const el = document.getElementById(id);
    if (el) el.textContent = '—';
  }
  const s = document.getElementById('sentence');
  if (s) s.textContent = say;
  const note = document.getElementById('epsilon-pld-note');
  if (note) note.textContent = say;
  console.warn('sgm-rdp:', say);
}

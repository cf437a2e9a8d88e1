// Loads the page's wasm (sgm-rdp-page: the page and the widget, no JS API) and attaches it to this page (no inline script: strict CSP).
// If it cannot load (no WebAssembly, a failed download, memory exhausted), the page says
// why instead of leaving its placeholders (hardening round 3, #16); text only, no markup.
import init, { mountPage } from './sgm-rdp-page.js';

// The scripts run: the file:// note in index.html is not needed.
document.getElementById('needs-http')?.remove();

// A file of audit scores, chosen or dropped on the audit panel, goes into its text box as
// text (never markup) and is audited; the page's wasm reads the box (files stay local).
function auditFile(file) {
  const box = document.getElementById('audit-scores');
  if (!file || !box) return;
  file.text().then((t) => {
    box.value = t;
    document.getElementById('audit-run')?.click();
  });
}
document.getElementById('audit-file')?.addEventListener('change', (e) => auditFile(e.target.files[0]));
const auditPanel = document.getElementById('audit');
auditPanel?.addEventListener('dragover', (e) => e.preventDefault());
auditPanel?.addEventListener('drop', (e) => {
  e.preventDefault();
  auditFile(e.dataTransfer && e.dataTransfer.files[0]);
});

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

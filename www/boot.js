// Loads the calculator's wasm and attaches it to this page (no inline script: strict CSP).
import init, { mountPage } from './sgm-rdp.js';
await init({ module_or_path: new URL('./sgm-rdp_bg.wasm', import.meta.url) });
mountPage();

// Loads the calculator's wasm (kept out of inline script for a strict CSP).
import init from './sgm-rdp.js';
init({ module_or_path: new URL('./sgm-rdp_bg.wasm', import.meta.url) });

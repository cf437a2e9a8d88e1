// embed.html's host-page script: log the compact widget's `change` events and size the iframe.
const log = document.getElementById('demo-log');
// An upper bound with four decimals, rounded up: the printed number stays a bound.
const up4 = (x) => {
  const s = x.toFixed(4);
  return parseFloat(s) < x ? (parseFloat(s) + 1e-4).toFixed(4) : s;
};
document.getElementById('demo-compact')?.addEventListener('change', (e) => {
  const d = e.detail;
  const tight = d.epsilonPld === null ? '' : `tight ε ≤ ${up4(d.epsilonPld)} · exact RDP `;
  log.textContent = `${tight}ε = ${up4(d.epsilon)} at α = ${d.alpha.toFixed(2)} (q = ${d.q}, σ = ${d.sigma}, steps = ${d.steps}, δ = ${d.delta})`;
});
addEventListener('message', (e) => {
  if (!e.data || e.data.type !== 'sgm-rdp-height') return;
  for (const f of document.querySelectorAll('iframe')) {
    if (f.contentWindow === e.source) f.style.height = `${e.data.height}px`;
  }
});

// A Copy button on every snippet: the clipboard where the page may use it, else the code is
// selected for Ctrl+C (plain http, iframes); the button says which.
for (const pre of document.querySelectorAll('pre')) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'copy';
  b.textContent = 'Copy';
  b.addEventListener('click', async () => {
    const text = pre.textContent;
    try {
      if (!navigator.clipboard || !isSecureContext) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      b.textContent = 'Copied';
    } catch {
      const r = document.createRange();
      r.selectNodeContents(pre);
      getSelection().removeAllRanges();
      getSelection().addRange(r);
      b.textContent = 'Selected: press Ctrl+C';
    }
    setTimeout(() => { b.textContent = 'Copy'; }, 2500);
  });
  pre.before(b);
}

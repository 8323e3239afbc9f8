import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createRegistry } from './dist/domain/handlers/registry.js';
import { typeOfFileName } from '@memex/contracts';
process.env.MEMEX_OCR = process.env.MEMEX_OCR ?? 'off';
const r = createRegistry();
const root = process.argv[2];
for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
  if (!e.isFile()) continue;
  const f = path.join(e.parentPath, e.name);
  const t = typeOfFileName(e.name);
  try {
    const i = await r.parse({ type: t, bytes: readFileSync(f), attributes: { filename: e.name } });
    console.log(`${path.relative(root, f).padEnd(60)} ${String(i.text.length).padStart(7)} ${JSON.stringify(i.title).slice(0, 40)} ${i.warnings.length ? 'W:' + i.warnings.join('|').slice(0, 80) : ''}`);
  } catch (err) { console.log(`${path.relative(root, f).padEnd(60)} REJECTED ${err.reason ?? err.message}`); }
}
process.exit(0);

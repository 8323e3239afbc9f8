import fs from 'node:fs';
import path from 'node:path';
import { createRegistry } from './dist/domain/handlers/registry.js';
import { typeOfFileName } from '@memex/contracts';
process.env.MEMEX_OCR = 'off';
const registry = createRegistry();
const root = '/work/shared/corpus/docs';
const files = [];
const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const f = path.join(d, e.name); if (e.isDirectory()) walk(f); else files.push(f); } };
walk(root);
for (const file of files) {
  const type = typeOfFileName(file);
  if (!type) { console.log('NOTYPE', path.relative(root, file)); continue; }
  try {
    const item = await registry.parse({ type, bytes: fs.readFileSync(file), attributes: { filename: path.basename(file) } });
    console.log(`${path.relative(root, file)} | ${item.kind} | ${JSON.stringify(item.title)} | ${item.occurredAt} | ${item.text.length} | ${item.warnings.join('; ').slice(0, 80)}`);
  } catch (e) { console.log(`${path.relative(root, file)} | REJECTED ${e.reason ?? e.message}`); }
}
process.exit(0);

import fs from 'node:fs';
import path from 'node:path';
import { createRegistry } from './dist/domain/handlers/registry.js';
import { typeOfFileName } from '@memex/contracts';
process.env.MEMEX_OCR = 'off'; process.env.MEMEX_TRANSCRIBE = 'off';
const registry = createRegistry();
const root = '/work/shared/corpus';
const files = [];
const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const f = path.join(d, e.name); if (e.isDirectory()) walk(f); else files.push(f); } };
walk(path.join(root, 'mail')); walk(path.join(root, 'docs'));
const report = [];
for (const file of files) {
  let type = typeOfFileName(file);
  if (!type && /\/mail\//.test(file)) type = 'message/rfc822';
  if (!type || /mbox$/.test(file)) continue;
  try {
    const item = await registry.parse({ type, bytes: fs.readFileSync(file), attributes: /\/docs\//.test(file) ? { filename: path.basename(file) } : {} });
    const texts = [item.text, ...(item.children ?? []).map((c) => c.text ?? '')];
    for (const [i, t] of texts.entries()) {
      const fffd = (t.match(/\uFFFD/g) ?? []).length;
      const long = (t.match(/[^\s]{60,}/g) ?? []).filter((w) => !/https?:|[=\/\\_-]{5}|^[A-Za-z0-9+\/=]+$/.test(w));
      const ctrl = (t.match(/[\u0000-\u0008\u000e-\u001f]/g) ?? []).length;
      const moj = (t.match(/Ã[\u0080-\u00BF]|â€/g) ?? []).length;
      if (fffd > 2 || long.length > 0 || ctrl > 0 || moj > 2) report.push(`${path.relative(root, file)}#${i}: fffd=${fffd} long=${long.length} ${JSON.stringify(long[0]?.slice(0,80) ?? '')} ctrl=${ctrl} moj=${moj}`);
    }
  } catch (e) { if (!e.reason) report.push(`${path.relative(root, file)}: ERROR ${e.message}`); }
}
console.log(files.length, 'files'); console.log(report.join('\n'));
process.exit(0);

// Writes docs/api.md, the API reference, from the catalogs (after building contracts).
import fs from 'node:fs';
import path from 'node:path';
import { renderApiDocs } from '../dist/index.js';

const target = path.resolve(import.meta.dirname, '../../docs/api.md');
fs.writeFileSync(target, renderApiDocs());
console.log(`wrote ${target}`);

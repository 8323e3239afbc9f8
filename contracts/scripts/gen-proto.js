// Writes contracts/api/memex.proto from the method catalog (run after building contracts).
import fs from 'node:fs';
import { apiCatalog, buildProto, PROTO_PATH } from '../dist/index.js';

fs.writeFileSync(PROTO_PATH, buildProto(apiCatalog));
console.log(`wrote ${PROTO_PATH}`);

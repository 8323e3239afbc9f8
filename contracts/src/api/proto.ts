import { fileURLToPath } from 'node:url';
import type { MethodCatalog } from './catalog.js';

/** contracts/api/memex.proto, generated from the catalog by `npm run gen:proto -w contracts`. */
export const PROTO_PATH = fileURLToPath(new URL('../../api/memex.proto', import.meta.url));

/** `memex.notes.put` → `NotesPut`. */
export function grpcMethodName(method: string): string {
  return method
    .replace(/^memex\./, '')
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/**
 * The gRPC face of the API: one rpc per method, params and result as google.protobuf.Struct
 * (the JSON schemas in the OpenAPI document describe their fields), plus the event stream.
 */
export function buildProto(catalog: MethodCatalog): string {
  const rpcs = catalog
    .list()
    .map(
      (m) =>
        `  // ${m.name}: ${m.summary.replace(/\n/g, ' ')}\n  rpc ${grpcMethodName(m.name)} (google.protobuf.Struct) returns (google.protobuf.Struct);`,
    )
    .join('\n');
  return `// Generated from contracts/src/api by \`npm run gen:proto -w contracts\`. Do not edit.
syntax = "proto3";

package memex.v1;

import "google/protobuf/struct.proto";

// Authenticate with the metadata "authorization: Bearer <token>". Errors use gRPC status codes
// with the memex error code and message in the details.
service Memex {
${rpcs}
  // The event stream within the caller's scope, resumable from a sequence.
  rpc Subscribe (SubscribeRequest) returns (stream Event);
}

message SubscribeRequest {
  uint64 from_seq = 1;
  repeated string types = 2;
}

message Event {
  uint64 seq = 1;
  string type = 2;
  // The whole event envelope as JSON.
  string json = 3;
}
`;
}

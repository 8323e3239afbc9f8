/**
 * Encodes small ONNX models for tests: a hand-written protobuf encoder for the handful of
 * ModelProto fields a graph of standard ops needs (field numbers from onnx/onnx.proto).
 */

class ProtoWriter {
  private readonly parts: Uint8Array[] = [];

  private varint(value: number | bigint): void {
    let v = BigInt(value);
    if (v < 0n) v += 1n << 64n; // negative int64s are encoded as 10-byte two's complement
    const bytes: number[] = [];
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) byte |= 0x80;
      bytes.push(byte);
    } while (v > 0n);
    this.parts.push(Uint8Array.from(bytes));
  }

  private key(field: number, wireType: 0 | 2): void {
    this.varint((field << 3) | wireType);
  }

  int(field: number, value: number | bigint): this {
    this.key(field, 0);
    this.varint(value);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.key(field, 2);
    this.varint(value.length);
    this.parts.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

const ELEM_TYPE = { float: 1, int64: 7 } as const;
export type OnnxElemType = keyof typeof ELEM_TYPE;

export interface OnnxInitializer {
  name: string;
  dims: number[];
  /** float32 values (row-major), or int64 values. */
  values: Float32Array | BigInt64Array;
}

export interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
  /** Integer and integer-list attributes, e.g. `{ axes: [1], keepdims: 0 }`. */
  attributes?: Record<string, number | number[]>;
}

export interface OnnxValue {
  name: string;
  type: OnnxElemType;
  /** Each dimension a fixed size or a symbolic name such as "batch". */
  shape: Array<number | string>;
}

export interface OnnxGraph {
  inputs: OnnxValue[];
  outputs: OnnxValue[];
  initializers: OnnxInitializer[];
  nodes: OnnxNode[];
  opset?: number;
}

function writeValueInfo(w: ProtoWriter, v: OnnxValue): void {
  w.string(1, v.name).message(2, (type) =>
    type.message(1, (tensor) =>
      tensor.int(1, ELEM_TYPE[v.type]).message(2, (shape) => {
        for (const d of v.shape) shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
      }),
    ),
  );
}

/** Serializes a ModelProto (IR version 8) for the given graph. */
export function encodeOnnxModel(graph: OnnxGraph): Uint8Array {
  const model = new ProtoWriter();
  model.int(1, 8); // ir_version
  model.string(2, 'memex-embeddings-test'); // producer_name
  model.message(7, (g) => {
    graph.nodes.forEach((node, i) => {
      g.message(1, (n) => {
        for (const input of node.inputs) n.string(1, input);
        for (const output of node.outputs) n.string(2, output);
        n.string(3, `${node.op}_${i}`).string(4, node.op);
        for (const [name, value] of Object.entries(node.attributes ?? {})) {
          n.message(5, (a) => {
            a.string(1, name);
            if (Array.isArray(value)) {
              for (const v of value) a.int(8, v);
              a.int(20, 7); // AttributeType.INTS
            } else {
              a.int(3, value).int(20, 2); // AttributeType.INT
            }
          });
        }
      });
    });
    g.string(2, 'test-graph');
    for (const init of graph.initializers) {
      g.message(5, (t) => {
        for (const d of init.dims) t.int(1, d);
        t.int(2, init.values instanceof Float32Array ? ELEM_TYPE.float : ELEM_TYPE.int64);
        t.string(8, init.name);
        t.bytes(9, new Uint8Array(init.values.buffer, init.values.byteOffset, init.values.byteLength));
      });
    }
    for (const input of graph.inputs) g.message(11, (v) => writeValueInfo(v, input));
    for (const output of graph.outputs) g.message(12, (v) => writeValueInfo(v, output));
  });
  model.message(8, (op) => op.string(1, '').int(2, graph.opset ?? 13)); // opset_import
  return model.finish();
}

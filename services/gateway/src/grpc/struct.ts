/** google.protobuf.Struct/Value as @grpc/proto-loader decodes them (oneofs: true), to and from JSON. */
export interface ProtoValue {
  kind?: string;
  nullValue?: number | string;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: ProtoStruct;
  listValue?: { values?: ProtoValue[] };
}
export interface ProtoStruct {
  fields?: Record<string, ProtoValue>;
}

export function fromValue(value: ProtoValue): unknown {
  switch (value.kind) {
    case 'numberValue':
      return value.numberValue;
    case 'stringValue':
      return value.stringValue;
    case 'boolValue':
      return value.boolValue;
    case 'structValue':
      return fromStruct(value.structValue ?? {});
    case 'listValue':
      return (value.listValue?.values ?? []).map(fromValue);
    default:
      return null;
  }
}

export function fromStruct(struct: ProtoStruct): Record<string, unknown> {
  return Object.fromEntries(Object.entries(struct.fields ?? {}).map(([key, value]) => [key, fromValue(value)]));
}

export function toValue(value: unknown): ProtoValue {
  if (value === null || value === undefined) return { nullValue: 0 };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(toValue) } };
  if (value instanceof Date) return { stringValue: value.toISOString() };
  return { structValue: toStruct(value as Record<string, unknown>) };
}

export function toStruct(object: Record<string, unknown>): ProtoStruct {
  return { fields: Object.fromEntries(Object.entries(object).map(([key, value]) => [key, toValue(value)])) };
}

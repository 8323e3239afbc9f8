/** Byte-level mutations for fuzzing parsers with fast-check. */
import fc from 'fast-check';

type Mutation = (b: Buffer) => Buffer;

const at = (b: Buffer, n: number) => (b.length === 0 ? 0 : n % (b.length + 1));

/**
 * One to six mutations applied in turn: overwrite a byte, truncate, insert random bytes, delete a
 * range, duplicate a slice elsewhere, insert one of the format's own tokens (latin1 strings that
 * steer the parser into its decisions), or turn CRLF into LF.
 */
export function mutations(tokens: string[]): fc.Arbitrary<Mutation> {
  const tokenBytes = tokens.map((t) => Buffer.from(t, 'latin1'));
  const one: fc.Arbitrary<Mutation> = fc.oneof(
    fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([n, v]): Mutation => (b) => {
      const out = Buffer.from(b);
      if (out.length > 0) out[n % out.length] = v;
      return out;
    }),
    fc.nat().map(
      (n): Mutation =>
        (b) =>
          b.subarray(0, at(b, n)),
    ),
    fc.tuple(fc.nat(), fc.uint8Array({ maxLength: 64 })).map(
      ([n, bytes]): Mutation =>
        (b) =>
          Buffer.concat([b.subarray(0, at(b, n)), bytes, b.subarray(at(b, n))]),
    ),
    fc.tuple(fc.nat(), fc.integer({ min: 1, max: 512 })).map(
      ([n, len]): Mutation =>
        (b) =>
          Buffer.concat([b.subarray(0, at(b, n)), b.subarray(at(b, n) + len)]),
    ),
    fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 256 })).map(([from, to, len]): Mutation => (b) => {
      const slice = b.subarray(at(b, from), at(b, from) + len);
      return Buffer.concat([b.subarray(0, at(b, to)), slice, b.subarray(at(b, to))]);
    }),
    fc.tuple(fc.nat(), fc.constantFrom(...tokenBytes)).map(
      ([n, token]): Mutation =>
        (b) =>
          Buffer.concat([b.subarray(0, at(b, n)), token, b.subarray(at(b, n))]),
    ),
    fc.constant<Mutation>((b) => Buffer.from(b.toString('latin1').replace(/\r\n/g, '\n'), 'latin1')),
  );
  return fc
    .array(one, { minLength: 1, maxLength: 6 })
    .map((list) => (b: Buffer) => list.reduce((bytes, mutate) => mutate(bytes), b));
}

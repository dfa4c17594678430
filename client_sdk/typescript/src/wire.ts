/**
 * Protobuf's wire format, for the columns only: packed arrays written from
 * and read into typed arrays in bulk, with no value boxed per element. The
 * rest of each message goes through the generated code.
 * @internal
 * @module
 */

export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A copy of bytes [start, end) as a plain Uint8Array (a Buffer's slice() would be a view). */
export function copyBytes(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return Uint8Array.prototype.slice.call(bytes, start, end);
}

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

/** A growable byte buffer that writes protobuf fields. */
export class Writer {
  private buf: Uint8Array;
  private view: DataView;
  pos = 0;

  constructor(capacity = 1024) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** The bytes written so far (a view; copy before writing more). */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  varint(v: number): void {
    // v in 0 .. 2^32 - 1
    this.room(5);
    while (v > 0x7f) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v = v >>> 7;
    }
    this.buf[this.pos++] = v;
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  bytes(field: number, b: Uint8Array): void {
    if (b.length === 0) return;
    this.tag(field, WIRE_LEN);
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  string(field: number, s: string): void {
    if (s.length === 0) return;
    this.bytes(field, new TextEncoder().encode(s));
  }

  /** A bool (omitted when false, as proto3 writes it). */
  bool(field: number, v: boolean): void {
    if (!v) return;
    this.tag(field, WIRE_VARINT);
    this.varint(1);
  }

  enumValue(field: number, v: number): void {
    if (v === 0) return;
    this.tag(field, WIRE_VARINT);
    this.varint(v);
  }

  double(field: number, v: number): void {
    if (v === 0 && !Object.is(v, -0)) return;
    this.tag(field, WIRE_I64);
    this.room(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /** A packed float column (omitted when empty). */
  floats(field: number, a: ArrayLike<number>): void {
    if (a.length === 0) return;
    this.tag(field, WIRE_LEN);
    this.varint(a.length * 4);
    this.room(a.length * 4);
    if (LITTLE_ENDIAN && a instanceof Float32Array) {
      this.buf.set(new Uint8Array(a.buffer, a.byteOffset, a.length * 4), this.pos);
    } else {
      for (let i = 0; i < a.length; ++i) this.view.setFloat32(this.pos + 4 * i, a[i], true);
    }
    this.pos += a.length * 4;
  }

  /** A packed fixed64 column. */
  fixed64s(field: number, a: ArrayLike<bigint>): void {
    if (a.length === 0) return;
    this.tag(field, WIRE_LEN);
    this.varint(a.length * 8);
    this.room(a.length * 8);
    if (LITTLE_ENDIAN && a instanceof BigUint64Array) {
      this.buf.set(new Uint8Array(a.buffer, a.byteOffset, a.length * 8), this.pos);
    } else {
      for (let i = 0; i < a.length; ++i) this.view.setBigUint64(this.pos + 8 * i, BigInt.asUintN(64, a[i]), true);
    }
    this.pos += a.length * 8;
  }

  /** A packed uint32 (or non-negative enum) column. */
  uint32s(field: number, a: ArrayLike<number>): void {
    if (a.length === 0) return;
    let size = 0;
    for (let i = 0; i < a.length; ++i) size += varintSize(a[i] >>> 0);
    this.tag(field, WIRE_LEN);
    this.varint(size);
    this.room(size);
    for (let i = 0; i < a.length; ++i) this.varint(a[i] >>> 0);
  }

  /** A packed sint32 column (zigzag). */
  sint32s(field: number, a: ArrayLike<number>): void {
    if (a.length === 0) return;
    let size = 0;
    for (let i = 0; i < a.length; ++i) size += varintSize(zigzag(a[i]));
    this.tag(field, WIRE_LEN);
    this.varint(size);
    this.room(size);
    for (let i = 0; i < a.length; ++i) this.varint(zigzag(a[i]));
  }

  /** A length-delimited field whose body `write` writes (a sub-message). */
  message(field: number, write: (w: Writer) => void): void {
    const body = new Writer(256);
    write(body);
    const b = body.finish();
    this.tag(field, WIRE_LEN);
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
}

function zigzag(v: number): number {
  return ((v << 1) ^ (v >> 31)) >>> 0;
}

function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Reads protobuf fields from a byte range. */
export class Reader {
  readonly buf: Uint8Array;
  readonly view: DataView;
  pos: number;
  readonly end: number;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    this.buf = buf;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = start;
    this.end = end;
  }

  done(): boolean {
    return this.pos >= this.end;
  }

  /** A varint of up to 64 bits as a number (exact below 2^53). */
  varint(): number {
    let result = 0;
    let shift = 1;
    for (let i = 0; i < 10; ++i) {
      if (this.pos >= this.end) throw new RangeError("truncated varint");
      const b = this.buf[this.pos++];
      result += (b & 0x7f) * shift;
      if (b < 0x80) return result;
      shift *= 128;
    }
    throw new RangeError("varint longer than 10 bytes");
  }

  /** The low 32 bits of a varint, as protobuf reads int32/uint32/enums. */
  varint32(): number {
    let result = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= this.end) throw new RangeError("truncated varint");
      const b = this.buf[this.pos++];
      if (shift < 32) result |= (b & 0x7f) << shift;
      if (b < 0x80) return result;
    }
    throw new RangeError("varint longer than 10 bytes");
  }

  sint32(): number {
    const v = this.varint32() >>> 0;
    return (v >>> 1) ^ -(v & 1);
  }

  /** A length prefix, checked against the range; returns [start, end). */
  span(): [number, number] {
    const n = this.varint();
    const start = this.pos;
    if (start + n > this.end) throw new RangeError("length past the end of the message");
    this.pos = start + n;
    return [start, start + n];
  }

  fixed64(): bigint {
    if (this.pos + 8 > this.end) throw new RangeError("truncated fixed64");
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  sfixed32(): number {
    if (this.pos + 4 > this.end) throw new RangeError("truncated sfixed32");
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }

  float(): number {
    if (this.pos + 4 > this.end) throw new RangeError("truncated float");
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  skip(wire: number): void {
    switch (wire) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_I64:
        this.pos += 8;
        break;
      case WIRE_LEN:
        this.span();
        return;
      case WIRE_I32:
        this.pos += 4;
        break;
      default:
        throw new RangeError(`unsupported wire type ${wire}`);
    }
    if (this.pos > this.end) throw new RangeError("field past the end of the message");
  }
}

type Kind = "sint32" | "sfixed32" | "uint32" | "float" | "fixed64";

/** Collects one repeated column, packed or not, into a typed array. */
export class ColumnReader<T extends Int32Array | Uint32Array | Float32Array | BigUint64Array> {
  private chunks: T[] = [];
  constructor(private readonly kind: Kind) {}

  /** Reads one occurrence of the field (`wire` as the tag said). */
  read(r: Reader, wire: number): void {
    if (wire !== WIRE_LEN) {
      this.chunks.push(this.one(r) as T);
      return;
    }
    const [start, end] = r.span();
    this.chunks.push(this.packed(r, start, end) as T);
  }

  private one(r: Reader): Int32Array | Uint32Array | Float32Array | BigUint64Array {
    switch (this.kind) {
      case "sint32":
        return Int32Array.of(r.sint32());
      case "sfixed32":
        return Int32Array.of(r.sfixed32());
      case "uint32":
        return Uint32Array.of(r.varint32() >>> 0);
      case "float":
        return Float32Array.of(r.float());
      case "fixed64":
        return BigUint64Array.of(r.fixed64());
    }
  }

  private packed(r: Reader, start: number, end: number): Int32Array | Uint32Array | Float32Array | BigUint64Array {
    const bytes = r.buf;
    if (this.kind === "float" || this.kind === "fixed64" || this.kind === "sfixed32") {
      const width = this.kind === "fixed64" ? 8 : 4;
      if ((end - start) % width !== 0) throw new RangeError("packed column not a whole number of values");
      const n = (end - start) / width;
      if (LITTLE_ENDIAN) {
        const copy = copyBytes(bytes, start, end).buffer;
        return this.kind === "float"
          ? new Float32Array(copy)
          : this.kind === "sfixed32"
            ? new Int32Array(copy)
            : new BigUint64Array(copy);
      }
      const sub = new Reader(bytes, start, end);
      if (this.kind === "float") {
        const out = new Float32Array(n);
        for (let i = 0; i < n; ++i) out[i] = sub.float();
        return out;
      }
      if (this.kind === "sfixed32") {
        const out = new Int32Array(n);
        for (let i = 0; i < n; ++i) out[i] = sub.sfixed32();
        return out;
      }
      const out = new BigUint64Array(n);
      for (let i = 0; i < n; ++i) out[i] = sub.fixed64();
      return out;
    }
    let n = 0;
    for (let i = start; i < end; ++i) if (bytes[i] < 0x80) ++n;
    const sub = new Reader(bytes, start, end);
    if (this.kind === "sint32") {
      const out = new Int32Array(n);
      for (let i = 0; i < n; ++i) out[i] = sub.sint32();
      return out;
    }
    const out = new Uint32Array(n);
    for (let i = 0; i < n; ++i) out[i] = sub.varint32() >>> 0;
    return out;
  }

  /** The column (empty when the field never came). */
  result(): T {
    if (this.chunks.length === 1) return this.chunks[0];
    const make = {
      sint32: (n: number) => new Int32Array(n),
      sfixed32: (n: number) => new Int32Array(n),
      uint32: (n: number) => new Uint32Array(n),
      float: (n: number) => new Float32Array(n),
      fixed64: (n: number) => new BigUint64Array(n),
    }[this.kind];
    const total = this.chunks.reduce((s, c) => s + c.length, 0);
    const out = make(total) as T;
    let at = 0;
    for (const c of this.chunks) {
      (out as unknown as { set(a: T, at: number): void }).set(c, at);
      at += c.length;
    }
    return out;
  }
}

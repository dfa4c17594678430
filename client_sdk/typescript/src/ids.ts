/**
 * Decision ids. The service numbers each batch's decisions from one
 * `decisionIdBase`: decision i's id is SplitMix64(base + i) (mod 2^64),
 * shown as 16 lowercase hex digits — the id the full form carries, the one
 * in the decision log and the live feed (docs/SERVICE.md).
 * @module
 */

const MASK = (1n << 64n) - 1n;

/** SplitMix64's output function of `z` (mod 2^64). */
export function splitMix64(z: bigint): bigint {
  z &= MASK;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
  return z ^ (z >> 31n);
}

/** The id of decision `i` of a batch numbered from `base`. */
export function decisionId(base: bigint, i: number): bigint {
  return splitMix64(base + BigInt(i));
}

/** `id` as the service writes it: 16 lowercase hex digits. */
export function decisionIdHex(id: bigint): string {
  return (id & MASK).toString(16).padStart(16, "0");
}

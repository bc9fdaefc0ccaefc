/** A deterministic source of numbers in [0, 1): the same sequence for one seed on every platform. */
export type Rng = () => number;

/** mulberry32: small and fast; a seeded run (a corpus, a chaos schedule) can be replayed exactly. */
export function seededRng(seed: number): Rng {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Character classes and Python-compatible character predicates shared by every redaction rule. */

export const F_ALNUM = 1; // [A-Za-z0-9]
export const F_URLSAFE = 2; // [A-Za-z0-9_-]
export const F_B64 = 4; // [A-Za-z0-9+/]
export const F_UPDIG = 8; // [A-Z0-9]
export const F_HOST = 16; // [a-zA-Z0-9._-]
export const F_LETTER = 32; // [A-Za-z]
export const F_DIGIT = 64; // [0-9]
export const F_BEARER = 128; // [A-Za-z0-9._~+/-]
export const F_SLACK = 256; // [0-9a-zA-Z-]
export const F_B64EQ = 512; // [A-Za-z0-9+/=]
export const F_HEX = 1024; // [0-9A-Fa-f]
export const F_IPV6 = 2048; // [0-9A-Fa-f:.]
export const F_WORD = 4096; // [A-Za-z0-9_]
export const F_IDENT = 8192; // [A-Za-z0-9_.-]
export const F_SCHEME = 16384; // [A-Za-z0-9+.-]

export const CLS = new Uint16Array(128);
(() => {
  const add = (chars: string, flag: number): void => {
    for (let k = 0; k < chars.length; k++) {
      const code = chars.charCodeAt(k);
      CLS[code] = (CLS[code] ?? 0) | flag;
    }
  };
  const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const lower = "abcdefghijklmnopqrstuvwxyz";
  const digits = "0123456789";
  const alnum = upper + lower + digits;
  add(alnum, F_ALNUM | F_URLSAFE | F_B64 | F_HOST | F_BEARER | F_SLACK | F_B64EQ | F_WORD | F_IDENT);
  add(alnum, F_SCHEME);
  add("_-", F_URLSAFE);
  add("+/", F_B64 | F_B64EQ);
  add("=", F_B64EQ);
  add(upper + digits, F_UPDIG);
  add("._-", F_HOST);
  add(upper + lower, F_LETTER);
  add(digits, F_DIGIT);
  add("._~+/-", F_BEARER);
  add("-", F_SLACK);
  add(`${digits}ABCDEFabcdef`, F_HEX | F_IPV6);
  add(":.", F_IPV6);
  add("_", F_WORD | F_IDENT);
  add(".-", F_IDENT);
  add("+.-", F_SCHEME);
})();

export function has(c: number, flag: number): boolean {
  return c >= 0 && c < 128 && ((CLS[c] ?? 0) & flag) !== 0;
}

/** Python's `\s` for str patterns (differs from JS `\s`: adds \x1c-\x1f and U+0085, drops U+FEFF). */
export function pyWs(c: number): boolean {
  if (c < 0) return false;
  if (c <= 0x20) return c === 0x20 || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** Code points in `s[a:b]`: the reference reports lengths in Python `str` units. */
export function codePointLength(s: string, a = 0, b = s.length): number {
  let n = 0;
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < b) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

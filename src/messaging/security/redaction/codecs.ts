/** Byte codecs with CPython's semantics: base64, UTF-8 with error handlers, JSON object check, URL unquoting. */
import { F_HEX, has } from "./chars.js";

export const B64_VALUE = new Int8Array(128).fill(-1);
(() => {
  const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let k = 0; k < 64; k++) B64_VALUE[std.charCodeAt(k)] = k;
})();

/** Decodes base64 data characters (no padding) like CPython's non-strict decoder; null on a 4n+1 length. */
export function b64DecodeData(s: string, a: number, b: number, urlsafe: boolean): Uint8Array | null {
  const len = b - a;
  if (len % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((len * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = a; i < b; i++) {
    let c = s.charCodeAt(i);
    if (urlsafe) {
      if (c === 45) c = 43;
      else if (c === 95) c = 47;
    }
    const v = c < 128 ? (B64_VALUE[c] ?? -1) : -1;
    if (v < 0) return null;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
      acc &= (1 << bits) - 1;
    }
  }
  return out.subarray(0, o);
}

export type Utf8Errors = "strict-surrogatepass" | "replace" | "ignore";

/**
 * UTF-8 decoding with CPython's error handlers: invalid input is consumed one
 * "maximal subpart" at a time (Unicode §3.9), which is also what CPython does.
 * Returns null for a strict failure.
 */
export function utf8Decode(bytes: Uint8Array, errors: Utf8Errors): string | null {
  let out = "";
  let i = 0;
  const n = bytes.length;
  const strict = errors === "strict-surrogatepass";
  const mark = errors === "replace" ? "\ufffd" : "";
  while (i < n) {
    const b0 = bytes[i] as number;
    if (b0 < 0x80) {
      out += String.fromCharCode(b0);
      i++;
      continue;
    }
    let need = 0;
    let lo = 0x80;
    let hi = 0xbf;
    let cp = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      need = 1;
      cp = b0 & 0x1f;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      need = 2;
      cp = b0 & 0x0f;
      if (b0 === 0xe0) lo = 0xa0;
      else if (b0 === 0xed && errors !== "strict-surrogatepass") hi = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      need = 3;
      cp = b0 & 0x07;
      if (b0 === 0xf0) lo = 0x90;
      else if (b0 === 0xf4) hi = 0x8f;
    } else {
      if (strict) return null;
      out += mark;
      i++;
      continue;
    }
    let j = i + 1;
    let ok = true;
    for (let k = 0; k < need; k++, j++) {
      const bk = j < n ? (bytes[j] as number) : -1;
      const l = k === 0 ? lo : 0x80;
      const h = k === 0 ? hi : 0xbf;
      if (bk < l || bk > h) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (bk & 0x3f);
    }
    if (!ok) {
      if (strict) return null;
      out += mark;
      i = j;
      continue;
    }
    out += String.fromCodePoint(cp);
    i = j;
  }
  return out;
}

/** Whether a JWT header segment base64url-decodes to a JSON object (Python json.loads semantics). */
export function isJsonObjectSegment(seg: string): boolean {
  const bytes = b64DecodeData(seg, 0, seg.length, true);
  if (bytes === null) return false;
  let text = utf8Decode(bytes, "strict-surrogatepass");
  if (text === null) return false;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // json.loads(bytes) decodes as utf-8-sig
  // An object starts with `{` and ends with `}` (JSON whitespace aside): reject the
  // common garbage without paying for a parser exception.
  if (!looksLikeJsonObjectText(text)) return false;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const relaxed = replacePythonJsonConstants(text);
    if (relaxed === text) return false;
    try {
      value = JSON.parse(relaxed);
    } catch {
      return false;
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isJsonWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

export function looksLikeJsonObjectText(text: string): boolean {
  let a = 0;
  let b = text.length;
  while (a < b && isJsonWs(text.charCodeAt(a))) a++;
  while (b > a && isJsonWs(text.charCodeAt(b - 1))) b--;
  return b - a >= 2 && text.charCodeAt(a) === 123 && text.charCodeAt(b - 1) === 125;
}

/** Python's json accepts NaN/Infinity/-Infinity; map them to 0 outside strings so JSON.parse agrees. */
export function replacePythonJsonConstants(text: string): string {
  let out = "";
  let inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inStr) {
      out += c;
      if (c === "\\") {
        out += text[i + 1] ?? "";
        i++;
      } else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') {
      inStr = true;
      out += c;
      continue;
    }
    const rest = text.startsWith("-Infinity", i) ? 9 : text.startsWith("Infinity", i) ? 8 : 0;
    if (rest > 0) {
      out += "0";
      i += rest - 1;
    } else if (text.startsWith("NaN", i)) {
      out += "0";
      i += 2;
    } else out += c;
  }
  return out;
}

/** Python `urllib.parse.unquote_plus` (utf-8, errors="replace"). */
export function unquotePlus(s: string): string {
  return unquote(s.replace(/\+/g, " "));
}

/** Python `urllib.parse.unquote`: only ASCII runs are percent-decoded; bytes decode as UTF-8 with replacement. */
export function unquote(s: string): string {
  if (!s.includes("%")) return s;
  let out = "";
  let i = 0;
  const n = s.length;
  while (i < n) {
    if (s.charCodeAt(i) >= 0x80) {
      let j = i;
      while (j < n && s.charCodeAt(j) >= 0x80) j++;
      out += s.slice(i, j);
      i = j;
      continue;
    }
    let j = i;
    while (j < n && s.charCodeAt(j) < 0x80) j++;
    const bytes: number[] = [];
    for (let k = i; k < j; k++) {
      const c = s.charCodeAt(k);
      if (c === 37 && k + 2 < j && has(s.charCodeAt(k + 1), F_HEX) && has(s.charCodeAt(k + 2), F_HEX)) {
        bytes.push(Number.parseInt(s.slice(k + 1, k + 3), 16));
        k += 2;
      } else bytes.push(c);
    }
    out += utf8Decode(Uint8Array.from(bytes), "replace") ?? "";
    i = j;
  }
  return out;
}

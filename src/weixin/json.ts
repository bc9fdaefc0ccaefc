/**
 * iLink's answers read with every integer JSON.parse would round kept as its exact decimal string.
 * `message_id` is an integer on the wire (Tencent/openclaw-weixin src/api/types.ts `WeixinMessage`),
 * and an id past 2^53 parsed as a double loses its last digits: two messages a few hundred apart
 * become one dedupe key and the second is dropped as a redelivery.
 *
 * Why a reader of our own rather than a package: Node 20 has no JSON.parse source access (the
 * reviver's `context.source` arrived in Node 21), no lossless parser is installed, and a runtime
 * dependency for one field weighs more than this pass. It is not a parser: it only quotes unsafe
 * integer literals found outside strings, and JSON.parse does all the reading (invalid JSON still
 * throws). A safe integer stays a number, so every other field reads as before.
 */

/** The text with each integer literal beyond Number's exact range wrapped in quotes. */
export function quoteUnsafeIntegers(text: string): string {
  let out = "";
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // A string: skipped whole (an escape takes the next character with it).
      i += 1;
      while (i < text.length && text.charCodeAt(i) !== QUOTE) i += text.charCodeAt(i) === BACKSLASH ? 2 : 1;
      i += 1;
      continue;
    }
    if (c === MINUS || isDigit(c)) {
      const start = i;
      i += 1;
      while (i < text.length && isNumberPart(text.charCodeAt(i))) i += 1;
      const literal = text.slice(start, i);
      if (INTEGER.test(literal) && !Number.isSafeInteger(Number(literal))) {
        out += `${text.slice(copied, start)}"${literal}"`;
        copied = i;
      }
      continue;
    }
    i += 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** JSON.parse, with unsafe integers as exact strings. */
export function parseJsonLossless(text: string): unknown {
  return JSON.parse(quoteUnsafeIntegers(text));
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const INTEGER = /^-?\d+$/;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** What may follow the first character of a JSON number: digits, `.`, an exponent and its sign. */
function isNumberPart(c: number): boolean {
  return isDigit(c) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS;
}

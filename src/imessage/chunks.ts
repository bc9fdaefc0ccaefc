/**
 * Splitting runs last, on text that is already flat (plaintext.ts): each message at most `limit`
 * code points, cut at the latest paragraph break that fits, else line break, else space, else a hard
 * cut at a grapheme-cluster boundary (`Intl.Segmenter`): a cut inside a flag, a skin-toned emoji or
 * a combining accent shows as garbage on both sides. CJK, having no spaces, reaches the hard cut.
 *
 * A cut never severs a credential: a key split across two bubbles is whole again to a reader, and
 * each bubble screened alone would not see it. A cut that would is moved earlier (the kit's
 * safeSplitOffset), and every piece is screened again alone (the form its bubble shows).
 */

import { safeSplitOffset, seversACredential } from "../messaging/security/display-safety.js";
import { codePointLength } from "../messaging/security/redact.js";
import { imessageSafe } from "./plaintext.js";

/** The cap parley declares for one iMessage (code points): conservative, iMessage publishes none. */
export const IMESSAGE_MAX_CHARS = 4000;
/** Code points either side of a cut that the credential check reads (a PEM block fits inside). */
const CUT_CONTEXT = 4096;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Flat text into messages of at most `limit` code points, in order, none blank. */
export function splitFlat(text: string, limit = IMESSAGE_MAX_CHARS): string[] {
  const out: string[] = [];
  let rest = text;
  let rounds = 0;
  while (codePointLength(rest) > limit) {
    const { head, tail } = cutOnce(rest, limit);
    out.push(head);
    rest = tail;
    // Each round takes at least one grapheme; a runaway is impossible, the bound is a belt.
    if (++rounds > 100_000) break;
  }
  out.push(rest);
  return out.flatMap((piece) => rescreen(piece, limit)).filter((piece) => piece.trim() !== "");
}

/** A piece screened alone may grow (a redaction marker); split again if it no longer fits. */
function rescreen(piece: string, limit: number): string[] {
  const safe = imessageSafe(piece);
  if (codePointLength(safe) <= limit) return [safe];
  return splitFlat(safe, limit);
}

/** One message off the front of `text` (longer than `limit`), and what remains. */
function cutOnce(text: string, limit: number): { head: string; tail: string } {
  const window = prefixOfPoints(text, limit);
  const natural = naturalCut(window);
  const at = natural ?? graphemeCut(window);
  const sep = natural === null ? 0 : separatorLength(window, at);
  if (!severs(text, at, sep)) return { head: text.slice(0, at), tail: text.slice(at + sep) };
  // Move the cut earlier until no credential spans it, then back to a grapheme boundary.
  const safe = safeSplitOffset(text.slice(0, at + sep + CUT_CONTEXT), codePointLength(text.slice(0, at)));
  const snapped = safe > 0 ? graphemeCut(text.slice(0, safe + 16), safe) : 0;
  // Nothing earlier is safe: a cut that severs beats never sending (each piece is still screened alone).
  const cut = snapped > 0 ? snapped : at;
  return { head: text.slice(0, cut), tail: text.slice(cut) };
}

/**
 * The latest paragraph break, else line break, else space in the window (a UTF-16 index), or null.
 * A break in the window's first half is taken only when no kind of break lies in its second half:
 * a paragraph break after the first words of a long code block would otherwise send them alone.
 */
function naturalCut(window: string): number | null {
  const seps = ["\n\n", "\n", " "].map((sep) => window.lastIndexOf(sep));
  const late = seps.find((at) => at >= window.length / 2);
  if (late !== undefined) return late;
  const early = seps.find((at) => at > 0);
  return early ?? null;
}

function separatorLength(window: string, at: number): number {
  if (window.startsWith("\n\n", at)) return 2;
  return window[at] === "\n" || window[at] === " " ? 1 : 0;
}

/** The largest grapheme boundary at or below `max` (default: the window's end), never 0 for a non-empty window. */
function graphemeCut(window: string, max = window.length): number {
  let last = 0;
  for (const { index, segment } of graphemes.segment(window)) {
    const end = index + segment.length;
    if (end > max) break;
    last = end;
  }
  // A single cluster longer than the window: cut by code points (still never a surrogate pair).
  if (last === 0) return prefixOfPoints(window, 1).length;
  return last;
}

function severs(text: string, at: number, sep: number): boolean {
  const head = text.slice(Math.max(0, at - CUT_CONTEXT), at);
  const tail = text.slice(at + sep, at + sep + CUT_CONTEXT);
  return seversACredential([head, tail], undefined, (p) => p.trim());
}

function prefixOfPoints(text: string, points: number): string {
  let i = 0;
  let n = 0;
  while (i < text.length && n < points) {
    const code = text.codePointAt(i) ?? 0;
    i += code > 0xffff ? 2 : 1;
    n += 1;
  }
  return text.slice(0, i);
}

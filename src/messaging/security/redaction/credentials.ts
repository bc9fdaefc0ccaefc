/** The credential stage: passes 1-5 combined into one plan over a (possibly unfinished) text. */

import { type B64Chunk, chunkDecodesToCredential, containsBareSecret, scanB64Chunks } from "./base64-runs.js";
import { codePointLength } from "./chars.js";
import { ENCODED_REDACTION_MARKER, REDACTION_MARKER } from "./markers.js";
import { isIntegrityDigest } from "./placeholders.js";
import { scanPass1 } from "./provider-tokens.js";
import { loudClusters, quietCredentialCut, quietPlan } from "./quiet.js";
import { Src } from "./source.js";
import {
  byStartThenEnd,
  notInsidePair,
  type Range,
  type RedactionSpan,
  type StagePlan,
  settleCut,
  sortSpans,
  spansBefore,
  uncovered,
} from "./spans.js";
import { markerAt, type ParamHit, scanParams, tokenParamAt } from "./url-params.js";
import { type ExtraHit, scanExtra } from "./wider-rules.js";

/**
 * Adds pass-5 hits (sorted by start) to the reference spans. A hit that leaves
 * something in plaintext is merged with every span it overlaps (and whatever those
 * reach) into one credential span, so no reference span is ever cut in two; a hit
 * already fully covered adds nothing. One sweep: spans left of a hit are final.
 */
export function mergeExtras(
  taken: readonly RedactionSpan[],
  extras: readonly ExtraHit[],
): { spans: RedactionSpan[]; accepted: ExtraHit[] } {
  const res: RedactionSpan[] = [];
  const accepted: ExtraHit[] = [];
  let p = 0;
  for (const x of extras) {
    const xs = x.redactStart;
    const xe = x.redactEnd;
    if (xe <= xs) continue;
    while (p < taken.length && (taken[p] as RedactionSpan).end <= xs) res.push(taken[p++] as RedactionSpan);
    // Covered? Only the last emitted span and the pending reference spans can overlap [xs, xe).
    let cursor = xs;
    const last = res[res.length - 1];
    if (last !== undefined && last.start <= cursor && last.end > cursor) cursor = last.end;
    for (let q = p; q < taken.length && cursor < xe; q++) {
      const t = taken[q] as RedactionSpan;
      if (t.start > cursor) break;
      cursor = Math.max(cursor, t.end);
    }
    if (cursor >= xe) continue;
    accepted.push(x);
    let lo = xs;
    let hi = xe;
    if (last !== undefined && last.end > lo && last.start < hi) {
      res.pop();
      lo = Math.min(lo, last.start);
      hi = Math.max(hi, last.end);
    }
    while (p < taken.length && (taken[p] as RedactionSpan).start < hi) {
      const t = taken[p++] as RedactionSpan;
      lo = Math.min(lo, t.start);
      hi = Math.max(hi, t.end);
    }
    res.push({ start: lo, end: hi, replacement: REDACTION_MARKER });
  }
  while (p < taken.length) res.push(taken[p++] as RedactionSpan);
  return { spans: res, accepted };
}

/**
 * Plans credential redaction for `text[start:]` (`text[:start]` is context only).
 * Passes are ranked: 1 (patterns) > 2 (base64-encoded) > 3 (bare secrets) > 4
 * (`token=` values), as in the reference; a later pass redacts only what earlier
 * passes left in plaintext. Pass 5 (this port's wider rules) runs last and merges
 * with whatever it overlaps, so the reference's spans are never split.
 */
export function planCredentials(text: string, start = 0, eof = true): StagePlan {
  const quiet = quietCredentialCut(text, start, eof);
  return quiet >= 0 ? quietPlan(quiet) : planCredentialsFull(text, start, eof);
}

/**
 * The credential spans of a complete text: none for quiet text, the spans of each loud cluster
 * planned alone when long runs are all that is loud (quiet.ts, loudClusters), the full plan
 * otherwise. The same spans as `planCredentialsFull(text, 0, true)`, without its warnings.
 */
export function credentialSpans(text: string): RedactionSpan[] {
  const clusters = loudClusters(text);
  if (clusters === null) return planCredentialsFull(text, 0, true).spans;
  const spans: RedactionSpan[] = [];
  for (const w of clusters) {
    for (const sp of planCredentialsFull(text.slice(w.start, w.end), 0, true).spans)
      spans.push({ start: sp.start + w.start, end: sp.end + w.start, replacement: sp.replacement });
  }
  return spans;
}

/** {@link planCredentials} without the quiet-text fast path (exported for the tests that pin the two equal). */
export function planCredentialsFull(text: string, start: number, eof: boolean): StagePlan {
  const src = new Src(text, eof);
  const warnings: string[] = [];
  // Regions (scanner extents a restart must not split) matter only to a stream.
  const regions: Range[] | null = eof ? null : [];

  let taken: RedactionSpan[] = [];
  const u1 = scanPass1(src, start, true, taken);
  for (const h of taken)
    warnings.push(`Redacted credential pattern (${codePointLength(text, h.start, h.end)} chars)`);

  const chunks: B64Chunk[] = [];
  const u23 = scanB64Chunks(src, start, chunks);
  const pass2: RedactionSpan[] = [];
  for (const ch of chunks) {
    regions?.push({ start: ch.start, end: ch.end });
    if (!chunkDecodesToCredential(text, ch.start, ch.dataEnd, ch.end)) continue;
    warnings.push(`Redacted base64-encoded credential (${ch.end - ch.start} chars)`);
    for (const g of uncovered(ch.start, ch.end, taken))
      pass2.push({ start: g.start, end: g.end, replacement: ENCODED_REDACTION_MARKER });
  }
  if (pass2.length > 0) taken = sortSpans(taken.concat(pass2));

  const pass3: RedactionSpan[] = [];
  for (const ch of chunks) {
    if (isIntegrityDigest(text, ch.start, ch.dataEnd) || !containsBareSecret(text, ch.start, ch.dataEnd))
      continue;
    const gaps = uncovered(ch.start, ch.dataEnd, taken);
    if (gaps.length === 0) continue;
    for (const g of gaps) pass3.push({ start: g.start, end: g.end, replacement: REDACTION_MARKER });
    warnings.push(`Redacted bare secret key (${ch.dataEnd - ch.start} chars)`);
  }
  if (pass3.length > 0) taken = sortSpans(taken.concat(pass3));

  const params: ParamHit[] = [];
  const u4 = scanParams(src, start, params, tokenParamAt);
  const pass4: RedactionSpan[] = [];
  for (const p of params) {
    regions?.push({ start: p.start, end: p.valueEnd });
    if (markerAt(src, p.valueStart)) continue;
    const gaps = uncovered(p.valueStart, p.valueEnd, taken);
    if (gaps.length === 0) continue;
    for (const g of gaps) pass4.push({ start: g.start, end: g.end, replacement: REDACTION_MARKER });
    warnings.push(
      `Redacted token parameter value (${codePointLength(text, p.valueStart, p.valueEnd)} chars)`,
    );
  }
  if (pass4.length > 0) taken = sortSpans(taken.concat(pass4));

  const extras: ExtraHit[] = [];
  const u5 = scanExtra(src, start, extras);
  if (extras.length > 0) {
    extras.sort(byStartThenEnd);
    for (const x of extras) regions?.push({ start: x.start, end: x.end });
    const merged = mergeExtras(taken, extras);
    taken = merged.spans;
    for (const x of merged.accepted)
      warnings.push(`Redacted ${x.rule} (${codePointLength(text, x.redactStart, x.redactEnd)} chars)`);
  }

  if (regions === null) return { spans: taken, warnings, cut: text.length };
  for (const t of taken) regions.push(t);
  const cut = notInsidePair(text, settleCut(Math.min(u1, u23, u4, u5), regions));
  return { spans: spansBefore(taken, cut), warnings, cut };
}

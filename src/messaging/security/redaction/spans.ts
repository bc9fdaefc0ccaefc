/** Decided replacements (spans), their ordering and splicing, and the streaming cut that never splits one. */

/** One decided replacement, in the coordinates of the stage's input text. */
export interface RedactionSpan {
  start: number;
  end: number;
  replacement: string;
}

/**
 * What a stage decided about a text, used by both the batch functions and the
 * stream redactor. `cut` is the offset up to which everything is final: no span,
 * scanner match or pending decision straddles it, and no rule needs text beyond the
 * buffer to settle anything before it. With `eof` it is the text's length.
 */
export interface StagePlan {
  spans: RedactionSpan[];
  warnings: string[];
  cut: number;
}

export interface Range {
  start: number;
  end: number;
}

export function byStartThenEnd(a: Range, b: Range): number {
  return a.start - b.start || a.end - b.end;
}

export function sortSpans(spans: RedactionSpan[]): RedactionSpan[] {
  return spans.sort(byStartThenEnd);
}

/** The spans that end at or before `cut` (all of them when nothing is pending). */
export function spansBefore(spans: RedactionSpan[], cut: number): RedactionSpan[] {
  const out: RedactionSpan[] = [];
  for (const sp of spans) if (sp.end <= cut) out.push(sp);
  return out;
}

/** Parts of [start, end) that no span in the sorted, disjoint `taken` covers. */
export function uncovered(start: number, end: number, taken: readonly RedactionSpan[]): Range[] {
  const gaps: Range[] = [];
  let lo = 0;
  let hi = taken.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((taken[mid] as RedactionSpan).end <= start) lo = mid + 1;
    else hi = mid;
  }
  let cursor = start;
  for (let k = lo; k < taken.length; k++) {
    const t = taken[k] as RedactionSpan;
    if (t.start >= end) break;
    if (t.start > cursor) gaps.push({ start: cursor, end: t.start });
    cursor = Math.max(cursor, t.end);
  }
  if (cursor < end) gaps.push({ start: cursor, end });
  return gaps;
}

/** Rewrites `text[from:to]` with the spans inside it (sorted, disjoint). */
export function spliceSpans(
  text: string,
  spans: readonly RedactionSpan[],
  from = 0,
  to = text.length,
): string {
  let out = "";
  let cursor = from;
  for (const sp of spans) {
    if (sp.start < from || sp.end > to) continue;
    out += text.slice(cursor, sp.start) + sp.replacement;
    cursor = sp.end;
  }
  return out + text.slice(cursor, to);
}

/**
 * The streaming cut: the earliest undecided offset, moved left until it no longer
 * sits strictly inside any decided region (a span, or a scanner match whose extent
 * would be read differently if scanning restarted inside it).
 */
export function settleCut(cut: number, regions: Range[]): number {
  if (regions.length === 0) return cut;
  regions.sort(byStartThenEnd);
  let curStart = -1;
  let curEnd = -1;
  let result = cut;
  for (const r of regions) {
    if (r.end <= r.start) continue;
    if (r.start < curEnd) {
      curEnd = Math.max(curEnd, r.end);
      continue;
    }
    if (curStart < cut && cut < curEnd) result = Math.min(result, curStart);
    curStart = r.start;
    curEnd = r.end;
  }
  if (curStart < cut && cut < curEnd) result = Math.min(result, curStart);
  return result;
}

/** Never leave a surrogate pair split across two emitted pieces. */
export function notInsidePair(s: string, cut: number): number {
  if (cut <= 0 || cut >= s.length) {
    if (cut === s.length && cut > 0) {
      const c = s.charCodeAt(cut - 1);
      if (c >= 0xd800 && c <= 0xdbff) return cut - 1;
    }
    return cut;
  }
  const prev = s.charCodeAt(cut - 1);
  const next = s.charCodeAt(cut);
  return prev >= 0xd800 && prev <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? cut - 1 : cut;
}

/**
 * The one clip: cuts count Unicode code points (never UTF-16 units, so a surrogate pair is never
 * split) and end in "…" when something was cut. Every channel clips through here (a ratchet test
 * keeps it the only copy).
 */

/** `text` cut to at most `max` code points, the last one an ellipsis when anything was cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return max <= 0 ? "" : `${chars.slice(0, max - 1).join("")}…`;
}

/** Text for a single line of chat UI: whitespace and control runs collapsed, trimmed, then clipped. */
export function oneLine(text: string, max: number): string {
  return clip(text.replace(/[\s\p{Cc}]+/gu, " ").trim(), max);
}

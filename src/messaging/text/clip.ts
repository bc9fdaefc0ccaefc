/** Text for a single line of chat UI: whitespace runs collapsed, trimmed, cut at `max` code points. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = Array.from(flat);
  // Code points, not UTF-16 units: a cut never splits a surrogate pair.
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join("")}…`;
}

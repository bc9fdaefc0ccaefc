/**
 * What iLink shows, and the one path every body takes. iLink renders Markdown (emphasis, code, lists,
 * links, pipe tables), so Markdown is kept and tables stay native; what it does not draw is reduced
 * by the shared reductions (a mermaid fence becomes arrows). Then: a fence the model left open is
 * closed, the display-form floor (HTML comments dropped, credentials redacted against what iLink
 * RENDERS: a key split by emphasis or code spans is seen whole), the fence-safe shared splitter at
 * 4,000 code points, and each part redacted again alone (a reader sees parts one by one, and a cut
 * can expose what the whole hid). WeChat has no @-broadcast in a 1:1 chat: nothing to defang.
 */
import { codePointLength } from "../messaging/security/redact.js";
import { closeOpenFence, iterFenceLines, openerOf } from "../messaging/text/fences.js";
import { flattenMermaidBody, MERMAID_INFO } from "../messaging/text/markup.js";
import { displaySafeFor } from "../messaging/text/options.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";

/** The spec's cap for one Weixin message, in code points. */
export const WEIXIN_MAX_CHARS = 4000;

/** A mermaid fence as readable arrows (kept as written when the diagram is not understood). */
export function reduceUnrendered(text: string): string {
  if (!/mermaid/i.test(text)) return text;
  const out: string[] = [];
  let diagram: string[] | null = null;
  let opener = "";
  for (const [line, role] of iterFenceLines(text)) {
    if (role === "open") {
      const info =
        (openerOf(line)?.opener ?? "")
          .trim()
          .replace(/^[`~]+/, "")
          .trim()
          .split(/\s+/)[0] ?? "";
      if (info.toLowerCase() === MERMAID_INFO) {
        diagram = [];
        opener = line;
        continue;
      }
    }
    if (diagram !== null && role === "body") {
      diagram.push(line);
      continue;
    }
    if (diagram !== null && role === "close") {
      const arrows = flattenMermaidBody(diagram.join("\n"));
      out.push(...(arrows ? ["*Diagram*", ...arrows.split("\n")] : [opener, ...diagram, line]));
      diagram = null;
      continue;
    }
    out.push(line);
  }
  // An unclosed diagram keeps its source; closeOpenFence ends it.
  if (diagram !== null) out.push(opener, ...diagram);
  return out.join("\n");
}

/** The display floor on what iLink renders (no mention grammar to defang). */
export function weixinSafe(text: string): string {
  return displaySafeFor(text, { mentionGrammars: false });
}

/** Markdown as the bodies of the messages that carry it, in order: each display-safe, ≤ 4,000 code points. */
export function weixinBodies(markdown: string, maxChars: number = WEIXIN_MAX_CHARS): string[] {
  const shaped = closeOpenFence(reduceUnrendered(markdown));
  const safe = weixinSafe(shaped);
  if (safe.trim() === "") return [];
  return splitMarkdownSafe(safe, maxChars)
    .flatMap((part) => within(weixinSafe(part), maxChars, 0))
    .filter((part) => part.trim() !== "");
}

/** A part the second redaction lengthened past the cap is split again (a few rounds, then by code points). */
function within(part: string, maxChars: number, round: number): string[] {
  if (codePointLength(part) <= maxChars) return [part];
  if (round < 3) {
    const again = splitMarkdownSafe(part, Math.floor(maxChars * 0.9));
    if (again.length > 1) return again.flatMap((p) => within(weixinSafe(p), maxChars, round + 1));
  }
  const points = Array.from(part);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += maxChars) out.push(points.slice(i, i + maxChars).join(""));
  return out;
}

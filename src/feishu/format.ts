/**
 * Feishu's dialect and sinks. Every body parley sends is a `post` holding ONE `md` element (Feishu
 * renders its Markdown: emphasis, links, code blocks, lists, quotes, and `<at>` mention tags), shaped
 * on one path: tables flattened to cards (a `post` draws no table), a fence the model left open
 * closed, the display-form floor (HTML comments dropped, credentials redacted against what Feishu
 * RENDERS, `<at` tags defanged so model text can notify nobody), the fence-safe shared splitter at
 * 4,000 code points, and each part bounded again by Feishu's request-size cap for a `post`, counted
 * in UTF-8 bytes of the request itself (the content is JSON inside JSON, so escapes count twice).
 */
import { codePointLength } from "../messaging/security/redact.js";
import { closerOf, type FenceState, nextFence } from "../messaging/text/fences.js";
import { displaySafeFor } from "../messaging/text/options.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import { renderTables } from "../messaging/text/tables/index.js";
import type { OutgoingMessage } from "./client.js";

/** The spec's cap for one Feishu message, in code points. */
export const FEISHU_MAX_CHARS = 4000;
/**
 * Feishu caps a `post` request at 30 KB; parley reads that as 30,000 bytes, the smaller reading, so
 * a body it sends can never be the one Feishu refuses for size.
 */
export const FEISHU_POST_MAX_BYTES = 30_000;
/** One locale: Feishu shows a post's only locale to every reader, whatever their language. */
const LOCALE = "zh_cn";
/** A `uuid` is at most 50 characters; the size check assumes the longest. */
const UUID_ROOM = "u".repeat(50);

export interface BodyCaps {
  maxChars: number;
  maxBytes: number;
}

export const FEISHU_CAPS: BodyCaps = { maxChars: FEISHU_MAX_CHARS, maxBytes: FEISHU_POST_MAX_BYTES };

/** The `post` that carries `md`: one paragraph, one `md` element. */
export function postMessage(md: string): OutgoingMessage {
  return {
    msgType: "post",
    content: JSON.stringify({ [LOCALE]: { title: "", content: [[{ tag: "md", text: md }]] } }),
  };
}

/** The UTF-8 size of the reply request that would carry `md` (the largest uuid included). */
export function requestBytes(md: string): number {
  const m = postMessage(md);
  return Buffer.byteLength(JSON.stringify({ content: m.content, msg_type: m.msgType, uuid: UUID_ROOM }));
}

/**
 * Break Feishu's mention grammar (`<at user_id="all">`, `<at id=all>`, `<at email=…>`) with a
 * zero-width space after `<`: the text stays readable and no one is notified. Narrow on purpose:
 * an e-mail address or a decorator in code keeps every byte. Idempotent.
 */
export function defangMentions(text: string): string {
  return text.replace(/<(?=\s*at\b)/gi, "<\u200b");
}

/** The display floor at every sink: comments dropped, credentials redacted as rendered, then the defang. */
export function feishuSafe(text: string): string {
  // The shared sink's own "@" defang is for platforms with @everyone; Feishu's grammar is the tag.
  return defangMentions(displaySafeFor(text, { mentionGrammars: false }));
}

/** Close a fence the text leaves open, so what follows it (a status line) is not swallowed as code. */
export function closeOpenFence(text: string): string {
  let state: FenceState = null;
  for (const line of text.split("\n")) state = nextFence(state, line);
  if (state === null) return text;
  return `${text}${text.endsWith("\n") ? "" : "\n"}${closerOf(state)}`;
}

/** Markdown as the bodies of the replies that carry it, in order: each display-safe and within `caps`. */
export function feishuBodies(markdown: string, caps: BodyCaps = FEISHU_CAPS): string[] {
  const shaped = closeOpenFence(
    renderTables(markdown, { policy: "cards", nativeTables: false, final: true }),
  );
  const safe = feishuSafe(shaped);
  if (safe.trim() === "") return [];
  // Each part is redacted again alone: a reader sees parts one by one, and a cut can expose what the
  // whole hid (the floor is a fixed point, so this changes nothing unless a cut did).
  return splitMarkdownSafe(safe, caps.maxChars)
    .flatMap((part) => withinCaps(feishuSafe(part), caps, 0))
    .filter((part) => part.trim() !== "");
}

const fits = (md: string, caps: BodyCaps) =>
  codePointLength(md) <= caps.maxChars && requestBytes(md) <= caps.maxBytes;

/**
 * One part into parts that fit both caps: split again, fence-safe, at a budget shrunk in proportion
 * to the overflow; past a few rounds (or a line that cannot be split) cut by code points.
 */
function withinCaps(md: string, caps: BodyCaps, round: number): string[] {
  if (fits(md, caps)) return [md];
  const chars = codePointLength(md);
  const budget = Math.floor(
    Math.min(caps.maxChars, (chars * caps.maxBytes) / Math.max(1, requestBytes(md))) * 0.95,
  );
  if (round < 4 && budget >= 16) {
    const parts = splitMarkdownSafe(md, budget);
    if (parts.length > 1) return parts.flatMap((part) => withinCaps(feishuSafe(part), caps, round + 1));
  }
  return hardCut(md, caps);
}

/** What one code point adds to the request: its escape inside the content, escaped again in the body. */
function pointBytes(point: string): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(point).slice(1, -1)).slice(1, -1));
}

/** The last resort: greedy by code points (never inside a surrogate pair) until a cap would pass. */
function hardCut(md: string, caps: BodyCaps): string[] {
  const overhead = requestBytes("");
  const out: string[] = [];
  let current = "";
  let points = 0;
  let bytes = overhead;
  for (const point of md) {
    const cost = pointBytes(point);
    if (current !== "" && (points + 1 > caps.maxChars || bytes + cost > caps.maxBytes)) {
      out.push(current);
      current = "";
      points = 0;
      bytes = overhead;
    }
    current += point;
    points += 1;
    bytes += cost;
  }
  if (current !== "") out.push(current);
  return out;
}

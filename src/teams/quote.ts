/**
 * A quote-reply, unwrapped. Right-click → Reply in a 1:1 chat sends a text/html body attachment in
 * which the user's own words follow a `<blockquote itemtype="http://schema.skype.com/Reply">` (the
 * shape of Graph's chatMessage examples). What Teams puts in `text` for such a message has no
 * official reference; the words after the blockquote are read first so that, should `text` carry
 * the quote too (third-party bots report it prepended), a quote-replied `/stop` still starts with
 * `/`. Defensive only: an unfamiliar shape yields "" and the caller falls back to `text`, so a
 * message is never lost to this. Pure.
 */
import type { TeamsActivity } from "./wire.js";

const REPLY_QUOTE =
  /<blockquote\b[^>]*itemtype=["']http:\/\/schema\.skype\.com\/Reply["'][^>]*>[\s\S]*?<\/blockquote>/i;

const ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith("#x") || name.startsWith("#X"))
      return safeCodePoint(Number.parseInt(name.slice(2), 16), whole);
    if (name.startsWith("#")) return safeCodePoint(Number.parseInt(name.slice(1), 10), whole);
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function safeCodePoint(cp: number, fallback: string): string {
  return Number.isInteger(cp) && cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff)
    ? String.fromCodePoint(cp)
    : fallback;
}

/** HTML as the words it shows: paragraph and line breaks kept, every tag dropped, entities decoded. */
function htmlText(html: string): string {
  const lines = html
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/(p|div)>/gi, "\n")
    .replace(/<[^>]*>/g, "");
  return decodeEntities(lines)
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** The user's own words of a quote-reply; "" when the activity is not one (or not a shape read here). */
export function quotedReplyText(activity: Pick<TeamsActivity, "attachments">): string {
  for (const a of activity.attachments ?? []) {
    if (a.contentType !== "text/html" || typeof a.content !== "string") continue;
    const quote = REPLY_QUOTE.exec(a.content);
    if (!quote) continue;
    return htmlText(a.content.slice((quote.index ?? 0) + quote[0].length));
  }
  return "";
}

/** What a message says: a quote-reply's own words, else its text. */
export function messageText(activity: Pick<TeamsActivity, "attachments" | "text">): string {
  return quotedReplyText(activity) || (activity.text ?? "");
}

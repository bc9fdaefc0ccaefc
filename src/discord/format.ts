/**
 * Text shaping for Discord's sinks: the display-form floor, the hard-cap fallback and the subtext
 * line. Discord renders Markdown as-is, so there is no conversion step; what reaches a message is
 * source text that has passed `discordSafe` and fits DISCORD_MAX_TEXT.
 */
import { redactForDisplay } from "../messaging/security/display-safety.js";
import { codePointLength } from "../messaging/security/redact.js";
import { oneLine } from "../messaging/text/clip.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";

/** Discord's hard cap, in characters. */
export const DISCORD_MAX_TEXT = 2000;
/** The live budget: 100 under the cap, so a reopened fence's scaffolding never reaches it. */
export const DISCORD_SOFT_LIMIT = 1900;
/** Room held back for a steer chip or the turn-status footer on a segment. */
export const CHIP_FOOTER_HEADROOM = 100;
export const SEGMENT_LIMIT = DISCORD_SOFT_LIMIT - CHIP_FOOTER_HEADROOM;

/**
 * Neutralize Discord's mention grammar with a zero-width space: @everyone, @here and <@…> / <@&…>
 * user and role pills. allowed_mentions already stops the ping; this stops the pill, so a model
 * cannot make its text look like it addressed a person. Narrower than the shared defang on purpose:
 * an e-mail address or a decorator in code stays byte-identical.
 */
export function defangMentions(text: string): string {
  return text.replace(/@(everyone|here)\b/g, "@\u200b$1").replace(/<@(?=[!&]?\d)/g, "<@\u200b");
}

/** The floor at every sink: redact the form Discord RENDERS, then defang (last, so no key is split). */
export function discordSafe(text: string): string {
  return defangMentions(redactForDisplay(text).text);
}

/**
 * The last resort at the single seal chokepoint: anything still over the cap (the splitter's
 * documented whole-line overshoot, a redaction marker longer than the key it replaced) is sliced at
 * fixed width. It keeps every authored character at the price of a boundary Markdown may render
 * badly, where a truncating send would drop the tail, synthetic closer included, with no signal.
 */
export function fitPlatformCap(text: string, cap = DISCORD_MAX_TEXT): string[] {
  if (codePointLength(text) <= cap) return [text];
  const cps = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += cap) out.push(cps.slice(i, i + cap).join(""));
  return out;
}

/** Split a whole message for delivery (proactive sends, recovery): fence-safe, then capped. */
export function splitForDelivery(text: string, limit = DISCORD_SOFT_LIMIT): string[] {
  return splitMarkdownSafe(text, limit).flatMap((chunk) => fitPlatformCap(chunk));
}

/** Discord subtext: one low-emphasis line. Newlines would end it, so the text is flattened. */
export function subtext(text: string): string {
  return `-# ${oneLine(text, Number.MAX_SAFE_INTEGER)}`;
}

/** Append a line if it fits under the cap; a line that does not fit is dropped, never truncated. */
export function withLine(content: string, line: string, cap = DISCORD_MAX_TEXT): string {
  if (!line) return content;
  const joined = content ? `${content}\n${line}` : line;
  return codePointLength(joined) <= cap ? joined : content;
}

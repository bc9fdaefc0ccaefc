/**
 * Text shaping for Slack's sinks. Two forms leave parley:
 * - mrkdwn (every posted or edited message): Markdown converted here, with `&`, `<` and `>` escaped
 *   everywhere, so model text can never form `<!channel>`, `<@U…>`, `<#C…>` or a `<url|label>` link
 *   whose target is hidden behind its label (a Markdown link is shown as `label (url)`);
 * - Markdown (native streaming's `markdown_text`), where `<` is kept but defanged with a zero-width
 *   space wherever it could open a Slack control sequence.
 * Each is redacted against the form Slack RENDERS (redactForDisplay), and only then escaped or
 * defanged, so the inserted characters can never split a key out of the scan.
 */
import { redactForDisplay } from "../messaging/security/display-safety.js";
import { codePointLength } from "../messaging/security/redact.js";
import { iterFenceLines } from "../messaging/text/fences.js";

/** The ledger's per-message cap (Slack advises under 4,000 characters). */
export const SLACK_MAX_TEXT = 3900;
/** Slack's cap on one streamed `markdown_text` chunk. */
export const SLACK_MAX_APPEND = 12_000;
/** Room held back on a segment for the steer chip, refusal notes and the turn-status footer. */
export const FOOTER_HEADROOM = 400;
export const SEGMENT_LIMIT = SLACK_MAX_TEXT - FOOTER_HEADROOM;
/** A section block's text cap. */
export const SECTION_MAX = 3000;

export { codePointLength };

/** Escape the three characters Slack reads as control syntax. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const BOLD = "\u0001";

/** One line outside code: inline code kept verbatim (escaped), the rest converted. */
function inline(line: string): string {
  return line
    .split(/(`[^`\n]*`)/)
    .map((part, i) => (i % 2 === 1 ? escapeMrkdwn(part) : convertProse(part)))
    .join("");
}

function convertProse(text: string): string {
  return (
    escapeMrkdwn(text)
      // Images and links show their target: a label must never hide where a click goes.
      .replace(/!?\[([^\]\n]*)\]\(([^()\s]+)\)/g, (_m, label: string, url: string) =>
        label && label !== url ? `${label} (${url})` : url,
      )
      .replace(/\*\*(?=\S)([^*\n]*?\S)\*\*/g, `${BOLD}$1${BOLD}`)
      .replace(/__(?=\S)([^_\n]*?\S)__/g, `${BOLD}$1${BOLD}`)
      .replace(/(?<![*\w])\*(?=\S)([^*\n]*?\S)\*(?![*\w])/g, "_$1_")
      .replace(/~~(?=\S)([^~\n]*?\S)~~/g, "~$1~")
      .replaceAll(BOLD, "*")
  );
}

/** Markdown to Slack mrkdwn, line by line under the shared fence machine. */
export function toMrkdwn(markdown: string): string {
  return Array.from(iterFenceLines(markdown), ([line, role]) => {
    // Slack shows an info string as code: the fence opens bare.
    if (role === "open") return line.replace(/^(\s*)(`{3,}|~{3,}).*$/, "$1```");
    if (role === "close") return line.replace(/^(\s*)(`{3,}|~{3,})\s*$/, "$1```");
    if (role === "body") return escapeMrkdwn(line);
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) return `*${inline(heading[1] ?? "")}*`;
    // A quote keeps Slack's own `>`: escaping it would show the bracket instead of the bar.
    const quote = /^ {0,3}>\s?(.*)$/.exec(line);
    if (quote) return `> ${inline(quote[1] ?? "")}`;
    return inline(line.replace(/^(\s*)[-*+]\s+(?=\S)/, "$1• "));
  }).join("\n");
}

/** The floor for a posted message: redact the mrkdwn Slack renders (escaping already applied). */
export function mrkdwnSafe(markdown: string): string {
  return redactForDisplay(toMrkdwn(markdown)).text;
}

/**
 * Break every `<` that could open a Slack control sequence (`<!channel>`, `<@U…>`, `<#C…>`,
 * `<https://…|label>`) with a zero-width space. Applied after redaction; only ever inserts after a
 * `<`, so a text already defanged is a prefix of its longer defanged continuation.
 */
export function defangSlack(text: string): string {
  return text.replace(/<(?=[!@#]|[A-Za-z][A-Za-z0-9+.-]*:)/g, "<\u200b");
}

/** The floor for streamed Markdown that is not gated (a chunk posted whole). */
export function markdownSafe(markdown: string): string {
  return defangSlack(redactForDisplay(markdown).text);
}

/** The floor for a plain_text field (button labels, titles): nothing renders, the key still shows. */
export function plainSafe(text: string): string {
  return redactForDisplay(text).text;
}

/**
 * Inbound mrkdwn to the plain text the agent reads: entities unescaped, links as `label (url)`,
 * mentions as @id. Slack escapes `&<>` in every message text, so this is the only decoding needed.
 */
export function plainFromMrkdwn(text: string): string {
  return text
    .replace(/<([^<>|\n]+)\|([^<>\n]*)>/g, (_m, target: string, label: string) => formatTarget(target, label))
    .replace(/<([^<>\n]+)>/g, (_m, target: string) => formatTarget(target, ""))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

function formatTarget(target: string, label: string): string {
  if (target.startsWith("@") || target.startsWith("#")) return label ? `${target[0]}${label}` : target;
  if (target.startsWith("!")) return `@${label || target.slice(1).split("^")[0]}`;
  return label && label !== target ? `${label} (${target})` : target;
}

/**
 * The last resort at a sink: anything still over the cap (escaping grew it, a redaction marker is
 * longer than the key it replaced) is cut at fixed width, never inside an `&…;` entity or a
 * surrogate pair. It keeps every character at the price of a boundary mrkdwn may render badly,
 * where a truncating send would drop the tail with no signal.
 */
export function fitCap(text: string, cap = SLACK_MAX_TEXT): string[] {
  if (codePointLength(text) <= cap) return [text];
  const cps = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < cps.length; ) {
    let end = Math.min(cps.length, i + cap);
    if (end < cps.length) {
      const amp = cps.lastIndexOf("&", end - 1);
      if (amp > i && end - amp < 8 && !cps.slice(amp, end).includes(";")) end = amp;
    }
    out.push(cps.slice(i, end).join(""));
    i = end;
  }
  return out;
}

/** Append a line if it fits under the cap; one that does not fit is dropped, never truncated. */
export function withLine(content: string, line: string, cap = SLACK_MAX_TEXT): string {
  if (!line) return content;
  const joined = content ? `${content}\n${line}` : line;
  return codePointLength(joined) <= cap ? joined : content;
}

/**
 * Markdown -> Telegram-HTML, the one form every message body takes. Telegram rejects a message whose
 * tags do not nest (400 "can't parse entities"), so the converter only ever emits a tag together
 * with its closer: fenced code through the shared fence machine (an unclosed fence in a live frame
 * still closes), emphasis by recursive pairing on one line (an unpaired `*` stays literal), and
 * links only for schemes Telegram opens. Everything else is escaped text.
 *
 * toTelegramHtml is the sink: display-form redaction on the source (a key split by `**` reads whole
 * once rendered), conversion, then the VISIBLE text of the HTML is graded again, and a message that
 * still shows a credential loses its formatting rather than its redaction.
 */
import { redactForDisplay } from "../messaging/security/display-safety.js";
import { codePointLength } from "../messaging/security/redact.js";
import { iterFenceLines, splitMarkdownSafe } from "../messaging/text/split.js";
import { TELEGRAM_MAX_MESSAGE_UTF16 } from "./limits.js";

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttr(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

const ENTITY: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };
const ESCAPED: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/** What a reader sees of our HTML: tags dropped, the entities we emit decoded. */
export function htmlVisibleText(html: string): string {
  return html.replace(/<[^>]*>/g, "").replace(/&(lt|gt|amp|quot);/g, (_, name: string) => ENTITY[name] ?? "");
}

// ── inline ──────────────────────────────────────────────────────────────────────────────────────

const SAFE_SCHEME = /^(?:https?:\/\/|tg:\/\/|mailto:)/i;
const LINK_AT = /\[([^[\]\n]*)\]\(([^()\s]+)\)/y;
/** Longest delimiter first, so `**` is not read as two `*`. */
const EMPHASIS: ReadonlyArray<readonly [string, string]> = [
  ["**", "b"],
  ["__", "b"],
  ["~~", "s"],
  ["||", "tg-spoiler"],
  ["*", "i"],
  ["_", "i"],
];
/**
 * Pairing searches forward for a closer, which is quadratic on a line of unpaired delimiters; a line
 * with more than this many is model output shaped like an attack or a drawing, and stays literal.
 */
const MAX_DELIMITERS_PER_LINE = 200;

const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/** Index of a closer for `delim` opened at `open`, or -1. Content must be non-empty and not space-padded. */
function findCloser(line: string, open: number, delim: string): number {
  const start = open + delim.length;
  if (start >= line.length || /\s/.test(line[start] as string)) return -1;
  // `_` inside a word (snake_case) is not emphasis.
  if (delim[0] === "_" && isWordChar(line[open - 1])) return -1;
  let at = line.indexOf(delim, start + 1);
  while (at >= 0) {
    const before = line[at - 1] as string;
    const after = line[at + delim.length];
    const single = delim.length === 1 && (after === delim || before === delim);
    if (!/\s/.test(before) && !single && !(delim[0] === "_" && isWordChar(after))) return at;
    at = line.indexOf(delim, at + 1);
  }
  return -1;
}

function inline(line: string): string {
  if ((line.match(/[*_~|`[]/g)?.length ?? 0) > MAX_DELIMITERS_PER_LINE) return escapeHtml(line);
  return inlineRange(line);
}

/** Where inline markup can start; everything between two of these is copied as one escaped run. */
const MARKUP_START = /[`[*_~|]/g;

function inlineRange(line: string): string {
  let out = "";
  let i = 0;
  while (i < line.length) {
    // One escaped slice per plain run, not one string per character: a megabyte line must not
    // become a rope of a million one-character pieces (collection made that super-linear).
    MARKUP_START.lastIndex = i;
    const next = MARKUP_START.exec(line)?.index ?? line.length;
    if (next > i) {
      out += escapeHtml(line.slice(i, next));
      i = next;
      continue;
    }
    const c = line[i] as string;
    if (c === "`") {
      const close = line.indexOf("`", i + 1);
      if (close > i + 1) {
        out += `<code>${escapeHtml(line.slice(i + 1, close))}</code>`;
        i = close + 1;
        continue;
      }
    } else if (c === "[") {
      LINK_AT.lastIndex = i;
      const m = LINK_AT.exec(line);
      if (m && SAFE_SCHEME.test(m[2] as string)) {
        out += `<a href="${escapeAttr(m[2] as string)}">${inlineRange(m[1] as string)}</a>`;
        i = LINK_AT.lastIndex;
        continue;
      }
    } else {
      const hit = EMPHASIS.find(([d]) => line.startsWith(d, i));
      if (hit) {
        const [delim, tag] = hit;
        const close = findCloser(line, i, delim);
        if (close > 0) {
          out += `<${tag}>${inlineRange(line.slice(i + delim.length, close))}</${tag}>`;
          i = close + delim.length;
          continue;
        }
        out += escapeHtml(delim);
        i += delim.length;
        continue;
      }
    }
    out += escapeHtml(c);
    i += 1;
  }
  return out;
}

// ── blocks ──────────────────────────────────────────────────────────────────────────────────────

const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const QUOTE = /^ {0,3}>[ \t]?(.*)$/;
const BULLET = /^([ \t]*)[-*+][ \t]+(.*)$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;

function languageOf(openLine: string): string {
  const info = openLine
    .trim()
    .replace(/^(`{3,}|~{3,})/, "")
    .trim();
  const word = info.split(/\s+/)[0] ?? "";
  return /^[A-Za-z0-9_+#.-]{1,32}$/.test(word) ? word : "";
}

/** Convert markdown to Telegram-HTML whose tags always nest (see the module comment). */
export function markdownToTelegramHtml(markdown: string): string {
  const out: string[] = [];
  let code: string[] | null = null;
  let lang = "";
  let quote: string[] = [];
  const flushQuote = () => {
    if (quote.length) out.push(`<blockquote>${quote.join("\n")}</blockquote>`);
    quote = [];
  };
  const flushCode = () => {
    const open = lang ? `<pre><code class="language-${escapeAttr(lang)}">` : "<pre><code>";
    out.push(`${open}${escapeHtml((code ?? []).join("\n"))}</code></pre>`);
    code = null;
  };
  for (const [line, role] of iterFenceLines(markdown)) {
    if (role === "open") {
      flushQuote();
      code = [];
      lang = languageOf(line);
    } else if (role === "body") {
      code ??= [];
      code.push(line);
    } else if (role === "close") flushCode();
    else {
      const q = QUOTE.exec(line);
      if (q) {
        quote.push(inline(q[1] as string));
        continue;
      }
      flushQuote();
      const h = HEADING.exec(line);
      const b = BULLET.exec(line);
      if (h) out.push(`<b>${inline(h[1] as string)}</b>`);
      else if (RULE.test(line)) out.push("──────────");
      else if (b) out.push(`${b[1]}• ${inline(b[2] as string)}`);
      else out.push(inline(line));
    }
  }
  flushQuote();
  // A live frame may end inside a fence: close it, so the frame still parses.
  if (code !== null) flushCode();
  return out.join("\n");
}

/** The display-safe HTML for one message body (see the module comment). */
export function toTelegramHtml(source: string): string {
  const safe = redactForDisplay(source).text;
  const html = markdownToTelegramHtml(safe);
  const shown = redactForDisplay(htmlVisibleText(html));
  return shown.changed ? escapeHtml(shown.text) : html;
}

/**
 * One source segment as wire-ready HTML bodies, each within Telegram's 4096 UTF-16 units. Escaping,
 * tags and redaction markers can grow a segment sized in source code points past the wire cap;
 * such a segment is re-split (fence-balanced, the shared splitter) smaller until every body fits.
 * Nothing is truncated. `reserve` leaves room for a suffix the caller appends to the LAST body.
 */
export function fitTelegramHtml(source: string, reserve = 0, depth = 0): string[] {
  const cap = TELEGRAM_MAX_MESSAGE_UTF16 - reserve;
  const html = toTelegramHtml(source);
  if (html.length <= cap) return html === "" ? [] : [html];
  const points = codePointLength(source);
  const limit = Math.max(64, Math.floor((points * cap * 0.9) / html.length));
  const pieces = depth < 6 && limit < points ? splitMarkdownSafe(source, limit) : [];
  if (pieces.length > 1) return pieces.flatMap((p: string) => fitTelegramHtml(p, reserve, depth + 1));
  // No markdown-safe progress (pathological input): cut plain escaped text by code points. The
  // string's own iterator, not an array of every character: a multi-megabyte text must not become
  // millions of live strings (old-space collection made this step super-linear).
  const out: string[] = [];
  let current = "";
  for (const ch of htmlVisibleText(html)) {
    const piece = ESCAPED[ch] ?? ch;
    if (current.length + piece.length > cap) {
      out.push(current);
      current = "";
    }
    current += piece;
  }
  if (current) out.push(current);
  return out;
}

/**
 * The fake's own reading of Telegram-HTML: which tags Telegram accepts, and the visible text a user
 * sees. Written independently of src/telegram/html.ts on purpose: the fake must catch a converter
 * bug, not agree with it.
 */

const ALLOWED = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "span",
  "tg-spoiler",
  "a",
  "code",
  "pre",
  "blockquote",
  "tg-emoji",
]);

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

export class HtmlParseError extends Error {}

/** Parse like the Bot API does: unknown or unbalanced tags are an error. Returns the visible text. */
export function parseTelegramHtml(html: string): string {
  const stack: string[] = [];
  let visible = "";
  let i = 0;
  while (i < html.length) {
    const c = html[i] as string;
    if (c === "<") {
      const end = html.indexOf(">", i);
      if (end < 0) throw new HtmlParseError("can't parse entities: unclosed start tag");
      const raw = html.slice(i + 1, end);
      const closing = raw.startsWith("/");
      const name = (closing ? raw.slice(1) : raw).trim().split(/\s+/)[0]?.toLowerCase() ?? "";
      if (!ALLOWED.has(name))
        throw new HtmlParseError(`can't parse entities: unsupported start tag "${name}"`);
      if (closing) {
        if (stack.pop() !== name)
          throw new HtmlParseError(`can't parse entities: unmatched end tag "${name}"`);
      } else stack.push(name);
      i = end + 1;
      continue;
    }
    if (c === ">") throw new HtmlParseError("can't parse entities: stray '>'");
    if (c === "&") {
      const end = html.indexOf(";", i);
      const name = end < 0 ? "" : html.slice(i + 1, end);
      if (name in ENTITIES) visible += ENTITIES[name];
      else if (/^#[0-9]{1,7}$/.test(name)) visible += String.fromCodePoint(Number(name.slice(1)));
      else if (/^#x[0-9a-f]{1,6}$/i.test(name))
        visible += String.fromCodePoint(Number.parseInt(name.slice(2), 16));
      else throw new HtmlParseError("can't parse entities: unsupported entity");
      i = end + 1;
      continue;
    }
    visible += c;
    i += 1;
  }
  if (stack.length > 0) throw new HtmlParseError(`can't parse entities: unclosed tag "${stack.at(-1)}"`);
  return visible;
}

/**
 * What a Feishu user SEES of a bot message, as the fake records it: the `md` of a post (or a text
 * message's text) with the markup Feishu renders away removed (links to their labels, emphasis,
 * strike and code delimiters, fence lines) and `<at …>` tags resolved to names, noting whether one
 * of them notifies everyone. Deliberately simple: it is the reader's view a test asserts on, not a
 * Markdown engine.
 */

export interface Rendered {
  visible: string;
  /** An `<at …all…>` tag that Feishu would turn into a mention of everyone. */
  mentionsAll: boolean;
  /** The open_ids an `<at>` tag would notify. */
  mentions: string[];
}

/** `<at user_id="ou_x">Name</at>`, `<at id=all></at>`, `<at email='…'></at>`: the grammar Feishu reads. */
const AT_TAG = /<at\s+([^>]*)>([^<]*)<\/at>/gi;
const AT_ATTR = /\b(user_id|id|open_id|email)\s*=\s*["']?([^"'\s>]+)["']?/i;
const LINK = /\[([^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)/g;
const FENCE_LINE = /^\s*(```|~~~).*$/gm;
const DELIMITERS = /\*\*|__|~~|\*|`/g;

export function renderVisible(md: string): Rendered {
  const mentions: string[] = [];
  let mentionsAll = false;
  const withAts = md.replace(AT_TAG, (_tag, attrs: string, name: string) => {
    const target = AT_ATTR.exec(attrs)?.[2] ?? "";
    if (target.toLowerCase() === "all") {
      mentionsAll = true;
      return "@all";
    }
    if (target) mentions.push(target);
    return `@${name || target}`;
  });
  const visible = withAts.replace(LINK, "$1").replace(FENCE_LINE, "").replace(DELIMITERS, "");
  return { visible, mentionsAll, mentions };
}

/** The `md` texts of a post's content (every locale's paragraphs, in order), or null if not a post. */
export function postMarkdown(content: unknown): string | null {
  if (typeof content !== "object" || content === null) return null;
  for (const locale of Object.values(content as Record<string, unknown>)) {
    const paragraphs = (locale as { content?: unknown } | null)?.content;
    if (!Array.isArray(paragraphs)) continue;
    const texts: string[] = [];
    for (const paragraph of paragraphs)
      for (const element of Array.isArray(paragraph) ? paragraph : [])
        if (typeof element?.text === "string") texts.push(element.text);
    return texts.join("\n");
  }
  return null;
}

/**
 * A received message's content as parley reads it: the words (a `text` message, or a `post`'s
 * paragraphs as Markdown), the files it carries as descriptors (never fetched: Feishu files are not
 * taken yet, and the hub says so), and whether the bot was mentioned. Mention placeholders
 * (`@_user_1`) resolve through the event's `mentions`: the bot's own is dropped (it is how a group
 * addresses the bot, not part of the question), anyone else's becomes their name. Pure.
 */
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { FeishuMention } from "./wire.js";

export interface ReadContent {
  text: string;
  files: InboundAttachment[];
  /** The bot's open_id is among the mentions. */
  mentionsBot: boolean;
}

type Json = Record<string, unknown>;

/** Message types that are a file and nothing else, with the name a notice would give them. */
const FILE_TYPES: Readonly<Record<string, string>> = {
  image: "image",
  file: "file",
  audio: "voice message",
  media: "video",
  sticker: "sticker",
};

/** Whether parley reads this message type at all (a card, a shared chat… it does not). */
export function readsMessageType(type: string): boolean {
  return type === "text" || type === "post" || Object.hasOwn(FILE_TYPES, type);
}

/** The message's content, or null for a type parley does not read (a card, a shared chat…). */
export function readContent(
  type: string,
  content: string,
  mentions: readonly FeishuMention[],
  botOpenId: string | null,
): ReadContent | null {
  let body: Json;
  try {
    body = JSON.parse(content) as Json;
  } catch {
    return null;
  }
  if (typeof body !== "object" || body === null) return null;
  const mentionsBot = botOpenId !== null && mentions.some((m) => m.id?.open_id === botOpenId);
  const names = mentionNames(mentions, botOpenId);
  if (type === "text") {
    if (typeof body.text !== "string") return null;
    return { text: resolveMentions(body.text, names), files: [], mentionsBot };
  }
  if (type === "post") {
    const post = postOf(body);
    if (!post) return null;
    return { ...readPost(post, names), mentionsBot };
  }
  const kind = FILE_TYPES[type];
  if (kind) {
    const ref = String(body.file_key ?? body.image_key ?? "");
    const name = typeof body.file_name === "string" && body.file_name ? body.file_name : kind;
    return { text: "", files: ref ? [{ name, ref }] : [{ name, ref: `${type}:unknown` }], mentionsBot };
  }
  return null;
}

/** Placeholder -> what replaces it: "" for the bot, "@Name" for anyone else. */
function mentionNames(mentions: readonly FeishuMention[], botOpenId: string | null): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of mentions) {
    const isBot = botOpenId !== null && m.id?.open_id === botOpenId;
    names.set(m.key, isBot ? "" : `@${m.name || "someone"}`);
  }
  return names;
}

/** Replace each placeholder; the bot's disappears with the space after it. */
function resolveMentions(text: string, names: ReadonlyMap<string, string>): string {
  const out = text.replace(/@_user_\d+\s?|@_all\b/g, (token) => {
    const key = token.trimEnd();
    if (key === "@_all") return "@all";
    const name = names.get(key);
    if (name === undefined) return token;
    return name === "" ? "" : name + token.slice(key.length);
  });
  return out.trim();
}

/** A received post is `{title, content}`, or the same under a locale key. */
function postOf(body: Json): { title?: unknown; content: unknown[] } | null {
  if (Array.isArray(body.content)) return body as { title?: unknown; content: unknown[] };
  for (const value of Object.values(body)) {
    const inner = value as Json | null;
    if (inner && Array.isArray(inner.content)) return inner as { title?: unknown; content: unknown[] };
  }
  return null;
}

function readPost(
  post: { title?: unknown; content: unknown[] },
  names: ReadonlyMap<string, string>,
): { text: string; files: InboundAttachment[] } {
  const lines: string[] = [];
  const files: InboundAttachment[] = [];
  if (typeof post.title === "string" && post.title.trim()) lines.push(`**${post.title.trim()}**`);
  for (const paragraph of post.content) {
    if (!Array.isArray(paragraph)) continue;
    let line = "";
    for (const raw of paragraph) {
      const el = (raw ?? {}) as Json;
      const text = typeof el.text === "string" ? el.text : "";
      switch (el.tag) {
        case "text":
        case "md":
          line += text;
          break;
        case "a":
          line += typeof el.href === "string" && el.href ? `[${text || el.href}](${el.href})` : text;
          break;
        case "at": {
          const key = String(el.user_id ?? "");
          const name = names.get(key);
          line += name === undefined ? `@${String(el.user_name ?? "someone")}` : name;
          break;
        }
        case "emotion":
          line += `:${String(el.emoji_type ?? "")}:`;
          break;
        case "code_block":
          line += `\n\`\`\`${String(el.language ?? "").toLowerCase()}\n${text}\n\`\`\`\n`;
          break;
        case "hr":
          line += "\n---\n";
          break;
        case "img":
          files.push({ name: "image", ref: String(el.image_key ?? "img:unknown") });
          break;
        case "media":
          files.push({ name: String(el.file_name ?? "video"), ref: String(el.file_key ?? "media:unknown") });
          break;
      }
    }
    lines.push(line);
  }
  return { text: resolveMentions(lines.join("\n"), names), files };
}

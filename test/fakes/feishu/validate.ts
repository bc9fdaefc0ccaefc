/**
 * What the fake's message endpoints check before they accept a body, as Feishu does: a known
 * `msg_type`, `content` that is a JSON string of the right shape (a `post` has a locale with
 * paragraphs of known elements, an `md` element alone in its paragraph), and the request-size caps
 * (a `post` request at most 30 KB, a `text` one 150 KB).
 */
import { postMarkdown } from "./render.js";

export const POST_REQUEST_MAX_BYTES = 30 * 1024;
export const TEXT_REQUEST_MAX_BYTES = 150 * 1024;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    readonly msg: string,
  ) {
    super(msg);
  }
}

const LOCALES = new Set(["zh_cn", "en_us", "ja_jp"]);
const POST_TAGS = new Set(["text", "a", "at", "img", "media", "emotion", "md", "hr", "code_block"]);

/** The message a body describes: its markdown (post) or text, or an ApiError. */
export function validateBody(body: Record<string, unknown>, requestBytes: number): { md: string } {
  const type = body.msg_type;
  if (type !== "post" && type !== "text")
    throw new ApiError(400, 230001, `unsupported msg_type in this fake: ${String(type)}`);
  const cap = type === "post" ? POST_REQUEST_MAX_BYTES : TEXT_REQUEST_MAX_BYTES;
  if (requestBytes > cap)
    throw new ApiError(400, 230025, `message too large: ${requestBytes} > ${cap} bytes`);
  if (typeof body.content !== "string") throw new ApiError(400, 230001, "content must be a JSON string");
  let content: unknown;
  try {
    content = JSON.parse(body.content);
  } catch {
    throw new ApiError(400, 230001, "content is not JSON");
  }
  if (type === "text") {
    const text = (content as { text?: unknown } | null)?.text;
    if (typeof text !== "string" || text === "") throw new ApiError(400, 230001, "text content needs text");
    return { md: text };
  }
  const locales = Object.keys((content ?? {}) as object);
  if (locales.length === 0 || !locales.every((l) => LOCALES.has(l)))
    throw new ApiError(400, 230001, `post content needs a locale: ${locales.join(",")}`);
  for (const locale of locales) {
    const paragraphs = (content as Record<string, { content?: unknown }>)[locale]?.content;
    if (!Array.isArray(paragraphs) || paragraphs.length === 0)
      throw new ApiError(400, 230001, "post content needs paragraphs");
    for (const paragraph of paragraphs) {
      if (!Array.isArray(paragraph)) throw new ApiError(400, 230001, "a paragraph is a list");
      for (const element of paragraph) {
        const tag = (element as { tag?: unknown } | null)?.tag;
        if (typeof tag !== "string" || !POST_TAGS.has(tag)) throw new ApiError(400, 230001, `bad tag ${tag}`);
        if (tag === "md" && paragraph.length !== 1)
          throw new ApiError(400, 230001, "an md element must be alone in its paragraph");
      }
    }
  }
  const md = postMarkdown(content) ?? "";
  if (md.trim() === "") throw new ApiError(400, 230001, "empty post");
  return { md };
}

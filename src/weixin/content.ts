/**
 * What an iLink message says and carries: its text items, a voice note's server-side transcript
 * (SILK is not decoded: the transcript is strictly better than nothing parley could read), a quoted
 * message (`ref_msg`) as quoted context, and its media as file references (nothing fetched now: the
 * turn reads them). A message that is only media is still a message.
 */
import type { InboundAttachment } from "../messaging/channel/transport.js";
import { hexKeyAsBase64 } from "./media.js";
import type { WireItem, WireMedia, WireMessage } from "./wire.js";
import { ITEM_FILE, ITEM_IMAGE, ITEM_TEXT, ITEM_VIDEO, ITEM_VOICE } from "./wire.js";

export type MediaKind = "image" | "voice" | "file" | "video";

/** What the media source needs of one object: its CDN reference and its key. */
export interface MediaRef {
  kind: MediaKind;
  param: string;
  key: string;
}

/** Longest quote carried into the prompt (code points); a quote is context, not the message. */
const QUOTE_CHARS = 1000;

function textOfItem(item: WireItem): string {
  if (item.type === ITEM_TEXT) return item.text_item?.text ?? "";
  if (item.type === ITEM_VOICE) return item.voice_item?.text ?? "";
  return "";
}

function mediaOf(
  item: WireItem,
): { kind: MediaKind; media: WireMedia | undefined; key?: string; name?: string } | null {
  switch (item.type) {
    case ITEM_IMAGE:
      return {
        kind: "image",
        media: item.image_item?.media,
        // The image's own hex key, when given, is preferred (the raw key, unambiguous).
        ...(item.image_item?.aeskey && hexKeyAsBase64(item.image_item.aeskey)
          ? { key: hexKeyAsBase64(item.image_item.aeskey) }
          : {}),
      };
    case ITEM_VOICE:
      // A transcript is the payload: no download.
      return item.voice_item?.text ? null : { kind: "voice", media: item.voice_item?.media };
    case ITEM_FILE:
      return {
        kind: "file",
        media: item.file_item?.media,
        ...(item.file_item?.file_name ? { name: item.file_item.file_name } : {}),
      };
    case ITEM_VIDEO:
      return { kind: "video", media: item.video_item?.media };
    default:
      return null;
  }
}

function quoteOf(items: readonly WireItem[]): string {
  const quoted = items.find((i) => i.ref_msg)?.ref_msg;
  if (!quoted) return "";
  const inner = quoted.message_item;
  const said = (inner ? textOfItem(inner) : "") || quoted.title || (inner ? "[media]" : "");
  if (!said.trim()) return "";
  const clipped = Array.from(said.trim()).slice(0, QUOTE_CHARS).join("");
  return clipped
    .split("\n")
    .map((l) => `> ${l}`)
    .join("\n");
}

export interface ReadContent {
  text: string;
  attachments: InboundAttachment[];
}

export function readContent(m: WireMessage): ReadContent {
  const items = Array.isArray(m.item_list) ? m.item_list.filter((i) => typeof i === "object" && i) : [];
  const said = items
    .map(textOfItem)
    .filter((t) => t.trim() !== "")
    .join("\n");
  const quote = quoteOf(items);
  const text = quote ? `${quote}\n\n${said}` : said;
  const attachments: InboundAttachment[] = [];
  const counts = new Map<string, number>();
  for (const item of items) {
    const found = mediaOf(item);
    const param = found?.media?.encrypt_query_param;
    const key = found?.key ?? found?.media?.aes_key;
    if (!found || typeof param !== "string" || !param || typeof key !== "string" || !key) continue;
    const base = found.name ?? found.kind;
    const n = (counts.get(base) ?? 0) + 1;
    counts.set(base, n);
    const ref: MediaRef = { kind: found.kind, param, key };
    attachments.push({ name: n === 1 ? base : `${base} (${n})`, ref: JSON.stringify(ref) });
  }
  return { text, attachments };
}

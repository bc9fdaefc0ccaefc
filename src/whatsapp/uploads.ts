/**
 * The images an answer ships (the kit's extractor, messaging/files/outbound-uploads.ts) under this
 * channel's ceilings: parley's policy for one answer, not figures WhatsApp publishes. An image is
 * sent from the bytes every gate was applied to, never by opening the path again.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { extractUploads as extractSharedUploads } from "../messaging/files/outbound-uploads.js";
import { displaySafeText } from "./format.js";
import type { WhatsAppTransport } from "./transport.js";

export const WHATSAPP_UPLOAD_LIMITS = {
  maxFiles: 10,
  maxTotalBytes: 25 * 1024 * 1024,
  maxFileBytes: 16 * 1024 * 1024,
};

export function extractUploads(
  body: string,
  policy: OutboundFilePolicy,
  logger: Logger,
): Promise<{ text: string; files: OutboundFile[] }> {
  return extractSharedUploads(body, policy, { limits: WHATSAPP_UPLOAD_LIMITS, logger, channel: "whatsapp" });
}

/**
 * The images after the text seal, one message each, as the turn's parts (a resumed turn leaves an
 * image it already sent alone); a failed one says so in the chat, by `note`.
 */
export async function sendImages(
  t: WhatsAppTransport,
  o: { chat: string; parts: TurnParts; logger: Logger },
  files: readonly OutboundFile[],
  note: (text: string) => Promise<string | null>,
): Promise<{ landed: boolean; lost: boolean }> {
  let landed = false;
  let lost = false;
  for (const f of files) {
    try {
      const id = await o.parts.post(JSON.stringify([f.filename, f.bytes.length]), {
        create: async (key) => (await t.sendImage(o.chat, f.bytes, f.mime, f.alt, key)).id ?? null,
        // An image cannot be edited into another: a landed one is left alone.
        replace: async () => false,
      });
      if (id === null) throw new Error("the image did not land");
      landed = true;
    } catch (error) {
      o.logger.warn("whatsapp: image send failed", { error: String(error) });
      const text = displaySafeText(`⚠️ Could not send the image ${f.alt ? `"${f.alt}"` : ""}`.trim());
      try {
        if ((await note(text)) === null) lost = true;
      } catch (failed) {
        lost = true;
        o.logger.error("whatsapp: send failed", { error: String(failed) });
      }
    }
  }
  return { landed, lost };
}

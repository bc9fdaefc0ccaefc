/**
 * The images an answer ships (the kit's extractor, messaging/files/outbound-uploads.ts) under this
 * channel's ceilings: parley's policy for one answer, not figures WhatsApp publishes. An image is
 * sent from the bytes every gate was applied to, never by opening the path again.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { extractUploads as extractSharedUploads } from "../messaging/files/outbound-uploads.js";

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

/**
 * Telegram's upload half: which local images a sealed answer ships as photos. Two gates, both
 * leaving the text untouched when they refuse (the path stays visible, never silently dropped):
 * the restricted-session ceiling (a temporary/incognito conversation promised to leave no trace),
 * then the shared extractor (approved root, sensitive paths, raster sniffing) under Telegram's named
 * ceilings. Refusals are spoken in the answer; a failed upload restores the references instead of
 * re-posting the answer, which has already landed.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { extractUploads as extractSharedUploads } from "../messaging/files/outbound-uploads.js";
import {
  TELEGRAM_MAX_MEDIA_GROUP,
  TELEGRAM_MAX_PHOTO_BYTES,
  TELEGRAM_MAX_TOTAL_UPLOAD_BYTES,
} from "./limits.js";

/** The shared upload policy: the agent's working folder under the restricted-session ceiling. */
export type UploadPolicy = OutboundFilePolicy;

export const TELEGRAM_UPLOAD_LIMITS = {
  maxFiles: TELEGRAM_MAX_MEDIA_GROUP,
  maxTotalBytes: TELEGRAM_MAX_TOTAL_UPLOAD_BYTES,
  maxFileBytes: TELEGRAM_MAX_PHOTO_BYTES,
};

/** Pull the uploadable images out of a sealed body; refusals become visible lines. */
export function extractUploads(
  body: string,
  policy: UploadPolicy,
  logger: Logger,
): Promise<{ text: string; files: OutboundFile[] }> {
  return extractSharedUploads(body, policy, { limits: TELEGRAM_UPLOAD_LIMITS, logger, channel: "telegram" });
}

/** Albums of at most TELEGRAM_MAX_MEDIA_GROUP, in order. */
export function albums(files: readonly OutboundFile[]): OutboundFile[][] {
  const out: OutboundFile[][] = [];
  for (let i = 0; i < files.length; i += TELEGRAM_MAX_MEDIA_GROUP)
    out.push(files.slice(i, i + TELEGRAM_MAX_MEDIA_GROUP));
  return out;
}

/** The references of files that did not upload, rebuilt from each file's own alt and path. */
export function recoveryMarkdown(files: readonly OutboundFile[]): string {
  const refs = files.map((f) => `![${f.alt.replace(/[[\]]/g, "")}](${f.path})`);
  return `⚠️ Could not upload:\n${refs.join("\n")}`;
}

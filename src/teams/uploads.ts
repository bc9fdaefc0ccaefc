/**
 * Teams' upload half: local images in a finished answer become inline pictures, each its own
 * activity after the text (Teams splits an activity holding both text and an attachment and
 * withholds its id). A `data:` URI of a PNG or JPEG renders with no hosting; Teams documents GIF too
 * but not an animated one, which leading bytes cannot tell apart, so only PNG and JPEG go. Named
 * ceilings: 1 MiB per picture (Teams' documented limit), 4 per answer (each is a request against
 * the conversation's seven a second). The shared extractor applies the root, the sensitive-path
 * floor and the byte budgets, and a reference it refuses keeps its markup. A picture refused AFTER
 * the read (a raster Teams will not show, a post that failed) has already been cut from the text,
 * so its refusal line names the path instead: no picture disappears in silence, and refusal lines
 * are never dropped for length (the caller splits them like any text).
 */
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { extractLocalRefs } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { oneLine } from "../messaging/text/clip.js";

export const TEAMS_MAX_INLINE_IMAGE_BYTES = 1024 * 1024;
export const TEAMS_MAX_INLINE_IMAGES = 4;
const INLINE_MIMES: ReadonlySet<string> = new Set(["image/png", "image/jpeg"]);

export interface SealImages {
  /** The remainder with accepted references cut (refused ones keep their markup). */
  remainder: string;
  images: OutboundFile[];
  /** One line per refusal, in order; a line for a cut reference names its path. */
  notes: string[];
}

export async function extractImages(
  fedText: string,
  remainder: string,
  policy: OutboundFilePolicy,
  audit: AuditSink,
): Promise<SealImages> {
  const none = { remainder, images: [], notes: [] };
  // An ordinary answer never touches the filesystem.
  if (!remainder.includes("![") || !policy.allowed()) return none;
  const whole = fedText + remainder;
  const result = await extractLocalRefs(whole, {
    root: await policy.root(),
    limits: {
      maxFiles: TEAMS_MAX_INLINE_IMAGES,
      maxFileBytes: TEAMS_MAX_INLINE_IMAGE_BYTES,
      maxTotalBytes: TEAMS_MAX_INLINE_IMAGES * TEAMS_MAX_INLINE_IMAGE_BYTES,
    },
  });
  if (result.files.length === 0 && result.rejections.length === 0) return none;
  const images = result.files.filter((f) => INLINE_MIMES.has(f.mime));
  const unsupported = result.files.filter((f) => !INLINE_MIMES.has(f.mime));
  const notes = [
    ...[...new Set(result.rejections.map((r) => r.message))].map((m) => `⚠️ image not sent: ${m}`),
    ...unsupported.map(
      (f) => `⚠️ image not sent: ${oneLine(f.path, 300)} is not a PNG or JPEG, which Teams shows inline`,
    ),
  ];
  const reasons = [
    ...new Set([
      ...result.rejections.map((r) => r.reason),
      ...(unsupported.length ? ["teams_inline_unsupported"] : []),
    ]),
  ];
  // Counts and closed reason codes only: never a destination or a file name.
  audit.log("teams_renderer.upload_files", notes.length ? "refused" : "allowed", {
    accepted: images.length,
    refused: result.rejections.length + unsupported.length,
    reasons: reasons.join(","),
  });
  // The cut touches only text at or after the earliest reference, which was never fed.
  let keep = 0;
  const limit = Math.min(fedText.length, result.rewrittenText.length);
  while (keep < limit && fedText.charCodeAt(keep) === result.rewrittenText.charCodeAt(keep)) keep++;
  return { remainder: result.rewrittenText.slice(keep), images, notes };
}

/** One picture as the activity attachment Teams renders inline. */
export function inlineImage(file: OutboundFile): { contentType: string; contentUrl: string; name: string } {
  return {
    contentType: file.mime,
    contentUrl: `data:${file.mime};base64,${Buffer.from(file.bytes).toString("base64")}`,
    // Sanitized by the extractor: a basename shaped like a credential was replaced outright.
    name: file.filename,
  };
}

/** The refusal line of a picture whose post failed (its markup is already gone from the text). */
export function undeliveredNote(file: OutboundFile): string {
  return `⚠️ image not delivered: ${oneLine(file.path, 300)}`;
}

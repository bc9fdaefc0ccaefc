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
import type { Logger } from "../messaging/base/logger.js";
import type { LiveFiles } from "../messaging/channel/live-surface.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { extractLocalRefs, hideLocalRefs } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { oneLine } from "../messaging/text/clip.js";
import type { OutboundActivity } from "./client.js";
import { fitTeams, teamsSafe } from "./format.js";
import { attachmentsActivity, textActivity } from "./outbox.js";

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
  remainder: string,
  policy: OutboundFilePolicy,
  audit: AuditSink,
): Promise<SealImages> {
  const none = { remainder, images: [], notes: [] };
  // An ordinary answer never touches the filesystem.
  if (!remainder.includes("![") || !policy.allowed()) return none;
  const result = await extractLocalRefs(remainder, {
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
  return { remainder: result.rewrittenText, images, notes };
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

/**
 * Local pictures as the LiveRenderer's outbound files: cut from the sealed text (refusal lines
 * joined to it BEFORE the seal's redaction, so a destination they quote is scanned too), then one
 * activity each after the text. `send` posts one activity as the turn's next part.
 */
export function teamsImages(
  policy: OutboundFilePolicy,
  audit: AuditSink,
  logger: Logger,
  send: (activity: OutboundActivity) => Promise<string | null>,
): LiveFiles {
  const landed = async (activity: OutboundActivity): Promise<boolean> => {
    try {
      return Boolean(await send(activity));
    } catch (error) {
      logger.warn("teams: a picture or its note did not land", { error: String(error) });
      return false;
    }
  };
  return {
    hide: hideLocalRefs,
    extract: async (source) => {
      const { remainder, images, notes } = await extractImages(source, policy, audit);
      return { text: [remainder, ...notes].filter((s) => s.trim() !== "").join("\n\n"), files: images };
    },
    send: async (found) => {
      let any = false;
      const failed: string[] = [];
      for (const image of found as readonly OutboundFile[]) {
        if (await landed(attachmentsActivity([inlineImage(image)]))) any = true;
        else failed.push(undeliveredNote(image));
      }
      if (!failed.length) return { landed: any, lost: false };
      audit.log("teams_renderer.upload_files", "failed", {
        refused: failed.length,
        reasons: "teams_inline_undelivered",
      });
      // No picture disappears in silence: the failed ones are named in a line of their own.
      let lost = false;
      for (const piece of fitTeams(teamsSafe(failed.join("\n"))))
        if (await landed(textActivity(piece))) any = true;
        else lost = true;
      return { landed: any, lost };
    },
  };
}

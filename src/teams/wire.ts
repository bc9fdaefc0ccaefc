/**
 * The subset of a Bot Framework activity parley reads, parsed defensively: an activity is external
 * input, so a shape parley does not understand is dropped at this boundary (audited by the caller),
 * never half-read deeper in. No SDK import, so the transport and its tests read these types
 * without loading botbuilder.
 */
import { z } from "zod";

const account = z
  .object({
    id: z.string().min(1),
    name: z.string().optional(),
    aadObjectId: z.string().optional(),
    role: z.string().optional(),
  })
  .loose();

const attachment = z
  .object({
    contentType: z.string(),
    contentUrl: z.string().optional(),
    content: z.unknown().optional(),
    name: z.string().optional(),
  })
  .loose();

export const activitySchema = z
  .object({
    type: z.string(),
    id: z.string().optional(),
    channelId: z.string(),
    serviceUrl: z.string(),
    from: account,
    recipient: account.optional(),
    conversation: z
      .object({
        id: z.string().min(1),
        conversationType: z.string().optional(),
        tenantId: z.string().optional(),
      })
      .loose(),
    text: z.string().optional(),
    attachments: z.array(attachment).optional(),
    /** An Action.Submit's data: what the pressed button carries back. */
    value: z.unknown().optional(),
    replyToId: z.string().optional(),
    membersAdded: z.array(account).optional(),
    /** installationUpdate: "add" or "remove" (with "-upgrade" variants). */
    action: z.string().optional(),
    channelData: z
      .object({ tenant: z.object({ id: z.string() }).loose().optional() })
      .loose()
      .optional(),
  })
  .loose();

export type TeamsActivity = z.infer<typeof activitySchema>;

export const FILE_DOWNLOAD_INFO = "application/vnd.microsoft.teams.file.download.info";
export const ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive";

/** An activity plus the identity the gate resolved for its sender (the allow-list's form). */
export interface TeamsEnvelope {
  activity: TeamsActivity;
  identity: string;
}

/** The tenant an activity belongs to (Teams puts it in two places). */
export function tenantOf(a: TeamsActivity): string | undefined {
  return a.conversation.tenantId ?? a.channelData?.tenant?.id;
}

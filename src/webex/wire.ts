/**
 * Webex's wire shapes, parsed with zod at the boundary: device-socket frames, the REST objects
 * parley reads, and the Hydra id encoding. Ids carry their cluster; an activity's cluster comes from
 * its target (a non-US org's ids encoded as `us` would point nowhere, and every message would be
 * lost without a word).
 */
import { z } from "zod";

export const activitySchema = z.object({
  id: z.string().min(1),
  verb: z.string(),
  actor: z.object({ id: z.string(), emailAddress: z.string().optional() }).passthrough(),
  object: z.object({ id: z.string().optional(), objectType: z.string().optional() }).passthrough().optional(),
  target: z
    .object({
      id: z.string(),
      objectType: z.string().optional(),
      /** The org's cluster (e.g. `urn:TEAM:eu-central-1_k`); absent for the US default. */
      clusterId: z.string().optional(),
    })
    .passthrough()
    .optional(),
});
export type WebexActivity = z.infer<typeof activitySchema>;

export const frameSchema = z.object({
  id: z.string().min(1),
  data: z.object({ eventType: z.string(), activity: activitySchema.optional() }).passthrough().optional(),
});
export type WebexFrame = z.infer<typeof frameSchema>;

export const messageSchema = z.object({
  id: z.string(),
  roomId: z.string(),
  roomType: z.string().optional(),
  personId: z.string(),
  personEmail: z.string().optional(),
  text: z.string().optional(),
  markdown: z.string().optional(),
  files: z.array(z.string()).optional(),
  mentionedPeople: z.array(z.string()).optional(),
});
export type WebexMessage = z.infer<typeof messageSchema>;

export const roomSchema = z.object({ id: z.string(), type: z.string() });

export const actionSchema = z.object({
  id: z.string(),
  type: z.string(),
  messageId: z.string(),
  personId: z.string(),
  roomId: z.string(),
  inputs: z.record(z.string(), z.unknown()).default({}),
});
export type WebexAction = z.infer<typeof actionSchema>;

export const personSchema = z.object({
  id: z.string(),
  emails: z.array(z.string()).default([]),
  displayName: z.string().optional(),
});

export const catalogSchema = z.object({ serviceLinks: z.record(z.string(), z.string()) });
export const deviceSchema = z.object({ url: z.string(), webSocketUrl: z.string() });

/** The US cluster's Hydra segment: the default only when an activity names no cluster. */
export const DEFAULT_CLUSTER = "us";

/** A Hydra id: base64 (unpadded) of `ciscospark://<cluster>/<KIND>/<uuid>`. */
export function hydraId(
  cluster: string,
  kind: "MESSAGE" | "ATTACHMENT_ACTION" | "PEOPLE",
  uuid: string,
): string {
  return Buffer.from(`ciscospark://${cluster}/${kind}/${uuid}`).toString("base64").replace(/=+$/, "");
}

export function clusterOf(activity: WebexActivity): string | undefined {
  return activity.target?.clusterId;
}

/**
 * Webex's wire shapes, parsed with zod at the boundary: device-socket frames, the REST objects
 * parley reads, the U2C host map and the Hydra id encoding. Hydra ids carry their cluster, and an
 * activity names its cluster only through its conversation's URL: the host map turns that URL's host
 * into the cluster (a non-US org's ids encoded as `us` would point nowhere, and every message would
 * be lost).
 */
import { z } from "zod";

/**
 * A Mercury `conversation.activity` as the SDK reads it (webex/webex-js-sdk
 * packages/@webex/plugin-messages/src/messages.js getMessageEvent, plugin-attachment-actions
 * getattachmentActionEvent): the message or action uuid is the activity's own `id`, the object only
 * describes it (`comment`, `content`, `submit`), the target is the conversation with its `url` (the
 * host names the cluster), and a card press names the pressed message in `parent`.
 */
export const activitySchema = z.object({
  id: z.string().min(1),
  verb: z.string(),
  actor: z
    .object({
      id: z.string().optional(),
      entryUUID: z.string().optional(),
      emailAddress: z.string().optional(),
    })
    .passthrough(),
  object: z.object({ objectType: z.string().optional() }).passthrough().optional(),
  target: z
    .object({ id: z.string(), url: z.string().optional(), objectType: z.string().optional() })
    .passthrough()
    .optional(),
  parent: z.object({ id: z.string(), type: z.string().optional() }).passthrough().optional(),
});
export type WebexActivity = z.infer<typeof activitySchema>;

/**
 * A Mercury frame (internal-plugin-mercury socket-base onmessage): `id` is what the ack names, `data`
 * the event. The activity is parsed by the intake, so a frame with an odd activity is still acked.
 */
export const frameSchema = z.object({
  id: z.string().min(1),
  data: z
    .object({ eventType: z.string().optional(), activity: z.unknown().optional() })
    .passthrough()
    .optional(),
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

/** One host of the U2C host map: `id` is `urn:TEAM:<cluster>:<service>`. */
const catalogHostSchema = z.object({ host: z.string(), id: z.string() }).passthrough();
/** The U2C catalog asked with `format=hostmap` (webex-core services `_fetchNewServiceHostmap`). */
export const catalogSchema = z.object({
  serviceLinks: z.record(z.string(), z.string()),
  hostCatalog: z.record(z.string(), z.array(catalogHostSchema)).default({}),
});
export type WebexCatalog = z.infer<typeof catalogSchema>;
export const deviceSchema = z.object({ url: z.string(), webSocketUrl: z.string() });

/** The Hydra segment of the original US cluster (kept as `us` by Webex for compatibility). */
export const US_CLUSTER = "us";
/** Internal cluster ids that Hydra spells `us` (@webex/common constants INTERNAL_US_*_CLUSTER_NAME). */
const US_INTERNAL_CLUSTERS = ["urn:TEAM:us-east-2_a", "urn:TEAM:us-east-1_int13"] as const;

export type HydraKind = "MESSAGE" | "ROOM" | "ATTACHMENT_ACTION" | "PEOPLE";

/**
 * A Hydra id: unpadded base64url of `ciscospark://<cluster>/<KIND>/<uuid>` (@webex/common
 * uuid-utils constructHydraId). People ids always name `us`, whatever the cluster.
 */
export function hydraId(cluster: string, kind: HydraKind, uuid: string): string {
  const segment = kind === "PEOPLE" ? US_CLUSTER : cluster;
  return Buffer.from(`ciscospark://${segment}/${kind}/${uuid}`).toString("base64url");
}

/**
 * The Hydra cluster segment for an internal cluster id (`urn:TEAM:eu-central-1_k:conversation` ->
 * `urn:TEAM:eu-central-1_k`; the original US cluster -> `us`), or undefined when the id has fewer
 * than three parts (the SDK throws there: no id can be built).
 */
export function hydraCluster(internalId: string): string | undefined {
  if (US_INTERNAL_CLUSTERS.some((us) => internalId.startsWith(us))) return US_CLUSTER;
  const parts = internalId.split(":");
  return parts.length < 3 ? undefined : parts.slice(0, 3).join(":");
}

function hostnameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** The fourth part of a host's id, its service (`conversation`): hosts of one service share it. */
function serviceOf(id: string): string | undefined {
  return id.split(":")[3];
}

/**
 * The internal cluster id of a URL's host as the SDK's catalog finds it (webex-core services
 * `_formatReceivedHostmap` then service-catalog `findClusterId`): each service link gathers the host
 * map's hosts that share its service id, its own host's entries first (the home cluster); a URL whose
 * host is one of them takes that host's id; a URL on a link's own host with no exact entry takes the
 * link's first home-cluster id. Undefined when the map does not know the host.
 */
export function clusterIdOf(catalog: WebexCatalog, url: string): string | undefined {
  const wanted = hostnameOf(url);
  if (!wanted) return undefined;
  for (const link of Object.values(catalog.serviceLinks)) {
    const linkHost = hostnameOf(link);
    let linkAuthority: string;
    try {
      linkAuthority = new URL(link).host;
    } catch {
      continue;
    }
    const home = catalog.hostCatalog[linkAuthority] ?? [];
    const first = home[0];
    if (!first) continue;
    const service = serviceOf(first.id);
    const own = home.filter((h) => serviceOf(h.id) === service);
    const others = Object.entries(catalog.hostCatalog)
      .filter(([key]) => key !== linkAuthority)
      .flatMap(([, hosts]) => hosts.filter((h) => serviceOf(h.id) === service));
    const exact = [...own, ...others].find((h) => h.host === wanted && h.id);
    if (exact) return exact.id;
    if (linkHost === wanted) return own[0]?.id;
  }
  return undefined;
}

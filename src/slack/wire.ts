/**
 * The subset of Slack's inbound payloads parley reads, parsed defensively: an event, an interactive
 * press and a slash command are external input, so a shape parley does not understand is dropped at
 * this boundary (and logged by the caller), never half-read deeper in. No SDK import, so the
 * transport and renderer can use these types without loading Bolt.
 */
import { z } from "zod";

export const fileSchema = z.object({
  id: z.string(),
  name: z.string().optional(),
  title: z.string().optional(),
  mimetype: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
  /** Authenticated download URLs: fetched with the bot token, from the admitted host only. */
  url_private: z.string().optional(),
  url_private_download: z.string().optional(),
});
export type SlackFile = z.infer<typeof fileSchema>;

/** A `message` (message.im/.channels/.groups) or an `app_mention` event. */
export const messageEventSchema = z.object({
  type: z.enum(["message", "app_mention"]),
  subtype: z.string().optional(),
  channel: z.string(),
  /** im, channel, group, mpim (absent on app_mention). */
  channel_type: z.string().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  /** The workspace of the message's author (Slack Connect: the user's own team). */
  user_team: z.string().optional(),
  team: z.string().optional(),
  text: z.string().default(""),
  ts: z.string(),
  thread_ts: z.string().optional(),
  files: z.array(fileSchema).default([]),
});
export type SlackMessageEvent = z.infer<typeof messageEventSchema>;

const actionSchema = z.object({
  action_id: z.string(),
  block_id: z.string().optional(),
  value: z.string().optional(),
  text: z.object({ text: z.string() }).optional(),
  action_ts: z.string().optional(),
});

/** A block_actions press: who pressed which button, on which message. */
export const blockActionsSchema = z.object({
  type: z.literal("block_actions"),
  user: z.object({ id: z.string(), team_id: z.string().optional() }),
  team: z.object({ id: z.string() }).nullable().optional(),
  channel: z.object({ id: z.string() }).optional(),
  container: z
    .object({ message_ts: z.string().optional(), thread_ts: z.string().optional() })
    .loose()
    .optional(),
  message: z
    .object({
      ts: z.string(),
      thread_ts: z.string().optional(),
      text: z.string().default(""),
      blocks: z.array(z.unknown()).default([]),
    })
    .optional(),
  actions: z.array(actionSchema).min(1),
});
export type SlackBlockActions = z.infer<typeof blockActionsSchema>;

/** A slash command invocation (Slack's form fields). */
export const slashCommandSchema = z.object({
  command: z.string(),
  text: z.string().default(""),
  user_id: z.string(),
  team_id: z.string().optional(),
  channel_id: z.string(),
  channel_name: z.string().optional(),
  trigger_id: z.string().optional(),
});
export type SlackSlashCommand = z.infer<typeof slashCommandSchema>;

/** What the intake hands the transport for each relevant payload. */
export type SlackEnvelope =
  | { kind: "event"; eventId: string; event: SlackMessageEvent }
  | { kind: "action"; action: SlackBlockActions }
  | { kind: "command"; command: SlackSlashCommand };

/** Message subtypes that are a person saying something; edits, joins and deletions are not. */
export const SPOKEN_SUBTYPES: ReadonlySet<string | undefined> = new Set([
  undefined,
  "file_share",
  "thread_broadcast",
]);

/** A DM channel (`D…`) or an event Slack labels `im`. */
export function isDirectChannel(channel: string, channelType?: string): boolean {
  return channelType === "im" || channel.startsWith("D");
}

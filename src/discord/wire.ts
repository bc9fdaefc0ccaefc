/**
 * The subset of Discord's Gateway payloads parley reads, parsed defensively. A dispatch is external
 * input: a shape parley does not understand is dropped at this boundary (and logged by the caller),
 * never half-read deeper in. Snowflakes stay strings: they exceed 2^53. No SDK import, so the
 * transport and renderer can use these types without loading discord.js.
 */
import { z } from "zod";

const snowflake = z.string().regex(/^\d{1,20}$/);

export const userSchema = z.object({
  id: snowflake,
  username: z.string().default(""),
  bot: z.boolean().optional(),
  system: z.boolean().optional(),
});
export type DiscordUser = z.infer<typeof userSchema>;

export const attachmentSchema = z.object({
  id: snowflake,
  filename: z.string(),
  size: z.number().int().nonnegative().optional(),
  content_type: z.string().optional(),
  /** Signed CDN URL: the ONE source parley downloads from (validated in attachments.ts). */
  url: z.string().optional(),
  /** Discord's media-proxy copy: used only when `url` is absent (same host rule applies). */
  proxy_url: z.string().optional(),
});

export const messageSchema = z.object({
  id: snowflake,
  channel_id: snowflake,
  guild_id: snowflake.optional(),
  author: userSchema,
  content: z.string().default(""),
  webhook_id: snowflake.optional(),
  attachments: z.array(attachmentSchema).default([]),
  mentions: z.array(z.object({ id: snowflake })).default([]),
});
export type DiscordMessage = z.infer<typeof messageSchema>;

const buttonSchema = z.object({
  type: z.literal(2),
  custom_id: z.string().optional(),
  label: z.string().optional(),
});
const rowSchema = z.object({
  type: z.literal(1),
  components: z.array(z.union([buttonSchema, z.object({ type: z.number() }).loose()])).default([]),
});

/** The message a component was attached to: its content and buttons (labels are recovered here). */
const componentMessageSchema = z.object({
  id: snowflake,
  channel_id: snowflake,
  content: z.string().default(""),
  /** 1 << 6: an ephemeral message (only its recipient sees it; channel routes cannot edit it). */
  flags: z.number().int().optional(),
  components: z.array(z.union([rowSchema, z.object({ type: z.number() }).loose()])).default([]),
});

export const INTERACTION_APPLICATION_COMMAND = 2;
export const INTERACTION_MESSAGE_COMPONENT = 3;

export const interactionSchema = z.object({
  id: snowflake,
  application_id: snowflake,
  type: z.number().int(),
  token: z.string().min(1),
  channel_id: snowflake.optional(),
  guild_id: snowflake.optional(),
  /** Guild interactions carry the user under member; DMs carry it at the top level. */
  member: z.object({ user: userSchema }).optional(),
  user: userSchema.optional(),
  data: z
    .object({
      name: z.string().optional(),
      custom_id: z.string().optional(),
      component_type: z.number().optional(),
      options: z.array(z.object({ name: z.string(), value: z.unknown() })).optional(),
    })
    .optional(),
  message: componentMessageSchema.optional(),
});
export type DiscordInteraction = z.infer<typeof interactionSchema>;

export function interactionUser(interaction: DiscordInteraction): DiscordUser | undefined {
  return interaction.member?.user ?? interaction.user;
}

/** The label of the button with `customId` on the message it was pressed on, if it is still there. */
export function buttonLabel(interaction: DiscordInteraction, customId: string): string | undefined {
  for (const row of interaction.message?.components ?? []) {
    const parsed = rowSchema.safeParse(row);
    if (!parsed.success) continue;
    for (const c of parsed.data.components) {
      const b = buttonSchema.safeParse(c);
      if (b.success && b.data.custom_id === customId) return b.data.label;
    }
  }
  return undefined;
}

export const readySchema = z.object({
  user: userSchema,
  application: z.object({ id: snowflake }),
});

export const channelSchema = z.object({
  id: snowflake,
  type: z.number().int(),
  guild_id: snowflake.optional(),
  parent_id: snowflake.nullable().optional(),
});
export type DiscordChannel = z.infer<typeof channelSchema>;

/** Discord channel types 10/11/12: announcement, public and private threads. */
export const THREAD_TYPES: ReadonlySet<number> = new Set([10, 11, 12]);

/** What the client hands parley for each relevant dispatch. */
export type DiscordEnvelope =
  | { kind: "message"; message: DiscordMessage }
  | { kind: "interaction"; interaction: DiscordInteraction };

/**
 * The one inbound event parley serves, `im.message.receive_v1`, as the SDK's EventDispatcher hands
 * it over (its v2 envelope flattened: `header` fields and `event` fields side by side). Validated
 * here, loosely (Feishu adds fields), so a malformed event is an audited drop and never a crash.
 */
import { z } from "zod";

const mentionSchema = z.object({
  /** The placeholder in the text: `@_user_1`. */
  key: z.string(),
  id: z.object({ open_id: z.string().optional() }).partial().optional(),
  name: z.string().optional(),
});

export const messageEventSchema = z.object({
  event_id: z.string().optional(),
  sender: z.object({
    sender_id: z.object({ open_id: z.string().optional() }).partial().optional(),
    /** "user" for a person; bots and apps are anything else. */
    sender_type: z.string().optional(),
  }),
  message: z.object({
    message_id: z.string().optional(),
    parent_id: z.string().optional(),
    chat_id: z.string().min(1),
    chat_type: z.string(),
    message_type: z.string(),
    /** A JSON string whose shape depends on message_type. */
    content: z.string(),
    mentions: z.array(mentionSchema).optional(),
    create_time: z.string().optional(),
  }),
});

export type FeishuMessageEvent = z.infer<typeof messageEventSchema>;
export type FeishuMention = z.infer<typeof mentionSchema>;

/** The event, or null when it is not one parley can read. */
export function parseMessageEvent(raw: unknown): FeishuMessageEvent | null {
  const parsed = messageEventSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/**
 * What imsg says, read defensively (the executable is trusted, its output is still parsed, never
 * cast): the `imsg status --json` report, a watched message, a watch's `error` notice, a send's
 * result. Field names are steipete/imsg's (snake_case on the wire); docs/channels/imessage.md
 * "## Wire" names the source file of each.
 */
import { z } from "zod";

/**
 * What `imsg status --json` reports (imsg's rpc mode has no status method): its version, the rpc
 * methods the binary exposes, and whether the IMCore bridge that typing and read receipts need is
 * available.
 */
export interface ImsgStatus {
  version: string;
  methods: readonly string[];
  advancedFeatures: boolean;
}

/** One row of the Messages database as the watch reports it. */
export interface ImsgMessage {
  rowid: number;
  guid: string;
  /** The sender's handle as Messages stores it (not normalized). */
  sender: string;
  isFromMe: boolean;
  text: string;
  isGroup: boolean;
  chatId?: number;
}

const statusSchema = z.looseObject({
  version: z.string().optional(),
  rpc_methods: z.array(z.string()).optional(),
  advanced_features: z.boolean().optional(),
});

const messageSchema = z.looseObject({
  id: z.number().int().nonnegative(),
  guid: z.string().min(1),
  sender: z.string().optional(),
  is_from_me: z.boolean().optional(),
  text: z.string().nullable().optional(),
  is_group: z.boolean().optional(),
  participants: z.array(z.string()).optional(),
  chat_id: z.number().int().optional(),
});

const messageNotification = z.looseObject({ subscription: z.number().int(), message: messageSchema });
/** imsg's `error` notification: the subscription's stream failed and ended. */
const watchErrorNotification = z.looseObject({
  subscription: z.number().int().optional(),
  error: z.looseObject({ message: z.string().optional() }).optional(),
});
const sendResult = z
  .looseObject({ ok: z.boolean().optional(), id: z.unknown(), guid: z.unknown() })
  .nullable();

/** Nothing known: no optional method is used (typing and read receipts stay off). */
export const UNKNOWN_STATUS: ImsgStatus = { version: "unknown", methods: [], advancedFeatures: false };

export function parseStatus(result: unknown): ImsgStatus {
  const s = statusSchema.safeParse(result);
  if (!s.success) return UNKNOWN_STATUS;
  return {
    version: s.data.version ?? "unknown",
    methods: s.data.rpc_methods ?? [],
    advancedFeatures: s.data.advanced_features ?? false,
  };
}

/** A `message` notification, or null when it is not one parley can read (audited by the caller). */
export function parseMessage(params: unknown): { subscription: number; message: ImsgMessage } | null {
  const n = messageNotification.safeParse(params);
  if (!n.success) return null;
  const m = n.data.message;
  return {
    subscription: n.data.subscription,
    message: {
      rowid: m.id,
      guid: m.guid,
      sender: m.sender ?? "",
      isFromMe: m.is_from_me === true,
      text: m.text ?? "",
      // Either signal makes it a group: a reply there would reach members nobody allowed.
      isGroup: m.is_group === true || (m.participants?.length ?? 0) > 1,
      ...(m.chat_id === undefined ? {} : { chatId: m.chat_id }),
    },
  };
}

export function parseWatchError(params: unknown): { subscription?: number; message: string } | null {
  const n = watchErrorNotification.safeParse(params);
  if (!n.success) return null;
  return {
    ...(n.data.subscription === undefined ? {} : { subscription: n.data.subscription }),
    // imsg's own words (a Swift error description), clipped: a log line, not a transcript.
    message: (n.data.error?.message ?? "no reason given").slice(0, 300),
  };
}

/** A send's ids are best-effort in imsg's contract: absent is success without an id. */
export function parseSendResult(result: unknown): { id?: string; guid?: string } {
  const r = sendResult.safeParse(result);
  if (!r.success || r.data === null) return {};
  const str = (v: unknown) =>
    typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : undefined;
  const id = str(r.data.id);
  const guid = str(r.data.guid);
  return { ...(id ? { id } : {}), ...(guid ? { guid } : {}) };
}

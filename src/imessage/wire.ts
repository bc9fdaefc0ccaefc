/**
 * What imsg's rpc mode says, read defensively (the executable is trusted, its output is still
 * parsed, never cast): the status snapshot, a watched message, the terminal overflow notice, a
 * send's result. Field names follow imsg's rpc document (snake_case on the wire).
 */
import { z } from "zod";

/** What the status snapshot says about the bridge: its version, the methods usable now, readiness. */
export interface ImsgStatus {
  version: string;
  methods: readonly string[];
  bridgeReady: boolean;
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
  methods: z.array(z.string()).optional(),
  bridge: z.looseObject({ ready: z.boolean().optional() }).optional(),
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
const overflowNotification = z.looseObject({
  subscription: z.number().int().optional(),
  resume_after_rowid: z.number().int().nonnegative(),
});
/** imsg's `error` notification: the subscription's stream failed and ended. */
const watchErrorNotification = z.looseObject({
  subscription: z.number().int().optional(),
  error: z.looseObject({ message: z.string().optional() }).optional(),
});
const sendResult = z
  .looseObject({ ok: z.boolean().optional(), id: z.unknown(), guid: z.unknown() })
  .nullable();

export function parseStatus(result: unknown): ImsgStatus {
  const s = statusSchema.safeParse(result);
  if (!s.success) return { version: "unknown", methods: [], bridgeReady: false };
  return {
    version: s.data.version ?? "unknown",
    methods: s.data.methods ?? [],
    bridgeReady: s.data.bridge?.ready ?? false,
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

export function parseOverflow(params: unknown): { subscription?: number; resumeAfterRowid: number } | null {
  const n = overflowNotification.safeParse(params);
  if (!n.success) return null;
  return {
    ...(n.data.subscription === undefined ? {} : { subscription: n.data.subscription }),
    resumeAfterRowid: n.data.resume_after_rowid,
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

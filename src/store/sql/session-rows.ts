/**
 * SessionRow <-> the `session` table's columns. Decoding is strict: a row that does not decode is
 * reported as corruption, never skipped, because a silently dropped row is a lost link, title or
 * privacy flag. Layer: store.
 */
import type { Selectable } from "kysely";
import type { ChannelLink } from "../../messaging/session/keys.js";
import type { SessionRow } from "../../messaging/session/session-store.js";
import { emptyRow } from "../../messaging/session/session-store.js";
import type { SessionTable } from "./schema.js";

export function sessionToColumns(row: SessionRow): SessionTable {
  return {
    session_key: row.sessionKey,
    origin_channel: row.originLink?.channelType ?? null,
    origin_conversation: row.originLink?.conversationId ?? null,
    origin_thread: row.originLink?.threadId ?? null,
    mirror_channel: row.mirrorLink?.channelType ?? null,
    mirror_conversation: row.mirrorLink?.conversationId ?? null,
    mirror_thread: row.mirrorLink?.threadId ?? null,
    mirror_opt_out: row.mirrorOptOut ? 1 : 0,
    flags: JSON.stringify(
      Object.keys(row.flags)
        .filter((name) => row.flags[name])
        .sort(),
    ),
    generation: row.generation,
    title: row.title ?? null,
    title_kind: row.title === undefined ? null : (row.titleKind ?? null),
    cwd: row.cwd ?? null,
    muted_origin: row.muted.origin ? 1 : 0,
    muted_mirror: row.muted.mirror ? 1 : 0,
    approval_policy: row.approvalPolicy ? row.approvalPolicy : null,
    last_active_ms: row.lastActiveMs ?? null,
  };
}

function link(
  channelType: string | null,
  conversationId: string | null,
  threadId: string | null,
  where: string,
): ChannelLink | undefined {
  if (channelType === null && conversationId === null) return undefined;
  if (channelType === null || conversationId === null) throw new Error(`${where} is half set`);
  return threadId === null ? { channelType, conversationId } : { channelType, conversationId, threadId };
}

/** Throws an Error naming the row and the first problem found. */
export function sessionFromColumns(c: Selectable<SessionTable>): SessionRow {
  const where = `session ${JSON.stringify(c.session_key)}`;
  const row = emptyRow(c.session_key);
  const origin = link(c.origin_channel, c.origin_conversation, c.origin_thread, `${where} origin link`);
  if (origin) row.originLink = origin;
  const mirror = link(c.mirror_channel, c.mirror_conversation, c.mirror_thread, `${where} mirror link`);
  if (mirror) row.mirrorLink = mirror;
  row.mirrorOptOut = Number(c.mirror_opt_out) === 1;
  let flags: unknown;
  try {
    flags = JSON.parse(c.flags);
  } catch {
    throw new Error(`${where} flags are not JSON`);
  }
  if (!Array.isArray(flags) || !flags.every((f) => typeof f === "string")) {
    throw new Error(`${where} flags are not a list of names`);
  }
  for (const name of flags) row.flags[name] = true;
  const generation = Number(c.generation);
  if (!Number.isSafeInteger(generation) || generation < 0) throw new Error(`${where} generation is invalid`);
  row.generation = generation;
  if (c.title !== null) {
    row.title = c.title;
    if (c.title_kind !== null) {
      if (c.title_kind !== "auto" && c.title_kind !== "manual")
        throw new Error(`${where} title kind is invalid`);
      row.titleKind = c.title_kind;
    }
  }
  if (c.cwd !== null) row.cwd = c.cwd;
  if (Number(c.muted_origin) === 1) row.muted.origin = true;
  if (Number(c.muted_mirror) === 1) row.muted.mirror = true;
  if (c.approval_policy) row.approvalPolicy = c.approval_policy;
  if (c.last_active_ms !== null) {
    const ms = Number(c.last_active_ms);
    if (!Number.isFinite(ms)) throw new Error(`${where} last activity is invalid`);
    row.lastActiveMs = ms;
  }
  return row;
}

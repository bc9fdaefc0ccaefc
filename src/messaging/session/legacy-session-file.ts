/**
 * The session file of an install from before the store (`sessions.json`, one JSON document under
 * the data home), decoded for the one-time import into the store and for `parley doctor`. Every
 * malformed shape is corruption: a silently dropped row would be lost state. Layer: messaging.
 */
import type { ChannelLink } from "./keys.js";
import type { SessionRow } from "./session-store.js";
import { emptyRow } from "./session-store.js";

export const SESSION_STORE_FILE = "sessions.json";
export const SESSION_STORE_VERSION = 1;

function fail(what: string): never {
  throw new Error(what);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function optString(raw: Record<string, unknown>, field: string, where: string): string | undefined {
  const v = raw[field];
  if (v === undefined) return undefined;
  return typeof v === "string" ? v : fail(`${where}.${field} is not a string`);
}

function decodeLink(v: unknown, where: string): ChannelLink | undefined {
  if (v === undefined) return undefined;
  if (!isObject(v)) fail(`${where} is not an object`);
  const { channelType, conversationId } = v;
  if (typeof channelType !== "string" || typeof conversationId !== "string") {
    fail(`${where} needs string channelType and conversationId`);
  }
  const link: ChannelLink = { channelType, conversationId };
  const threadId = optString(v, "threadId", where);
  if (threadId !== undefined) link.threadId = threadId;
  return link;
}

function decodeBoolMap(v: unknown, where: string): Record<string, boolean> {
  if (v === undefined) return {};
  if (!isObject(v)) fail(`${where} is not an object`);
  const out: Record<string, boolean> = {};
  for (const [name, on] of Object.entries(v)) {
    if (typeof on !== "boolean") fail(`${where}.${name} is not a boolean`);
    if (on) out[name] = true;
  }
  return out;
}

function decodeRow(sessionKey: string, raw: unknown): SessionRow {
  const where = `sessions[${JSON.stringify(sessionKey)}]`;
  if (!isObject(raw)) fail(`${where} is not an object`);
  const row = emptyRow(sessionKey);
  const originLink = decodeLink(raw.originLink, `${where}.originLink`);
  if (originLink) row.originLink = originLink;
  const mirrorLink = decodeLink(raw.mirrorLink, `${where}.mirrorLink`);
  if (mirrorLink) row.mirrorLink = mirrorLink;
  if (raw.mirrorOptOut !== undefined && typeof raw.mirrorOptOut !== "boolean") {
    fail(`${where}.mirrorOptOut is not a boolean`);
  }
  row.mirrorOptOut = raw.mirrorOptOut === true;
  row.flags = decodeBoolMap(raw.flags, `${where}.flags`);
  const muted = decodeBoolMap(raw.muted, `${where}.muted`);
  if (muted.origin) row.muted.origin = true;
  if (muted.mirror) row.muted.mirror = true;
  const gen = raw.generation ?? 0;
  if (typeof gen !== "number" || !Number.isSafeInteger(gen) || gen < 0) {
    fail(`${where}.generation is not a non-negative integer`);
  }
  row.generation = gen;
  const title = optString(raw, "title", where);
  if (title !== undefined) row.title = title;
  const kind = raw.titleKind;
  if (kind !== undefined) {
    if (kind !== "auto" && kind !== "manual") fail(`${where}.titleKind must be "auto" or "manual"`);
    row.titleKind = kind;
  }
  const cwd = optString(raw, "cwd", where);
  if (cwd !== undefined) row.cwd = cwd;
  const policy = optString(raw, "approvalPolicy", where);
  if (policy) row.approvalPolicy = policy;
  if (raw.lastActiveMs !== undefined) {
    if (typeof raw.lastActiveMs !== "number" || !Number.isFinite(raw.lastActiveMs)) {
      fail(`${where}.lastActiveMs is not a finite number`);
    }
    row.lastActiveMs = raw.lastActiveMs;
  }
  return row;
}

/** Parse a store file's text into rows; throws a plain Error naming the first problem found. */
export function decodeStore(text: string): SessionRow[] {
  const doc: unknown = JSON.parse(text);
  if (!isObject(doc)) fail("top level is not an object");
  if (doc.version !== SESSION_STORE_VERSION) {
    fail(`unsupported version ${JSON.stringify(doc.version)} (this build reads ${SESSION_STORE_VERSION})`);
  }
  if (!isObject(doc.sessions)) fail("sessions is not an object");
  return Object.entries(doc.sessions).map(([key, raw]) => decodeRow(key, raw));
}

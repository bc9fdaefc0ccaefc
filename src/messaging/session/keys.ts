/**
 * Layer 3: session-key namespacing, the DM key model (stable bucket + rotating generation) and the
 * in-channel /link ⇄ /unlink pair. Pure except for the two command handlers, which reach persisted
 * bindings only through the structural `LinkStore` a caller injects. Layer: messaging.
 */
import type { Logger } from "../base/logger.js";

export const SLACK_NAMESPACE = "slack";
/** The bucket `dmScope: "unified"` collapses an operator's direct DMs into. */
export const UNIFIED_NAMESPACE = "unified";

/**
 * Every key prefix a conversation started outside the dashboard can carry. `unified` is listed because
 * such a bucket is still a channel conversation, even though it names no single channel.
 */
export const CHANNEL_SESSION_NAMESPACES = [
  SLACK_NAMESPACE,
  "discord",
  "telegram",
  "whatsapp",
  "webex",
  "wecom",
  "teams",
  "weixin",
  "imessage",
  "feishu",
  "webchat",
  UNIFIED_NAMESPACE,
] as const;
export type ChannelNamespace = (typeof CHANNEL_SESSION_NAMESPACES)[number];

export const CHAT_TYPE_DIRECT = "direct";
/** A group conversation with its own scope (a Telegram Topic, a Webex space, a Feishu group). */
export const CHAT_TYPE_FORUM = "forum";

export const DM_SCOPE_PER_PEER = "per-channel-peer";
export const DM_SCOPE_UNIFIED = "unified";
/** `per-peer` is accepted as a spelling of the default; any other value also means per-peer. */
export type DmScope = typeof DM_SCOPE_PER_PEER | "per-peer" | typeof DM_SCOPE_UNIFIED;

/** The conversation a session belongs to. Compared by VALUE: it is the one spelling of a location. */
export interface ChannelLink {
  channelType: string;
  conversationId: string;
  threadId?: string;
}

/** Thrown where a key would be ambiguous once built; a wrong address is worse than no address. */
export class SessionKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SessionKeyError";
  }
}

export function sessionKey(channelType: string, conversationId: string): string {
  return `${channelType}:${conversationId}`;
}

// A live key uses ':'; a persisted file stem has ':' folded to '_'. Both spell the same namespace.
function inNamespace(key: string, ns: string): boolean {
  return key.startsWith(`${ns}:`) || key.startsWith(`${ns}_`);
}

/** The channel namespace of `key`, or "" when it is not a channel key. */
export function channelNamespaceOf(key: string): ChannelNamespace | "" {
  return CHANNEL_SESSION_NAMESPACES.find((ns) => inNamespace(key, ns)) ?? "";
}

export interface ParsedSessionKey {
  surface: ChannelNamespace;
  agent: string;
  chatType: string;
  scope: string[];
  /** Rotating generation; 0 is the bare bucket (no suffix). */
  gen: number;
  /** The durable bucket: the key without its generation suffix. */
  bucket: string;
}

// ASCII digits only: a generation we mint is ASCII, so anything else is a foreign scope segment.
const GEN_SUFFIX_RE = /^gen([0-9]+)$/;

function genOf(segment: string | undefined): number | null {
  const m = segment === undefined ? null : GEN_SUFFIX_RE.exec(segment);
  if (!m?.[1]) return null;
  const gen = Number(m[1]);
  return Number.isSafeInteger(gen) ? gen : null;
}

/**
 * Parse `{surface}:{agent}:{chatType}:{scope…}[:genN]`; null for anything else. Strict on purpose:
 * a shape outside the grammar (a bare id, `dashboard:` keys) is not addressable, and a wrong
 * decomposition would route to the wrong person where null merely means "not addressable".
 */
export function parseSessionKey(key: string): ParsedSessionKey | null {
  if (!key) return null;
  let segments = key.split(":");
  if (segments.length < 4) return null;
  const surface = CHANNEL_SESSION_NAMESPACES.find((ns) => ns === segments[0]);
  if (surface === undefined) return null;
  const gen = genOf(segments[segments.length - 1]);
  if (gen !== null) {
    segments = segments.slice(0, -1);
    if (segments.length < 4) return null;
  }
  // An empty segment is a malformed key, not an address.
  if (segments.some((s) => s === "")) return null;
  const [, agent = "", chatType = "", ...scope] = segments;
  return { surface, agent, chatType, scope, gen: gen ?? 0, bucket: segments.join(":") };
}

/** `[bucket, generation]` for a DM key, including the short `unified:{agent}[:genN]` shape. */
export function splitDmSessionKey(key: string): [string, number] | null {
  const parsed = parseSessionKey(key);
  if (parsed) return [parsed.bucket, parsed.gen];
  const segments = key.split(":");
  const [ns, agent, tail] = segments;
  if (ns !== UNIFIED_NAMESPACE || !agent) return null;
  if (segments.length === 2) return [key, 0];
  const gen = segments.length === 3 ? genOf(tail) : null;
  return gen === null ? null : [`${ns}:${agent}`, gen];
}

// A colon inside a segment shifts every later segment on parse: the address becomes wrong, not invalid.
function colonFree(segment: string, what: string): string {
  if (segment.includes(":"))
    throw new SessionKeyError(`session-key ${what} must not contain ':': '${segment}'`);
  return segment;
}

export interface DmKeyOptions {
  gen?: number;
  dmScope?: DmScope | (string & {});
  chatType?: string;
  /**
   * The unified bucket carries the operator's history, so only a sender known to BE the operator may
   * share it. Default false: a caller that forgets gets isolation (a split history), never a leak.
   */
  operator?: boolean;
}

/**
 * `{channel}:{agent}:{chatType}:{user}[:genN]`. `user` is a scope PATH (a Topic passes
 * "{chatId}:{threadId}"), so its sub-segments must be non-empty rather than colon-free.
 * `dmScope: "unified"` collapses only an operator's DIRECT chats into `unified:{agent}`: a forum route
 * always keeps its full key so no group can share a session with a DM. An unknown scope means
 * per-peer, so a hand-edited config isolates rather than crashes dispatch.
 */
export function buildDmSessionKey(
  channel: string,
  agent: string,
  user: string,
  opts: DmKeyOptions = {},
): string {
  const { gen = 0, dmScope = DM_SCOPE_PER_PEER, chatType = CHAT_TYPE_DIRECT, operator = false } = opts;
  // A negative or fractional generation would build a suffix the parser cannot read back.
  if (!Number.isSafeInteger(gen) || gen < 0) {
    throw new SessionKeyError(`session-key generation must be a non-negative integer: ${gen}`);
  }
  let bucket: string;
  if (dmScope === DM_SCOPE_UNIFIED && chatType === CHAT_TYPE_DIRECT && operator) {
    bucket = `${UNIFIED_NAMESPACE}:${colonFree(agent, "agent")}`;
  } else {
    if (user.includes(":") && user.split(":").some((s) => s === "")) {
      throw new SessionKeyError(`session-key scope path has an empty segment: '${user}'`);
    }
    bucket = [
      colonFree(channel, "channel"),
      colonFree(agent, "agent"),
      colonFree(chatType, "chat_type"),
      user,
    ].join(":");
  }
  return gen ? `${bucket}:gen${gen}` : bucket;
}

export interface RotationPolicy {
  /** Rotate once the gap since the last message reaches this; <= 0 disables. */
  idleMinutes?: number;
  /** Rotate when a local-time boundary at this hour (0..23) passed since the last message; < 0 disables. */
  dailyResetHour?: number;
  /** Local time = UTC + this many minutes at the given instant. Default: the host's own zone. */
  utcOffsetMinutes?: number | ((epochMs: number) => number);
}

export function hostUtcOffsetMinutes(epochMs: number): number {
  return -new Date(epochMs).getTimezoneOffset();
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/**
 * Whether a message arriving at `nowMs` should start a fresh generation. The first message in a bucket
 * (`lastActiveMs <= 0`) never rotates: there is nothing yet to roll over.
 */
export function shouldRotateGeneration(
  lastActiveMs: number,
  nowMs: number,
  policy: RotationPolicy = {},
): boolean {
  if (lastActiveMs <= 0) return false;
  const { idleMinutes = 0, dailyResetHour = -1, utcOffsetMinutes = hostUtcOffsetMinutes } = policy;
  if (idleMinutes > 0 && nowMs - lastActiveMs >= idleMinutes * MINUTE_MS) return true;
  if (!Number.isInteger(dailyResetHour) || dailyResetHour < 0 || dailyResetHour > 23) return false;
  const offsetMs =
    (typeof utcOffsetMinutes === "function" ? utcOffsetMinutes(nowMs) : utcOffsetMinutes) * MINUTE_MS;
  const localNow = nowMs + offsetMs;
  const localMidnight = localNow - (((localNow % DAY_MS) + DAY_MS) % DAY_MS);
  // The most recent boundary at or before now, back in UTC terms.
  let boundary = localMidnight + dailyResetHour * HOUR_MS - offsetMs;
  if (boundary > nowMs) boundary -= DAY_MS;
  return lastActiveMs < boundary && boundary <= nowMs;
}

// ── /link ⇄ /unlink ────────────────────────────────────────────────────────────────────────────

type MaybePromise<T> = T | Promise<T>;

/** The slice of the session store the link commands need; a SessionStore satisfies it structurally. */
export interface LinkStore {
  /**
   * Run `fn` as ONE persisted write. Like a transaction that commits on the way out EVEN WHEN `fn`
   * throws, which is why callers order a refusable step first.
   */
  batch<T>(fn: () => Promise<T>): Promise<T>;
  getMirrorLink(key: string): MaybePromise<ChannelLink | null>;
  /** Must refuse (throw) BEFORE mutating anything when another owner holds `link`. */
  setMirrorLink(key: string, link: ChannelLink): MaybePromise<void>;
  /** True when a binding was removed. */
  clearMirrorLink(key: string): MaybePromise<boolean>;
  /** Clear every binding targeting exactly `location` (by value); returns the keys swept. */
  clearMirrorLinksAt(location: ChannelLink): MaybePromise<string[]>;
  mirrorOptOut(key: string): MaybePromise<boolean>;
  setMirrorOptOut(key: string, optedOut: boolean): MaybePromise<void>;
}

export type LinkLogger = Pick<Logger, "info" | "debug">;

export function sameLocation(a: ChannelLink, b: ChannelLink): boolean {
  return (
    a.channelType === b.channelType && a.conversationId === b.conversationId && a.threadId === b.threadId
  );
}

/**
 * /link: claim `location` as the conversation's mirror and withdraw a previous /unlink. Returns the
 * reply text. An ownership conflict from the store propagates: only a resume-capable channel has
 * something conversation-specific to say about it.
 */
export async function rebindConversationLocation(
  store: LinkStore,
  args: { key: string; location: ChannelLink; unlinkCommand: string },
): Promise<string> {
  await store.batch(async () => {
    // Claim FIRST: the batch persists even when it throws, so withdrawing the opt-out ahead of a
    // refused claim would silently turn mirroring back on for a link that never happened.
    await store.setMirrorLink(args.key, args.location);
    await store.setMirrorOptOut(args.key, false);
  });
  return (
    "✅ Linked. Replies from the dashboard for this conversation will also show up here. " +
    `Send ${args.unlinkCommand} to stop.`
  );
}

/**
 * /unlink: "nothing mirrors into this conversation". Records the opt-out, clears the conversation's
 * own binding, then sweeps every binding at `location` by value (a row under a rotated generation or
 * another session's mirror occupies it while no spelling of `key` reaches it). `swept` non-empty is
 * the caller's cue to refresh any dashboard projection.
 */
export async function releaseConversationLocation(
  store: LinkStore,
  args: { key: string; location: ChannelLink; channel: string; logger?: LinkLogger },
): Promise<{ text: string; swept: string[] }> {
  const { key, location } = args;
  // One write for all of it, so the location is never half-freed while the reply claims ✅.
  const { cleared, swept } = await store.batch(async () => {
    // The opt-out goes in the same batch: without it the next turn's automatic bind undoes the unlink.
    await store.setMirrorOptOut(key, true);
    const own = (await store.clearMirrorLink(key)) ? 1 : 0;
    const sweptKeys = await store.clearMirrorLinksAt(location);
    return { cleared: own + sweptKeys.length, swept: sweptKeys };
  });
  if (swept.length > 0) {
    // A swept key may belong to another session: a cross-session write deserves a trace.
    args.logger?.info(`${args.channel}: unlink swept ${swept.length} mirror binding(s)`, { swept });
  }
  if (cleared > 1) return { text: `✅ Unlinked (${cleared} bindings).`, swept };
  if (cleared === 1) return { text: "✅ Unlinked.", swept };
  return { text: "This conversation wasn't linked.", swept };
}

/**
 * Per-turn self-healing bind of a conversation as its own mirror. Returns true iff it wrote one.
 * Never throws: it runs on the turn path, where a raise costs the user the answer.
 */
export async function bindOriginMirror(
  store: LinkStore,
  args: { key: string; location: ChannelLink; logger: LinkLogger },
): Promise<boolean> {
  // A unified bucket names no single conversation; binding it would mirror one user's replies to another.
  if (channelNamespaceOf(args.key) === UNIFIED_NAMESPACE) return false;
  try {
    if (await store.mirrorOptOut(args.key)) return false;
    // Any existing binding is deliberate (the owner may have aimed it elsewhere): leave it alone.
    if ((await store.getMirrorLink(args.key)) !== null) return false;
    await store.setMirrorLink(args.key, args.location);
    return true;
  } catch (error) {
    args.logger.debug(`${args.location.channelType}: origin mirror bind skipped`, { key: args.key, error });
    return false;
  }
}

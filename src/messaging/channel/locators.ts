/**
 * Locators: the opaque, versioned handle an agent host gets instead of a message body
 * (`<adapter>:v<version>:<base64url>`, the adapter being the channel). A wake carries only who,
 * where and a locator; the host reads the body through a tool that marks it untrusted and answers
 * through a tool that resolves the locator. A locator is self-contained (no process-local lookup
 * state survives a restart, so none is needed): it names its conversation and, for a message, the
 * durable inbox entry, and is HMAC-signed with a key kept in the data home, so a host (or a
 * prompt-injected agent) can neither forge one nor move one to another conversation. It holds
 * structural ids only, never sender-controlled text. Pure: the key and the clock are injected.
 * Layer: messaging.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const LOCATOR_VERSION = 1;
/** Bytes of HMAC-SHA256 kept: 128 bits, far past guessing, and a locator stays short. */
const MAC_BYTES = 16;
/** Longest locator read at all: a bounded decode, whatever a caller passes. */
const MAX_LOCATOR_CHARS = 512;

/** chat: a conversation. message: a message handed to the host. sent: one the host sent (edits). */
export type LocatorKind = "chat" | "message" | "sent";

export interface LocatorClaims {
  kind: LocatorKind;
  /** The conversation, `<channel>:<route>`. */
  conversation: string;
  /** The inbox entry (message, sent). */
  entry?: number;
  /** Issued at, epoch ms. */
  issuedMs: number;
}

export type LocatorRefusal = "malformed" | "unknown_adapter" | "unknown_version" | "forged" | "stale";

export type LocatorReading =
  | { ok: true; channel: string; claims: LocatorClaims }
  | { ok: false; reason: LocatorRefusal; message: string };

export interface LocatorOptions {
  /** The signing key (32 random bytes from the data home). */
  key: Uint8Array;
  /** The channels running now: a locator naming another is refused. */
  adapters: () => readonly string[];
  now: () => number;
  /** A locator older than this is stale: a host that still holds it has lost the thread. */
  ttlMs: number;
}

interface Payload {
  k: "c" | "m" | "s";
  c: string;
  e?: number;
  t: number;
}

const KIND_CODE: Readonly<Record<LocatorKind, Payload["k"]>> = { chat: "c", message: "m", sent: "s" };
const CODE_KIND: Readonly<Record<Payload["k"], LocatorKind>> = { c: "chat", m: "message", s: "sent" };
const ADAPTER = /^[a-z][a-z0-9_-]{0,31}$/;

export class Locators {
  constructor(private readonly o: LocatorOptions) {
    if (o.key.length < 32) throw new RangeError("locators: the key must be at least 32 bytes");
  }

  mint(channel: string, claims: Omit<LocatorClaims, "issuedMs">): string {
    if (!ADAPTER.test(channel)) throw new RangeError(`locators: not a channel name: ${channel}`);
    const payload: Payload = {
      k: KIND_CODE[claims.kind],
      c: claims.conversation,
      ...(claims.entry !== undefined ? { e: claims.entry } : {}),
      t: this.o.now(),
    };
    const json = Buffer.from(JSON.stringify(payload), "utf8");
    const body = Buffer.concat([this.mac(channel, LOCATOR_VERSION, json), json]);
    return `${channel}:v${LOCATOR_VERSION}:${body.toString("base64url")}`;
  }

  /** Decode and verify; every refusal says what was wrong in words a host can act on. */
  read(locator: unknown): LocatorReading {
    if (typeof locator !== "string" || locator.length > MAX_LOCATOR_CHARS)
      return refuse("malformed", "not a locator: pass the locator string exactly as it was given");
    const m = /^([a-z][a-z0-9_-]{0,31}):v([0-9]{1,4}):([A-Za-z0-9_-]+)$/.exec(locator);
    if (!m) return refuse("malformed", "not a locator: expected <channel>:v<version>:<data>");
    const [, channel = "", versionText = "", data = ""] = m;
    if (!this.o.adapters().includes(channel))
      return refuse("unknown_adapter", `no channel "${channel}" is running here to resolve this locator`);
    const version = Number(versionText);
    if (version !== LOCATOR_VERSION)
      return refuse(
        "unknown_version",
        `locator version v${version} is not supported (this parley reads v${LOCATOR_VERSION})`,
      );
    const body = Buffer.from(data, "base64url");
    if (body.length <= MAC_BYTES) return refuse("malformed", "the locator is truncated");
    const mac = body.subarray(0, MAC_BYTES);
    const json = body.subarray(MAC_BYTES);
    // Constant time: a forger learns nothing from how long a wrong guess took.
    if (!timingSafeEqual(mac, this.mac(channel, version, json)))
      return refuse("forged", "the locator's signature does not verify: it was altered or not issued here");
    const payload = parsePayload(json);
    if (!payload) return refuse("malformed", "the locator's data does not decode");
    if (!payload.c.startsWith(`${channel}:`))
      return refuse("forged", "the locator names a conversation of another channel");
    if (this.o.now() - payload.t > this.o.ttlMs)
      return refuse("stale", "the locator has expired: use one from a more recent message");
    const claims: LocatorClaims = {
      kind: CODE_KIND[payload.k],
      conversation: payload.c,
      ...(payload.e !== undefined ? { entry: payload.e } : {}),
      issuedMs: payload.t,
    };
    return { ok: true, channel, claims };
  }

  private mac(channel: string, version: number, json: Uint8Array): Buffer {
    // Domain-separated: the same key signs nothing else, and the prefix is covered too.
    return createHmac("sha256", this.o.key)
      .update(`parley-locator\u0000${channel}\u0000v${version}\u0000`)
      .update(json)
      .digest()
      .subarray(0, MAC_BYTES);
  }
}

function refuse(reason: LocatorRefusal, message: string): LocatorReading {
  return { ok: false, reason, message };
}

function parsePayload(json: Uint8Array): Payload | null {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(json).toString("utf8"));
  } catch {
    return null;
  }
  const p = value as Partial<Payload> | null;
  if (!p || typeof p !== "object") return null;
  if (p.k !== "c" && p.k !== "m" && p.k !== "s") return null;
  if (typeof p.c !== "string" || p.c === "" || typeof p.t !== "number" || !Number.isFinite(p.t)) return null;
  if (p.e !== undefined && !(Number.isSafeInteger(p.e) && p.e > 0)) return null;
  if ((p.k === "c") !== (p.e === undefined)) return null;
  return { k: p.k, c: p.c, t: p.t, ...(p.e !== undefined ? { e: p.e } : {}) };
}

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  defineCapabilities,
  type TransportCapabilities,
} from "../../../src/messaging/channel/capabilities.js";
import {
  chunkForTransport,
  sendProactive,
  sessionPrincipal,
} from "../../../src/messaging/channel/proactive.js";
import { type InboundMessage, MessagingTransport } from "../../../src/messaging/channel/transport.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { buildDmSessionKey } from "../../../src/messaging/session/keys.js";
import { MemorySessionStore } from "../../../src/messaging/session/session-store.js";

interface Sent {
  conversationId: string;
  content: string;
  threadId: string | undefined;
}

/** A real transport: an allow-list of principals, a small cap, and a scripted reply per send. */
class ListTransport extends MessagingTransport {
  readonly channelType = "telegram";
  override capabilities: TransportCapabilities;
  readonly allowed = new Set<string>();
  readonly sent: Sent[] = [];
  readonly checks: { conversationId: string; threadId: string | undefined; principal: string }[] = [];
  /** Per-send outcome: an id, or an Error to throw. Defaults to a fresh id. */
  replies: (string | Error)[] = [];
  throwOnCheck = false;

  constructor(audit: MemoryAuditSink, caps: Partial<TransportCapabilities> = {}) {
    super({ audit });
    this.capabilities = defineCapabilities({ maxMessageChars: 10, ...caps });
  }
  override maySendTo(
    conversationId: string,
    threadId: string | undefined,
    opts: { principal: string },
  ): boolean {
    this.checks.push({ conversationId, threadId, principal: opts.principal });
    if (this.throwOnCheck) throw new TypeError("roster not loaded");
    return this.allowed.has(opts.principal);
  }
  async sendMessage(conversationId: string, content: string, threadId?: string): Promise<string> {
    const reply = this.replies.shift() ?? `m${this.sent.length + 1}`;
    if (reply instanceof Error) throw reply;
    this.sent.push({ conversationId, content, threadId });
    return reply;
  }
  async resolveConversation(userId: string): Promise<string> {
    return userId;
  }
  async fetchHistory(): Promise<InboundMessage[]> {
    return [];
  }
  protected isBotAuthored(): boolean {
    return false;
  }
  protected normalize(): InboundMessage | null {
    return null;
  }
  authorize(): boolean {
    return false;
  }
}

const key = buildDmSessionKey("telegram", "agent", "alice");

function setup(caps: Partial<TransportCapabilities> = {}) {
  const audit = new MemoryAuditSink();
  const transport = new ListTransport(audit, caps);
  transport.allowed.add("alice");
  const store = new MemorySessionStore();
  store.setOriginLink(key, { channelType: "telegram", conversationId: "chat-1", threadId: "t1" });
  const transports = new Map<string, MessagingTransport>([["telegram", transport]]);
  const send = (text: string, sessionKey = key) =>
    sendProactive({ store, transports, audit, sessionKey, text });
  return { audit, transport, store, send };
}

describe("sessionPrincipal", () => {
  it("names the peer of a 1:1 DM key, and nobody otherwise", () => {
    expect(sessionPrincipal(key)).toBe("alice");
    expect(sessionPrincipal(buildDmSessionKey("telegram", "agent", "alice", { gen: 3 }))).toBe("alice");
    expect(sessionPrincipal(buildDmSessionKey("telegram", "a", "-100:7", { chatType: "forum" }))).toBe("");
    expect(sessionPrincipal("unified:agent")).toBe("");
    expect(sessionPrincipal("slack:1700000000.1")).toBe("");
  });
});

describe("sendProactive", () => {
  it("chunks to the cap, sends every part in order to the linked thread, and confirms each", async () => {
    const { send, transport, audit } = setup();
    const result = await send("abcdefghijKLMNOPQRSTuv");
    expect(result).toEqual({ status: "sent", parts: 3 });
    expect(transport.sent.map((s) => s.content)).toEqual(["abcdefghij", "KLMNOPQRST", "uv"]);
    expect(transport.sent.every((s) => s.conversationId === "chat-1" && s.threadId === "t1")).toBe(true);
    expect(transport.checks).toEqual([{ conversationId: "chat-1", threadId: "t1", principal: "alice" }]);
    expect(audit.find("channel.proactive_send", "sent")[0]?.fields).toMatchObject({
      channel: "telegram",
      parts: 3,
    });
  });

  it("refuses, audits and reports a recipient no longer on the roster", async () => {
    const { send, transport, audit } = setup();
    transport.allowed.clear();
    expect(await send("hello")).toEqual({ status: "refused", reason: "not_allowed" });
    expect(transport.sent).toEqual([]);
    expect(audit.find("channel.proactive_send_authorize", "denied")).toHaveLength(1);
    expect(audit.find("channel.proactive_send", "refused")[0]?.fields.reason).toBe("not_allowed");
  });

  it("a THROWING allow-list check has authorized nobody", async () => {
    const { send, transport, audit } = setup();
    transport.throwOnCheck = true;
    expect(await send("hello")).toEqual({ status: "refused", reason: "allow_check_failed" });
    expect(transport.sent).toEqual([]);
    expect(audit.find("channel.proactive_send_authorize", "denied")[0]?.fields).toMatchObject({
      reason: "check_failed",
      error: "TypeError",
    });
  });

  it("refuses a transport that cannot send proactively, before asking its roster", async () => {
    const { send, transport } = setup({ supportsProactiveSend: false });
    expect(await send("hello")).toEqual({ status: "refused", reason: "not_proactive" });
    expect(transport.checks).toEqual([]);
  });

  it("refuses when the session has no origin link, or its transport is not registered", async () => {
    const { send, store, audit } = setup();
    expect(await send("hello", "telegram:agent:direct:nobody")).toEqual({
      status: "refused",
      reason: "no_link",
    });
    store.setOriginLink(key, { channelType: "elsewhere", conversationId: "x" });
    expect(await send("hello")).toEqual({ status: "refused", reason: "no_transport" });
    expect(audit.find("channel.proactive_send", "refused").map((r) => r.fields.reason)).toEqual([
      "no_link",
      "no_transport",
    ]);
  });

  it("refuses an empty message rather than reporting it delivered", async () => {
    const { send } = setup();
    expect(await send("   ")).toEqual({ status: "refused", reason: "empty" });
  });

  it("stops at the first unconfirmed part: the rest would arrive as an orphaned fragment", async () => {
    const { send, transport, audit } = setup();
    transport.replies = ["id1", "", "id3"];
    expect(await send("a".repeat(30))).toEqual({ status: "partial", sent: 1, total: 3 });
    expect(transport.sent).toHaveLength(2);
    expect(audit.find("channel.proactive_send", "failed")[0]?.fields).toMatchObject({
      reason: "unconfirmed",
      sent: 1,
      total: 3,
    });
  });

  it("an unconfirmed FIRST part is a refusal, and a transport error is reported, not absorbed", async () => {
    const first = setup();
    first.transport.replies = [""];
    expect(await first.send("hello")).toEqual({ status: "refused", reason: "unconfirmed" });
    const second = setup();
    second.transport.replies = ["id1", new Error("502")];
    expect(await second.send("b".repeat(20))).toEqual({ status: "partial", sent: 1, total: 2 });
    const third = setup();
    third.transport.replies = [new Error("offline")];
    expect(await third.send("hi")).toEqual({ status: "refused", reason: "send_failed" });
  });

  it("an id-less transport (returnsMessageId=false) counts an empty id as delivered", async () => {
    const { send, transport } = setup({ returnsMessageId: false });
    transport.replies = ["", "", ""];
    expect(await send("c".repeat(25))).toEqual({ status: "sent", parts: 3 });
  });

  it("applies the display-form floor: no renderer sits on this path", async () => {
    const { send, transport } = setup({ maxMessageChars: 100 });
    expect(await send("hi @everyone <!-- hidden -->there")).toEqual({ status: "sent", parts: 1 });
    expect(transport.sent[0]?.content).not.toContain("@everyone");
    expect(transport.sent[0]?.content).not.toContain("hidden");
  });

  it("bounds bytes as well as code points on a byte-capped platform", async () => {
    const { send, transport } = setup({ maxMessageChars: 100, maxMessageBytes: 8 });
    expect(await send("ééééééé")).toEqual({ status: "sent", parts: 2 });
    expect(transport.sent.map((s) => s.content)).toEqual(["éééé", "ééé"]);
  });
});

describe("chunkForTransport", () => {
  it("never exceeds either cap and loses nothing (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 200 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 40 }),
        (text, chars, bytes) => {
          const maxBytes = bytes === 0 ? 0 : Math.max(bytes, 4);
          const caps = defineCapabilities({ maxMessageChars: chars, maxMessageBytes: maxBytes });
          const parts = chunkForTransport(text, caps);
          expect(parts.join("")).toBe(text);
          for (const p of parts) {
            expect(Array.from(p).length).toBeLessThanOrEqual(chars);
            if (maxBytes > 0) expect(new TextEncoder().encode(p).length).toBeLessThanOrEqual(maxBytes);
          }
        },
      ),
    );
  });
});

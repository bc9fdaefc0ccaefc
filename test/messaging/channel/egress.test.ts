import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  defineCapabilities,
  type TransportCapabilities,
} from "../../../src/messaging/channel/capabilities.js";
import type { EgressDestination } from "../../../src/messaging/channel/egress.js";
import {
  describeEgress,
  Egress,
  sessionPrincipal,
  splitForTarget,
} from "../../../src/messaging/channel/egress.js";
import { type InboundMessage, MessagingTransport } from "../../../src/messaging/channel/transport.js";
import type { OutboundFile } from "../../../src/messaging/files/outbound-files.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { buildDmSessionKey } from "../../../src/messaging/session/keys.js";
import { MemorySessionStore } from "../../../src/messaging/session/session-store.js";
import { testDrops } from "../../helpers/drops.js";

interface Sent {
  conversationId: string;
  content: string;
  threadId: string | undefined;
}

/** A real transport: an allow-list of principals, a small cap, and a scripted reply per send. */
class ListTransport extends MessagingTransport {
  readonly channelType: string = "telegram";
  override capabilities: TransportCapabilities;
  readonly allowed = new Set<string>();
  readonly sent: Sent[] = [];
  readonly checks: { conversationId: string; threadId: string | undefined; principal: string }[] = [];
  readonly uploads: { conversationId: string; names: string[] }[] = [];
  /** Per-send outcome: an id, or an Error to throw. Defaults to a fresh id. */
  replies: (string | Error)[] = [];
  throwOnCheck = false;

  constructor(audit: MemoryAuditSink, caps: Partial<TransportCapabilities> = {}) {
    super({ drops: testDrops(audit, "test"), audit });
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
  override configuredTargets() {
    return [{ targetId: "dm:alice", label: "Alice", available: true }];
  }
  override resolveConfiguredTarget(targetId: string) {
    return targetId === "dm:alice" && this.allowed.has("alice") ? { conversationId: "alice-dm" } : null;
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

/** The transport with file uploads (a channel that takes files from a bot). */
class UploadTransport extends ListTransport {
  override async sendFiles(
    conversationId: string,
    _threadId: string | undefined,
    files: readonly OutboundFile[],
  ) {
    this.uploads.push({ conversationId, names: files.map((f) => f.filename) });
    return "up1";
  }
}

function setup(caps: Partial<TransportCapabilities> = {}, opts: { uploads?: boolean } = {}) {
  const audit = new MemoryAuditSink();
  const transport = opts.uploads ? new UploadTransport(audit, caps) : new ListTransport(audit, caps);
  transport.allowed.add("alice");
  const store = new MemorySessionStore();
  store.setOriginLink(key, { channelType: "telegram", conversationId: "chat-1", threadId: "t1" });
  const egress = new Egress({
    audit,
    store,
    targets: { phone: "telegram:dm:alice", gone: "elsewhere:dm:x", typo: "nocolon" },
  });
  egress.register(transport);
  const send = (text: string, sessionKey = key) =>
    egress.send({ purpose: "agent", destination: { kind: "session", sessionKey }, text });
  const to = (destination: EgressDestination, text: string) =>
    egress.send({ purpose: "mirror", destination, text });
  return { audit, transport, store, send, to, egress };
}

const png: OutboundFile = {
  ref: { start: 0, end: 0, alt: "", dest: "/x.png" },
  path: "/x.png",
  alt: "",
  mime: "image/png",
  bytes: new Uint8Array([1, 2, 3]),
  filename: "x.png",
};

describe("sessionPrincipal", () => {
  it("names the peer of a 1:1 DM key, and nobody otherwise", () => {
    expect(sessionPrincipal(key)).toBe("alice");
    expect(sessionPrincipal(buildDmSessionKey("telegram", "agent", "alice", { gen: 3 }))).toBe("alice");
    expect(sessionPrincipal(buildDmSessionKey("telegram", "a", "-100:7", { chatType: "forum" }))).toBe("");
    expect(sessionPrincipal("unified:agent")).toBe("");
    expect(sessionPrincipal("slack:1700000000.1")).toBe("");
  });
});

describe("Egress.send", () => {
  it("chunks to the cap, sends every part in order to the linked thread, and confirms each", async () => {
    const { send, transport, audit } = setup();
    const result = await send("abcdefghijKLMNOPQRSTuv");
    expect(result).toEqual({ status: "sent", parts: 3, channel: "telegram" });
    expect(transport.sent.map((s) => s.content)).toEqual(["abcdefghij", "KLMNOPQRST", "uv"]);
    expect(transport.sent.every((s) => s.conversationId === "chat-1" && s.threadId === "t1")).toBe(true);
    expect(transport.checks).toEqual([{ conversationId: "chat-1", threadId: "t1", principal: "alice" }]);
    expect(audit.find("channel.proactive_send", "sent")[0]?.fields).toMatchObject({
      channel: "telegram",
      purpose: "agent",
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
    expect(await send("c".repeat(25))).toEqual({ status: "sent", parts: 3, channel: "telegram" });
  });

  it("applies the display-form floor: no renderer sits on this path", async () => {
    const { send, transport } = setup({ maxMessageChars: 100 });
    expect(await send("hi @everyone <!-- hidden -->there")).toEqual({
      status: "sent",
      parts: 1,
      channel: "telegram",
    });
    expect(transport.sent[0]?.content).not.toContain("@everyone");
    expect(transport.sent[0]?.content).not.toContain("hidden");
  });

  it("bounds bytes as well as code points on a byte-capped platform", async () => {
    const { send, transport } = setup({ maxMessageChars: 100, maxMessageBytes: 8 });
    expect(await send("ééééééé")).toEqual({ status: "sent", parts: 2, channel: "telegram" });
    expect(transport.sent.map((s) => s.content)).toEqual(["éééé", "ééé"]);
  });

  it("redacts a credential before splitting, so no part carries either half of it", async () => {
    const { send, transport } = setup({ maxMessageChars: 30 });
    const secret = "AKIAIOSFODNN7EXAMPLE";
    expect((await send(`the key is ${secret} ok`)).status).toBe("sent");
    const all = transport.sent.map((s) => s.content).join("");
    expect(all).not.toContain(secret);
    expect(all).not.toContain("IOSFODNN7");
  });

  it("renders a table for the target (a grid where the platform has no tables)", async () => {
    const { send, transport } = setup({ maxMessageChars: 500, tableMode: "grid" });
    await send("| a | b |\n|---|---|\n| 1 | 2 |");
    expect(transport.sent[0]?.content).toContain("```");
    expect(transport.sent[0]?.content).not.toContain("|---|");
  });

  it("delivers to a stored link on behalf of a session, re-checking that session's principal", async () => {
    const { to, transport } = setup();
    const link = { channelType: "telegram", conversationId: "chat-9" };
    expect((await to({ kind: "link", link, sessionKey: key }, "hi")).status).toBe("sent");
    expect(transport.checks.at(-1)).toEqual({
      conversationId: "chat-9",
      threadId: undefined,
      principal: "alice",
    });
    const stranger = buildDmSessionKey("telegram", "agent", "mallory");
    expect(await to({ kind: "link", link, sessionKey: stranger }, "hi")).toEqual({
      status: "refused",
      reason: "not_allowed",
    });
  });

  it("a named target resolves through the transport's own allow-list, and only a configured name does", async () => {
    const { to, transport, audit, egress } = setup();
    expect(egress.targetNames()).toEqual(["gone", "phone", "typo"]);
    expect((await to({ kind: "target", name: "phone" }, "hi")).status).toBe("sent");
    expect(transport.sent.at(-1)?.conversationId).toBe("alice-dm");
    expect(transport.checks.at(-1)?.principal).toBe("alice");
    expect(await to({ kind: "target", name: "nobody" }, "hi")).toEqual({
      status: "refused",
      reason: "unknown_target",
    });
    expect(await to({ kind: "target", name: "typo" }, "hi")).toEqual({
      status: "refused",
      reason: "unknown_target",
    });
    expect(await to({ kind: "target", name: "gone" }, "hi")).toEqual({
      status: "refused",
      reason: "no_transport",
    });
    transport.allowed.clear();
    // Removed from the allow-list after it was configured: the target no longer resolves.
    expect(await to({ kind: "target", name: "phone" }, "hi")).toEqual({
      status: "refused",
      reason: "unknown_target",
    });
    expect(audit.find("channel.proactive_send", "refused").map((r) => r.fields.target)).toEqual([
      "nobody",
      "typo",
      "gone",
      "phone",
    ]);
  });

  it("files go only to a channel that takes them, through the same authorization", async () => {
    const plain = setup({ filesOutbound: true });
    expect(
      await plain.egress.sendFiles({
        purpose: "agent",
        destination: { kind: "session", sessionKey: key },
        files: [png],
      }),
    ).toEqual({ status: "refused", reason: "files_unsupported" });
    const uploads = setup({ filesOutbound: true }, { uploads: true });
    expect(
      await uploads.egress.sendFiles({
        purpose: "agent",
        destination: { kind: "session", sessionKey: key },
        files: [png],
      }),
    ).toEqual({ status: "sent", parts: 1, channel: "telegram" });
    expect(uploads.transport.uploads).toEqual([{ conversationId: "chat-1", names: ["x.png"] }]);
    uploads.transport.allowed.clear();
    expect(
      await uploads.egress.sendFiles({
        purpose: "agent",
        destination: { kind: "session", sessionKey: key },
        files: [png],
      }),
    ).toEqual({ status: "refused", reason: "not_allowed" });
    expect(uploads.transport.uploads).toHaveLength(1);
  });

  it("describes every outcome in one line that names no address", () => {
    expect(describeEgress({ status: "sent", parts: 2, channel: "telegram" })).toBe("delivered (2 messages)");
    expect(describeEgress({ status: "refused", reason: "not_allowed" })).toBe(
      "refused: the recipient is not (or no longer) allowed (not_allowed)",
    );
    expect(describeEgress({ status: "partial", sent: 1, total: 3 })).toContain("1 of 3");
  });
});

describe("splitForTarget", () => {
  it("never exceeds either cap and loses no word (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-zé€😀]{1,8}$/u), { maxLength: 30 }).map((w) => w.join(" ")),
        fc.integer({ min: 10, max: 40 }),
        fc.integer({ min: 0, max: 40 }),
        (text, chars, bytes) => {
          const maxBytes = bytes === 0 ? 0 : Math.max(bytes, 16);
          const caps = defineCapabilities({ maxMessageChars: chars, maxMessageBytes: maxBytes });
          const parts = splitForTarget(text, caps);
          expect(parts.join("").replace(/\s+/g, "")).toBe(text.replace(/\s+/g, ""));
          for (const p of parts) {
            expect(Array.from(p).length).toBeLessThanOrEqual(chars);
            if (maxBytes > 0) expect(new TextEncoder().encode(p).length).toBeLessThanOrEqual(maxBytes);
          }
        },
      ),
    );
  });
});

describe("the owner destination", () => {
  /** A channel that knows where its owner is (the web chat's token holder, say). */
  class OwnerTransport extends ListTransport {
    override readonly channelType = "webchat";
    override ownerTarget() {
      return { conversationId: "owner-chat" };
    }
    override maySendTo(conversationId: string): boolean {
      return conversationId === "owner-chat";
    }
  }

  it("reaches the owner on another channel that knows where they are, never on the channel excepted", async () => {
    const { egress, audit } = setup();
    const web = new OwnerTransport(audit, { maxMessageChars: 100 });
    egress.register(web);
    const told = await egress.send({
      purpose: "notice",
      destination: { kind: "owner", except: "whatsapp" },
      text: "WhatsApp stopped",
    });
    expect(told).toEqual({ status: "sent", parts: 1, channel: "webchat" });
    expect(web.sent.map((s) => [s.conversationId, s.content])).toEqual([["owner-chat", "WhatsApp stopped"]]);
    const itself = await egress.send({
      purpose: "notice",
      destination: { kind: "owner", except: "webchat" },
      text: "the web chat stopped",
    });
    // The other channel registered (the ListTransport) names no owner: nowhere to say it, and said so.
    expect(itself).toEqual({ status: "refused", reason: "no_link" });
    expect(audit.find("channel.proactive_send", "refused").at(-1)?.fields).toMatchObject({
      purpose: "notice",
      destination: "owner",
      reason: "no_link",
      except: "webchat",
    });
  });
});

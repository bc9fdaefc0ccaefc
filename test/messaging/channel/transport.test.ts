import { describe, expect, it } from "vitest";
import {
  capabilitiesToJson,
  DEFAULT_CAPABILITIES,
  defineCapabilities,
  deliveryConfirmed,
} from "../../../src/messaging/channel/capabilities.js";
import type { InboundMessage } from "../../../src/messaging/channel/transport.js";
import { inboundMessage, MessagingTransport } from "../../../src/messaging/channel/transport.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { testDrops } from "../../helpers/drops.js";

interface Raw {
  from: string;
  bot?: boolean;
  text: string;
}

/** A minimal real transport: an allow-list that is empty unless configured. */
class ListTransport extends MessagingTransport<Raw> {
  readonly channelType = "test";
  allowed = new Set<string>();
  acked: Raw[] = [];
  async sendMessage(): Promise<string> {
    return "m1";
  }
  async resolveConversation(userId: string): Promise<string> {
    return `dm-${userId}`;
  }
  async fetchHistory(): Promise<InboundMessage[]> {
    return [];
  }
  protected override async ack(raw: Raw): Promise<void> {
    this.acked.push(raw);
  }
  protected isBotAuthored(raw: Raw): boolean {
    return raw.bot === true;
  }
  protected normalize(raw: Raw): InboundMessage | null {
    return inboundMessage({
      channelType: "test",
      userId: raw.from,
      conversationId: `c-${raw.from}`,
      text: raw.text,
    });
  }
  authorize(message: InboundMessage): boolean {
    return this.allowed.has(message.userId);
  }
}

describe("MessagingTransport.receive", () => {
  it("acks, drops bots, denies by default and audits the refusal", async () => {
    const audit = new MemoryAuditSink();
    const t = new ListTransport({ drops: testDrops(audit, "test"), audit });
    expect(await t.receive({ from: "u1", bot: true, text: "hi" })).toEqual({
      status: "dropped",
      reason: "bot_authored",
    });
    const denied = await t.receive({ from: "u1", text: "hi" });
    expect(denied.status).toBe("denied");
    expect(audit.find("inbound", "denied")).toHaveLength(1);
    expect(audit.find("inbound", "denied")[0]?.fields).toMatchObject({ channel: "test", user: "u1" });
    t.allowed.add("u1");
    const admitted = await t.receive({ from: "u1", text: "hi" });
    expect(admitted.status === "dispatched" && admitted.message.text).toBe("hi");
    expect(t.acked).toHaveLength(3);
  });

  it("drops an empty envelope but never a message with attachments", async () => {
    const t = new ListTransport({
      drops: testDrops(new MemoryAuditSink(), "test"),
      audit: new MemoryAuditSink(),
    });
    t.allowed.add("u");
    expect(await t.receive({ from: "u", text: "  " })).toEqual({ status: "dropped", reason: "empty" });
  });

  it("denies proactive sends and lists no targets unless a transport opts in", () => {
    const t = new ListTransport({
      drops: testDrops(new MemoryAuditSink(), "test"),
      audit: new MemoryAuditSink(),
    });
    expect(t.maySendTo("c", undefined, { principal: "u" })).toBe(false);
    expect(t.configuredTargets()).toEqual([]);
    expect(t.resolveConfiguredTarget("anything")).toBeNull();
  });
});

describe("TransportCapabilities", () => {
  it("defaults to the WhatsApp-like floor", () => {
    expect(capabilitiesToJson(DEFAULT_CAPABILITIES)).toEqual({
      streaming: false,
      edit: false,
      reactions: false,
      files_inbound: false,
      files_outbound: false,
      rich_blocks: false,
      threads: false,
      table_mode: "off",
      native_tables: false,
      supports_session_resume: false,
      max_message_chars: 4096,
      max_message_bytes: 0,
      max_buttons: 3,
      mention_grammars: true,
      supports_proactive_send: true,
      returns_message_id: true,
    });
    expect(Object.isFrozen(defineCapabilities({ edit: true }))).toBe(true);
    expect(defineCapabilities({ edit: true }).streaming).toBe(false);
  });

  it("deliveryConfirmed honours returnsMessageId both ways", () => {
    const withIds = defineCapabilities();
    const idless = defineCapabilities({ returnsMessageId: false });
    expect(deliveryConfirmed(withIds, "123")).toBe(true);
    expect(deliveryConfirmed(withIds, "")).toBe(false);
    expect(deliveryConfirmed(withIds, null)).toBe(false);
    expect(deliveryConfirmed(idless, "")).toBe(true);
  });
});

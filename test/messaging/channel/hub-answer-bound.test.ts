/**
 * The hub for a channel whose every reply answers one inbound message (Feishu, WeCom): mid-turn
 * messages are steered or refused with a notice, never held; a file it cannot take is answered, not
 * ignored; a typed verdict the channel knows is stale gets the neutral receipt; and a manual
 * /compact re-arms the soft context notice. A memory surface stands in for the platform (named
 * wecom: a mute is read per channel namespace).
 */
import { describe, expect, it, vi } from "vitest";
import { RECEIPT_EXPIRED } from "../../../src/messaging/approval/approvals.js";
import { AutoApproveGrant } from "../../../src/messaging/approval/grant.js";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { commandTable, defineCommands } from "../../../src/messaging/channel/command-kit.js";
import { ConversationHub, filesUnsupportedNotice } from "../../../src/messaging/channel/hub.js";
import { resendNotice } from "../../../src/messaging/channel/render-kit.js";
import type { ChannelSurface, Conversation } from "../../../src/messaging/channel/surface.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { buildDmSessionKey } from "../../../src/messaging/session/keys.js";
import { SessionManager } from "../../../src/messaging/session/session-manager.js";
import { MemorySessionStore } from "../../../src/messaging/session/session-store.js";
import type { PipelineProvider } from "../../../src/messaging/turn/pipeline.js";
import { RecordingRenderer } from "../../../src/messaging/turn/recording-renderer.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../../src/providers/scripted.js";
import { ScriptedProvider } from "../../../src/providers/scripted.js";
import { testChannelContext } from "../../helpers/channel-context.js";
import { ManualClock } from "../../helpers/manual-clock.js";

/** Replies land in memory; renderers record; there are no receipts and no files. */
class MemorySurface implements ChannelSurface<string> {
  readonly replies: string[] = [];
  readonly renderers: RecordingRenderer[] = [];
  conversation(id: string): Conversation {
    return { route: id, direct: true, link: { channelType: "wecom", conversationId: id } };
  }
  sessionKey(id: string, generation: number): string {
    return buildDmSessionKey("wecom", "default", id, { gen: generation });
  }
  async reply(_id: string, text: string): Promise<boolean> {
    this.replies.push(text);
    return true;
  }
  newRenderer(): RecordingRenderer {
    const r = new RecordingRenderer();
    this.renderers.push(r);
    return r;
  }
}

const text = (t: string): ScriptStep => ({ type: "text", text: t });
const done: ScriptStep = { type: "complete", stopReason: "end_turn" };

function lab(turns: (ScriptedTurn | ScriptStep[])[], provider: ScriptedProviderOptions = {}) {
  const providers: ScriptedProvider[] = [];
  const sessions = new SessionManager<PipelineProvider>({
    createProvider: () => {
      const p = new ScriptedProvider(turns, provider);
      providers.push(p);
      return p;
    },
  });
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const store = new MemorySessionStore({ logger });
  const ctx = testChannelContext(
    {
      name: "wecom",
      docs: "",
      configSchema: { parse: (x: unknown) => x } as never,
      secretEnv: [],
      missing: () => [],
      load: () => Promise.reject(new Error("not loaded")),
    },
    { sessions, audit, logger, store, queueMode: "queue", grant: new AutoApproveGrant({ audit }) },
  );
  const surface = new MemorySurface();
  const hub = new ConversationHub<string>({
    surface,
    commands: defineCommands(commandTable(["new", "stop", "compact", "help"]), { prefixes: ["/"] }),
    ctx,
    isOwner: () => true,
    helpFooter: "",
    holdsMidTurn: false,
  });
  return { hub, surface, sessions, providers, audit, store };
}

describe("a hub that never holds a message", () => {
  it("steers into a live turn even when the gateway-wide mode is queue", async () => {
    const clock = new ManualClock();
    const l = lab([[{ delayMs: 60_000 }, text("done"), done]], { timers: clock, supportsSteer: true });
    const first = await l.hub.handle({ address: "u1", userId: "u1", text: "first" });
    await vi.waitFor(() => expect(l.providers[0]?.hasActiveTurn()).toBe(true));
    await l.hub.handle({ address: "u1", userId: "u1", text: "also this" });
    expect(l.providers[0]?.steers).toEqual(["also this"]);
    expect(l.hub.router.receiptQueue(l.hub.keyOf("u1")).size).toBe(0);
    clock.advance(60_000);
    await first.turn;
    expect(l.surface.replies).toEqual([]);
  });

  it("refuses what cannot be steered with a notice, audited, and runs nothing for it later", async () => {
    const clock = new ManualClock();
    const l = lab([[{ delayMs: 60_000 }, text("done"), done], [text("never")]], {
      timers: clock,
      supportsSteer: false,
    });
    const first = await l.hub.handle({ address: "u1", userId: "u1", text: "first" });
    await vi.waitFor(() => expect(l.providers[0]?.hasActiveTurn()).toBe(true));
    await (await l.hub.handle({ address: "u1", userId: "u1", text: "second" })).turn;
    expect(l.surface.replies).toEqual([resendNotice(false)]);
    expect(l.audit.find("mid_turn", "refused")[0]?.fields).toMatchObject({ reason: "busy" });
    expect(l.hub.router.receiptQueue(l.hub.keyOf("u1")).size).toBe(0);
    clock.advance(60_000);
    await first.turn;
    // Only the first message was ever prompted: the refused one did not run after the turn.
    expect(l.providers[0]?.prompts).toEqual(["first"]);
  });

  it("says nothing to a muted conversation, and still refuses", async () => {
    const clock = new ManualClock();
    const l = lab([[{ delayMs: 60_000 }, done]], { timers: clock, supportsSteer: false });
    l.store.setMuted(l.hub.keyOf("u1"), "origin", true);
    await l.hub.handle({ address: "u1", userId: "u1", text: "first" });
    await vi.waitFor(() => expect(l.providers[0]?.hasActiveTurn()).toBe(true));
    await l.hub.handle({ address: "u1", userId: "u1", text: "second" });
    expect(l.surface.replies).toEqual([]);
    expect(l.audit.find("mid_turn", "refused")).toHaveLength(1);
  });
});

describe("a file on a channel that takes none", () => {
  it("a file alone is answered with the notice and runs no turn", async () => {
    const l = lab([[text("never"), done]]);
    await (
      await l.hub.handle({
        address: "u1",
        userId: "u1",
        text: "",
        attachments: [{ name: "photo.png", ref: "img_1" }],
      })
    ).turn;
    expect(l.surface.replies).toEqual([filesUnsupportedNotice(false)]);
    expect(l.providers).toHaveLength(0);
    expect(l.audit.find("inbound", "dropped")[0]?.fields).toMatchObject({ reason: "files_unsupported" });
  });

  it("a caption still reaches the agent, without the file, after the notice", async () => {
    const l = lab([[text("seen"), done]]);
    await (
      await l.hub.handle({
        address: "u1",
        userId: "u1",
        text: "what is in it?",
        attachments: [{ name: "photo.png", ref: "img_1" }],
      })
    ).turn;
    expect(l.surface.replies).toEqual([filesUnsupportedNotice(true)]);
    expect(l.providers[0]?.prompts).toEqual(["what is in it?"]);
  });
});

describe("a typed verdict the channel knows is stale", () => {
  it("gets the neutral receipt, approves nothing and never reaches the agent", async () => {
    const l = lab([[text("never"), done]]);
    await (await l.hub.handle({ address: "u1", userId: "u1", text: "1", staleVerdict: true })).turn;
    expect(l.surface.replies).toEqual([RECEIPT_EXPIRED]);
    expect(l.providers).toHaveLength(0);
    expect(l.audit.find("tool_permission", "refused")[0]?.fields).toMatchObject({ reason: "stale_typed" });
  });

  it("is ordinary text when it is not a verdict", async () => {
    const l = lab([[text("ok"), done]]);
    await (await l.hub.handle({ address: "u1", userId: "u1", text: "1 more thing", staleVerdict: true }))
      .turn;
    expect(l.providers[0]?.prompts).toEqual(["1 more thing"]);
  });
});

describe("a manual /compact", () => {
  it("re-arms the soft context notice even when usage stays above it", async () => {
    const usage = (pct: number): ScriptStep => ({ type: "usage", used: pct * 2_000, size: 200_000 });
    const l = lab(
      [
        [usage(82), text("one"), done],
        [usage(84), text("two"), done],
      ],
      { compaction: { outcome: { ok: true, contextUsagePct: 81 } } },
    );
    await (await l.hub.handle({ address: "u1", userId: "u1", text: "a" })).turn;
    const notices = () => l.surface.replies.filter((r) => r.includes("of the agent's context"));
    await vi.waitFor(() => expect(notices()).toHaveLength(1));
    await (await l.hub.handle({ address: "u1", userId: "u1", text: "/compact" })).turn;
    await (await l.hub.handle({ address: "u1", userId: "u1", text: "b" })).turn;
    await vi.waitFor(() => expect(notices()).toHaveLength(2));
  });

  it("one that compacted nothing (the agent offers no compaction) leaves the notice latched", async () => {
    const usage = (pct: number): ScriptStep => ({ type: "usage", used: pct * 2_000, size: 200_000 });
    const l = lab([
      [usage(82), text("one"), done],
      [usage(84), text("two"), done],
    ]);
    await (await l.hub.handle({ address: "u1", userId: "u1", text: "a" })).turn;
    const notices = () => l.surface.replies.filter((r) => r.includes("of the agent's context"));
    await vi.waitFor(() => expect(notices()).toHaveLength(1));
    await (await l.hub.handle({ address: "u1", userId: "u1", text: "/compact" })).turn;
    expect(l.surface.replies.at(-1)).toMatch(/^This agent does not offer compaction/);
    await (await l.hub.handle({ address: "u1", userId: "u1", text: "b" })).turn;
    expect(l.surface.renderers).toHaveLength(2);
    expect(notices()).toHaveLength(1);
  });
});

describe("receiveJournaled", () => {
  it("resolves once the message is taken (here: nothing to journal) and the turn runs on, tracked", async () => {
    const clock = new ManualClock();
    const l = lab([[{ delayMs: 1000 }, text("answered"), done]], { timers: clock });
    await l.hub.receiveJournaled({ address: "u1", userId: "u1", text: "hello" }, { platformId: "message:1" });
    // Resolved before the turn ended: the platform may be acknowledged while the agent works.
    await vi.waitFor(() => expect(l.providers[0]?.hasActiveTurn()).toBe(true));
    await clock.advance(1000);
    await l.hub.shutdown();
    expect(l.providers[0]?.prompts).toEqual(["hello"]);
    expect(JSON.stringify(l.surface.renderers[0]?.calls)).toContain("answered");
  });
});

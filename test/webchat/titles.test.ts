/**
 * Auto-titling, wired: after the first good exchange one separate, tool-free naming turn runs on
 * the agent; the title lands in the store (a person's /title wins), is pushed to the open page and
 * comes with the snapshot of a page opened later, and shows in /status.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { agentTitleGenerator } from "../../src/messaging/session/auto-title.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { Connection } from "../../src/webchat/client.js";
import type { WebChatSettings } from "../../src/webchat/index.js";
import { webchatChannel } from "../../src/webchat/index.js";
import type { ServerFrame } from "../../src/webchat/protocol.js";
import { assembleWebChat } from "../../src/webchat/start.js";
import { testChannelContext } from "../helpers/channel-context.js";

const say = (t: string): ScriptStep[] => [
  { type: "text", text: t },
  { type: "complete", stopReason: "end_turn" },
];

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

function chat(titleAnswer: string) {
  const audit = new MemoryAuditSink();
  const providers = new Map<string, ScriptedProvider>();
  const sessions = new SessionManager<PipelineProvider>({
    createProvider: (key) => {
      // The naming session gets its own agent session: it never shares the conversation's context.
      const p = new ScriptedProvider(
        key.startsWith("titles:") ? [say(titleAnswer)] : [say("Sure, here is a plan."), say("more")],
      );
      providers.set(key, p);
      return p;
    },
  });
  const ctx = testChannelContext<WebChatSettings>(webchatChannel, {
    sessions,
    audit,
    titles: agentTitleGenerator(sessions, { audit }),
  });
  const { transport, hub, frames } = assembleWebChat(ctx);
  const pushed: ServerFrame[] = [];
  transport.admit("owner", (_c, frame) => pushed.push(frame));
  transport.open("c1");
  stops.push(() => hub.shutdown());
  const conn: Connection = { conversationId: "c1", principal: "owner", send: () => {} };
  const send = (text: string) => frames.handleFrame(conn, { type: "message", text });
  return { ctx, hub, transport, pushed, providers, send, audit };
}

describe("web chat: auto-titles", () => {
  it("the first good exchange names the conversation once, in a fresh tool-free session", async () => {
    const c = chat("Trip planning");
    c.send("plan my trip to Lisbon");
    const key = c.hub.keyOf("c1");
    await vi.waitFor(() =>
      expect(c.ctx.store.titleOf(key)).toEqual({ title: "Trip planning", kind: "auto" }),
    );
    expect(c.pushed).toContainEqual({ type: "title", title: "Trip planning" });
    const naming = c.providers.get("titles:default");
    expect(String(naming?.prompts[0])).toMatch(/^Name this conversation[\s\S]*User: plan my trip to Lisbon/);
    // Dropped once the title is back: the next naming turn starts from nothing.
    await vi.waitFor(() => expect(naming?.closed).toBe(true));
    c.send("/status");
    await vi.waitFor(() =>
      expect(c.transport.bubbles("c1").at(-1)?.text).toContain("- Title: Trip planning"),
    );
    expect(c.audit.find("webchat.auto_title", "allowed")).toHaveLength(1);
  });

  it("a person's /title wins over the naming turn and is shown at once", async () => {
    const c = chat("Something else");
    c.send("/title My trip");
    await vi.waitFor(() => expect(c.pushed).toContainEqual({ type: "title", title: "My trip" }));
    c.send("plan my trip");
    const key = c.hub.keyOf("c1");
    await vi.waitFor(() =>
      expect(c.transport.bubbles("c1").some((b) => b.text === "Sure, here is a plan.")).toBe(true),
    );
    // The turn is over (its post-turn steps ran): the claim was the person's, so no naming turn ran.
    await vi.waitFor(() => expect(c.ctx.sessions.isBusy(key)).toBe(false));
    expect(c.providers.has("titles:default")).toBe(false);
    expect(c.ctx.store.titleOf(key)).toEqual({ title: "My trip", kind: "manual" });
  });
});

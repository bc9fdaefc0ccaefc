/**
 * The web chat's /model and /compact through the real dispatcher and transport, on the shared
 * agent-control handlers, with a ScriptedProvider as the agent. Replies are system bubbles.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { GRANT_LAPSED } from "../../src/messaging/approval/grant.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { ModelMenu } from "../../src/messaging/session/agent-controls.js";
import {
  COMPACT_BUSY,
  COMPACT_NOTHING,
  compactUnsupportedReply,
  MODEL_BUSY,
  MODEL_NOT_OFFERED,
} from "../../src/messaging/session/agent-controls.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { Connection } from "../../src/webchat/client.js";
import { webchatChannel } from "../../src/webchat/index.js";
import type { ServerFrame } from "../../src/webchat/protocol.js";
import { assembleWebChat } from "../../src/webchat/start.js";
import { testChannelContext } from "../helpers/channel-context.js";

const MODEL_HINT = "Send `/model <number or name>` to switch.";

import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";

const CONVERSATION = "c1";

const MENU: ModelMenu = {
  configId: "model",
  current: "swift",
  options: [
    { id: "swift", name: "Swift" },
    { id: "deep", name: "Deep", description: "slower, more careful" },
    { id: "tiny", name: "Tiny" },
  ],
};

const running: { shutdown(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.shutdown()));
});

const HELLO: ScriptStep[] = [
  { type: "text", text: "hello" },
  { type: "complete", stopReason: "end_turn" },
];

function chat(
  providerOptions: ScriptedProviderOptions = {},
  turns: (ScriptedTurn | ScriptStep[])[] = [HELLO],
) {
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const provider = new ScriptedProvider(turns, providerOptions);
  const startedKeys: string[] = [];
  const sessions = new SessionManager<PipelineProvider>({
    createProvider: (key) => {
      startedKeys.push(key);
      return provider;
    },
  });
  const { transport, hub, frames } = assembleWebChat(
    testChannelContext(webchatChannel, { sessions, audit, logger, section: { port: 0 } }),
  );
  transport.admit("owner", () => {});
  transport.open(CONVERSATION);
  running.push(hub);
  const errors: ServerFrame[] = [];
  const conn: Connection = { conversationId: CONVERSATION, principal: "owner", send: (f) => errors.push(f) };
  const bubbles = (role: string) => transport.bubbles(CONVERSATION).filter((b) => b.role === role);

  const send = (text: string) => frames.handleFrame(conn, { type: "message", text });

  /** Sends a message and returns the text of the system reply it produced. */
  async function say(text: string): Promise<string> {
    const before = bubbles("system").length;
    send(text);
    await vi.waitFor(() => expect(bubbles("system").length).toBeGreaterThan(before), { timeout: 5000 });
    expect(errors).toEqual([]);
    return bubbles("system").at(-1)?.text ?? "";
  }

  /** One ordinary turn, to its end: the answer is final and the session lock is released. */
  async function turn(text: string): Promise<void> {
    send(text);
    await vi.waitFor(() => expect(bubbles("assistant").at(-1)?.final).toBe(true), { timeout: 5000 });
    const key = startedKeys[0] ?? "";
    // The answer lands before post-turn bookkeeping releases the session; until then it is "busy".
    await vi.waitFor(() => expect(sessions.isBusy(key)).toBe(false), { timeout: 5000 });
  }

  return { provider, sessions, startedKeys, bubbles, send, say, turn };
}

describe("webchat: /model", () => {
  it("lists the agent's models numbered, the current one marked", async () => {
    const c = chat({ modelMenu: MENU });
    expect(await c.say("/model")).toBe(
      [
        "**Model**: Swift",
        "1. **Swift** ✓",
        "2. **Deep** — slower, more careful",
        "3. **Tiny**",
        "",
        MODEL_HINT,
      ].join("\n"),
    );
    expect(c.provider.modelChoices).toEqual([]);
  });

  it("/model 2 switches to the second model, and the next list shows it current", async () => {
    const c = chat({ modelMenu: MENU });
    expect(await c.say("/model 2")).toBe("✅ Model: Deep");
    expect(c.provider.modelChoices).toEqual(["deep"]);
    const list = await c.say("/model");
    expect(list).toContain("**Model**: Deep");
    expect(list).toContain("2. **Deep** ✓ — slower, more careful");
    expect(list).toContain("1. **Swift**\n");
  });

  it("/new keeps the chosen model: the next conversation's agent is given it before its first turn", async () => {
    const c = chat({ modelMenu: MENU });
    expect(await c.say("/model 2")).toBe("✅ Model: Deep");
    expect(await c.say("/new")).toBe("🆕 Fresh conversation started.");
    await c.turn("hi");
    expect(c.startedKeys).toHaveLength(2);
    expect(c.startedKeys[1]).not.toBe(c.startedKeys[0]);
    // The same scripted agent serves both keys: the second choice is the re-application.
    expect(c.provider.modelChoices).toEqual(["deep", "deep"]);
  });

  it("/model by name or id, case-insensitively", async () => {
    const c = chat({ modelMenu: MENU });
    expect(await c.say("/model TINY")).toBe("✅ Model: Tiny");
    expect(await c.say("/model swift")).toBe("✅ Model: Swift");
    expect(c.provider.modelChoices).toEqual(["tiny", "swift"]);
  });

  it("an unknown model is refused with the valid choices, and nothing is applied", async () => {
    const c = chat({ modelMenu: MENU });
    const reply = await c.say("/model gpt-9");
    expect(reply).toContain('No single model matches "gpt-9".');
    expect(reply).toContain("1. **Swift** ✓\n2. **Deep** — slower, more careful\n3. **Tiny**");
    expect(await c.say("/model 4")).toContain('No single model matches "4".');
    expect(c.provider.modelChoices).toEqual([]);
  });

  it("an agent without a model selector says so, for the list and for a choice", async () => {
    const c = chat();
    expect(await c.say("/model")).toBe(MODEL_NOT_OFFERED);
    expect(await c.say("/model 1")).toBe(MODEL_NOT_OFFERED);
    expect(MODEL_NOT_OFFERED).toBe("This agent does not offer a choice of model.");
    expect(c.provider.modelChoices).toEqual([]);
  });
});

describe("webchat: /compact", () => {
  it("before any turn there is nothing to compact, and no agent is started for it", async () => {
    const c = chat({ compaction: { outcome: { ok: true, contextUsagePct: 4 } } });
    expect(await c.say("/compact")).toBe(COMPACT_NOTHING);
    expect(c.startedKeys).toEqual([]);
    expect(c.provider.compactions).toBe(0);
  });

  it("after a turn it compacts and reports the new context usage", async () => {
    const c = chat({ compaction: { outcome: { ok: true, contextUsagePct: 4 } } });
    await c.turn("hi");
    expect(c.bubbles("assistant").at(-1)?.text).toBe("hello");
    expect(await c.say("/compact")).toBe("✅ Context compacted. Context usage is now 4%.");
    expect(c.provider.compactions).toBe(1);
  });

  it("a message sent during a compaction waits, is not steered into it, and runs once it ends", async () => {
    const c = chat(
      { supportsSteer: true, compaction: { delayMs: 300, outcome: { ok: true, contextUsagePct: 3 } } },
      [
        HELLO,
        [
          { type: "text", text: "after" },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
    );
    await c.turn("hi");
    c.send("/compact");
    await vi.waitFor(() => expect(c.provider.compactions).toBe(1), { timeout: 5000 });
    c.send("meanwhile");
    await vi.waitFor(() => expect(c.bubbles("assistant").at(-1)?.text).toBe("after"), { timeout: 5000 });
    expect(c.provider.steers).toEqual([]);
    expect(c.provider.prompts).toEqual(["hi", "meanwhile"]);
  });

  it("an agent without compaction points at /new", async () => {
    const c = chat();
    await c.turn("hi");
    expect(await c.say("/compact")).toBe(compactUnsupportedReply("`/new`"));
  });
});

describe("webchat: agent controls mid-turn", () => {
  it("neither switches the model nor compacts under a running turn", async () => {
    const c = chat({ modelMenu: MENU, compaction: {} }, [
      {
        steps: [permissionRequest()],
        onPermission: { deny: [{ type: "complete", stopReason: "end_turn" }] },
      },
    ]);
    c.send("run the tool"); // the turn waits on the approval: a stable mid-turn window
    await vi.waitFor(() => expect(c.bubbles("approval")).toHaveLength(1), { timeout: 5000 });
    expect(await c.say("/model 2")).toBe(MODEL_BUSY);
    expect(await c.say("/compact")).toBe(COMPACT_BUSY);
    expect(c.provider.modelChoices).toEqual([]);
    expect(c.provider.compactions).toBe(0);
  });
});

describe("webchat: /yolo", () => {
  it("the owner arms it in the direct chat; /status says until when; the lapse is told in the chat", async () => {
    const clock = new ManualClock();
    const audit = new MemoryAuditSink();
    const sessions = new SessionManager<PipelineProvider>({ createProvider: () => new ScriptedProvider([]) });
    const { transport, hub, frames } = assembleWebChat(
      testChannelContext(webchatChannel, { sessions, audit, clock, section: { port: 0 } }),
    );
    transport.admit("owner", () => {});
    transport.open(CONVERSATION);
    running.push(hub);
    const conn: Connection = { conversationId: CONVERSATION, principal: "owner", send: () => {} };
    const system = () => transport.bubbles(CONVERSATION).filter((b) => b.role === "system");
    const say = async (text: string) => {
      const before = system().length;
      frames.handleFrame(conn, { type: "message", text });
      await vi.waitFor(() => expect(system().length).toBeGreaterThan(before));
      return system().at(-1)?.text ?? "";
    };
    expect(await say("/yolo on 1m")).toMatch(/^⚠️ Auto-approve is ON for 1m\./);
    expect(audit.find("auto_approve", "granted")[0]?.fields).toMatchObject({
      source: "webchat",
      caller: "owner",
    });
    expect(await say("/status")).toMatch(
      /- Auto-approve: ON until \d\d:\d\d UTC \(1m left, armed on webchat\)/,
    );
    await clock.advance(60_000);
    await vi.waitFor(() => expect(system().at(-1)?.text).toBe(GRANT_LAPSED));
    expect(await say("/status")).toContain("- Auto-approve: off");
  });
});

/**
 * Agent controls through the real AcpProvider: the demo agent's model selector and `/compact`
 * command as a real subprocess, the demo agent's protocol side in-process, fake agents without
 * controls or with failing ones, and the pure config-option -> menu mapping.
 */
import {
  type ClientConnection,
  client,
  methods,
  ndJsonStream,
  type SessionConfigOption,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ParleyError } from "../../src/messaging/base/errors.js";
import {
  applyModelChoice,
  COMPACT_NOTHING,
  compactSession,
  loadModelMenu,
} from "../../src/messaging/session/agent-controls.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ProviderEvent } from "../../src/messaging/turn/provider-events.js";
import { SET_CONFIG_TIMEOUT_MS } from "../../src/providers/acp.js";
import { modelMenuOf } from "../../src/providers/acp-mapping.js";
import type { AcpProviderOptions } from "../../src/providers/acp-types.js";
import { runDemoAgent } from "../../src/providers/demo-agent.js";
import {
  COMPACTED_TOKENS,
  COMPACTION_SUMMARY,
  isCompactCommand,
  pickScenario,
} from "../../src/providers/demo-agent-script.js";
import type { AcpProvider } from "../../src/providers/index.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { collect, demoProvider, expectGone, fakeAgentProvider, textOf, zombieChildren } from "./helpers.js";

const providers: AcpProvider[] = [];

function demo(): AcpProvider {
  const provider = demoProvider();
  providers.push(provider);
  return provider;
}

function fake(name: string, extra: Partial<AcpProviderOptions> & { argv?: string[] } = {}): AcpProvider {
  const { provider } = fakeAgentProvider(name, extra);
  providers.push(provider);
  return provider;
}

afterEach(async () => {
  const closing = providers.splice(0);
  await Promise.all(closing.map((p) => p.close()));
  for (const p of closing) if (p.pid !== undefined) expectGone(p.pid);
  expect(zombieChildren()).toEqual([]);
});

const last = (events: ProviderEvent[]): ProviderEvent | undefined => events[events.length - 1];

/** The demo announces its commands just after session/new; wait until they have been applied. */
async function commandsArrived(p: AcpProvider): Promise<void> {
  await vi.waitFor(() => expect(p.supportsCompaction()).toBe(true), { timeout: 3_000 });
}

const DEMO_MENU = {
  configId: "model",
  current: "demo-swift",
  options: [
    { id: "demo-swift", name: "Demo Swift", description: "Quick, terse answers (the default)" },
    { id: "demo-deep", name: "Demo Deep", description: "Slower, more thorough answers" },
    { id: "demo-tiny", name: "Demo Tiny", description: "The cheapest pretend model" },
  ],
};

describe("the demo agent's model selector (real subprocess)", () => {
  it("is read from session/new once started; none is known before", async () => {
    const p = demo();
    expect(p.modelMenu()).toBeUndefined();
    await p.start();
    expect(p.modelMenu()).toEqual(DEMO_MENU);
  });

  it("setModel switches what the `model` scenario answers, and the menu follows the agent's answer", async () => {
    const p = demo();
    expect(textOf(await collect(p.prompt("which model are you?")))).toBe("Model: Demo Swift");
    const after = await p.setModel("demo-deep");
    expect(after).toEqual({ ...DEMO_MENU, current: "demo-deep" });
    expect(p.modelMenu()?.current).toBe("demo-deep");
    const events = await collect(p.prompt("model"));
    expect(textOf(events)).toBe("Model: Demo Deep");
    expect(last(events)).toEqual({ type: "complete", stopReason: "end_turn" });
  });

  it("an id outside the menu is refused without asking the agent", async () => {
    const p = demo();
    await p.start();
    await expect(p.setModel("demo-nope")).rejects.toMatchObject({ code: "REFUSED" });
    expect(p.modelMenu()?.current).toBe("demo-swift");
    expect(textOf(await collect(p.prompt("model")))).toBe("Model: Demo Swift");
  });

  it("a closed provider refuses setModel and compact", async () => {
    const p = demo();
    await p.start();
    await commandsArrived(p);
    await p.close();
    await expect(p.setModel("demo-deep")).rejects.toMatchObject({ code: "PROVIDER_EXITED" });
    await expect(p.compact()).rejects.toMatchObject({ code: "PROVIDER_EXITED" });
  });
});

describe("the demo agent's compaction (real subprocess)", () => {
  it("lowers the usage, and the session answers the next turn", async () => {
    const p = demo();
    const first = await collect(p.prompt("show me a table"));
    expect(first.some((e) => e.type === "available_commands")).toBe(true);
    const before = p.contextUsagePct;
    expect(before).toBeGreaterThan(6);
    expect(p.supportsCompaction()).toBe(true);
    const outcome = await p.compact();
    const expected = (COMPACTED_TOKENS / 200_000) * 100;
    expect(outcome).toEqual({ ok: true, contextUsagePct: expected });
    expect(p.contextUsagePct).toBe(expected);
    expect(p.hasActiveTurn()).toBe(false);
    const next = await collect(p.prompt("model"));
    expect(textOf(next)).toBe("Model: Demo Swift");
    expect(last(next)).toEqual({ type: "complete", stopReason: "end_turn" });
    // The next turn's usage grows from the compacted figure, not from the old one.
    expect(p.contextUsagePct).toBeGreaterThan(expected);
    expect(p.contextUsagePct).toBeLessThan(before as number);
  });

  it("keeps the idle command list for the next visible turn, and remembers it after that turn", async () => {
    const p = demo();
    await p.start();
    await commandsArrived(p);
    expect((await p.compact()).ok).toBe(true);
    const first = await collect(p.prompt("hello"));
    expect(first.find((e) => e.type === "available_commands")).toMatchObject({
      commands: expect.arrayContaining([expect.objectContaining({ name: "compact" })]),
    });
    const second = await collect(p.prompt("hello again"));
    expect(second.some((e) => e.type === "available_commands")).toBe(false);
    expect(p.supportsCompaction()).toBe(true);
  });

  it("is refused while a turn is running, and the running turn is untouched", async () => {
    const p = demo();
    await p.start();
    await commandsArrived(p);
    let refusal: unknown;
    const events = await collect(p.prompt("slow please"), async (e, seen) => {
      if (e.type === "text" && seen.filter((x) => x.type === "text").length === 1) {
        refusal = await p.compact().catch((error: unknown) => error);
        await p.cancel();
      }
    });
    expect(refusal).toBeInstanceOf(ParleyError);
    expect((refusal as ParleyError).code).toBe("REFUSED");
    expect((refusal as ParleyError).message).toMatch(/a turn is already running/);
    expect(last(events)).toEqual({ type: "complete", stopReason: "cancelled" });
    expect(textOf(events)).toContain("Checking the modules");
    expect(textOf(events)).not.toContain("compact");
    // After the refused attempt the session still compacts.
    expect((await p.compact()).ok).toBe(true);
  });

  it("the shared handlers drive the real agent through a SessionManager", async () => {
    const sessions = new SessionManager<AcpProvider>({ createProvider: () => demo() });
    expect(await compactSession(sessions, "k", { newCommand: "/new" })).toBe(COMPACT_NOTHING);
    const loaded = await loadModelMenu(sessions, "k");
    expect(loaded).toEqual({ menu: DEMO_MENU });
    expect(await applyModelChoice(sessions, "k", "demo-tiny")).toBe("✅ Model: Demo Tiny");
    const p = await sessions.provider("k");
    await commandsArrived(p);
    expect(textOf(await collect(p.prompt("model")))).toBe("Model: Demo Tiny");
    expect(await compactSession(sessions, "k", { newCommand: "/new" })).toBe(
      "✅ Context compacted. Context usage is now 2%.",
    );
    expect(sessions.isBusy("k")).toBe(false);
    await sessions.closeAll();
  });
});

describe("agents without controls, or with failing ones (fakes)", () => {
  it("no config options and no commands: no menu, no compaction, both refused before the agent", async () => {
    const p = fake("no-controls");
    const events = await collect(p.prompt("hi"));
    expect(textOf(events)).toBe("plain answer");
    expect(p.modelMenu()).toBeUndefined();
    expect(p.supportsCompaction()).toBe(false);
    // REFUSED, not the agent's method-not-found: nothing was sent.
    await expect(p.compact()).rejects.toMatchObject({ code: "REFUSED" });
    await expect(p.setModel("anything")).rejects.toMatchObject({ code: "REFUSED" });
    expect(textOf(await collect(p.prompt("again")))).toBe("plain answer");
  });

  it("reads the first model select (grouped choices flattened) and follows config_option_update", async () => {
    const p = fake("controls-fail");
    await p.start();
    expect(p.modelMenu()).toEqual({
      configId: "llm",
      current: "m-fast",
      options: [
        { id: "m-fast", name: "Fast one", description: "quick" },
        { id: "m-deep", name: "Deep one" },
      ],
    });
    await collect(p.prompt("switch yourself"));
    expect(p.modelMenu()?.current).toBe("m-deep");
  });

  it("a failing set_config_option is a bounded ParleyError and the provider stays usable", async () => {
    const p = fake("controls-fail");
    await p.start();
    const error = await p.setModel("m-deep").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ParleyError);
    expect((error as ParleyError).code).toBe("PROVIDER_PROTOCOL");
    expect((error as ParleyError).message).toMatch(/^agent rejected the model change: model switch failed/);
    expect((error as ParleyError).message.length).toBeLessThanOrEqual(240);
    expect(p.modelMenu()?.current).toBe("m-fast");
    const events = await collect(p.prompt("hi"));
    expect(textOf(events)).toBe("answer (set_config_option requests so far: 1)");
    expect(last(events)).toEqual({ type: "complete", stopReason: "end_turn" });
  });

  it("an unanswered set_config_option times out on the injected clock; the provider stays usable", async () => {
    const clock = new ManualClock();
    const p = fake("controls-fail", { argv: ["hang"], timers: clock });
    await p.start();
    const pending = p.setModel("m-deep").catch((e: unknown) => e);
    await vi.waitFor(() => expect(clock.pendingDelays()).toContain(SET_CONFIG_TIMEOUT_MS));
    await clock.advance(SET_CONFIG_TIMEOUT_MS - 1);
    let settled = false;
    void pending.then(() => {
      settled = true;
    });
    await clock.advance(0);
    expect(settled).toBe(false);
    await clock.advance(1);
    const error = await pending;
    expect(error).toBeInstanceOf(ParleyError);
    expect((error as ParleyError).code).toBe("PROVIDER_TIMEOUT");
    expect(textOf(await collect(p.prompt("hi")))).toBe("answer (set_config_option requests so far: 1)");
  });

  it("a /compact the agent fails resolves ok: false (a bounded error) and the session stays usable", async () => {
    const p = fake("controls-fail");
    await p.start();
    await commandsArrived(p);
    const outcome = await p.compact();
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/compaction backend down/);
    expect(outcome.contextUsagePct).toBeUndefined();
    expect(p.hasActiveTurn()).toBe(false);
    expect(textOf(await collect(p.prompt("hi")))).toMatch(/^answer/);
  });
});

describe("steering during a compaction", () => {
  it("is refused (the caller queues instead): nobody reads the compaction's turn", async () => {
    const p = demoProvider("400");
    providers.push(p);
    await p.start();
    await commandsArrived(p);
    expect(p.supportsSteer).toBe(true);
    const compaction = p.compact();
    await vi.waitFor(() => expect(p.hasActiveTurn()).toBe(true), { timeout: 3_000 });
    expect(await p.steer("fold me in")).toBe(false);
    expect((await compaction).ok).toBe(true);
  });
});

describe("an agent that dies during /compact", () => {
  it("compact() rejects with PROVIDER_EXITED, and compactSession replaces the agent", async () => {
    const spawned: AcpProvider[] = [];
    const sessions = new SessionManager<AcpProvider>({
      createProvider: () => {
        const p = fake("controls-fail", { argv: ["die"] });
        spawned.push(p);
        return p;
      },
    });
    const first = await sessions.provider("k");
    await commandsArrived(first);
    const reply = await compactSession(sessions, "k", { newCommand: "/new" });
    expect(reply).toMatch(/^⚠️ Compaction failed: /);
    expect(first.hasActiveTurn()).toBe(false);
    await expect(first.compact()).rejects.toMatchObject({ code: "PROVIDER_EXITED" });
    // The eager replacement is a fresh, working agent.
    expect(spawned).toHaveLength(2);
    const second = await sessions.provider("k");
    expect(second).toBe(spawned[1]);
    expect(textOf(await collect(second.prompt("hi")))).toMatch(/^answer/);
  });
});

/** The demo agent in-process over an in-memory stream pair, spoken to by a bare SDK client. */
async function demoInProcess(compaction: boolean): Promise<{
  conn: ClientConnection;
  sessionId: string;
  configOptions: SessionConfigOption[] | null | undefined;
  updates: SessionUpdate[];
}> {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  void runDemoAgent(ndJsonStream(toClient.writable, toAgent.readable), { speedMs: 0 });
  const updates: SessionUpdate[] = [];
  const conn = client({ name: "test" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .connect(ndJsonStream(toAgent.writable, toClient.readable));
  await conn.agent.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: {
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
      ...(compaction ? { session: { compaction: {} } } : {}),
    },
  });
  const session = await conn.agent.request(methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
  return { conn, sessionId: session.sessionId, configOptions: session.configOptions, updates };
}

const afterDispatch = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Closes only after the demo's post-session/new announcement went out (it logs a failed one). */
async function shutdown(conn: ClientConnection): Promise<void> {
  await afterDispatch();
  await afterDispatch();
  conn.close();
}

describe("the demo agent's protocol side (in-process)", () => {
  it("session/new offers a model select; set_config_option answers the full set or an ACP error", async () => {
    const { conn, sessionId, configOptions } = await demoInProcess(true);
    try {
      expect(configOptions).toHaveLength(1);
      expect(configOptions?.[0]).toMatchObject({ type: "select", id: "model", category: "model" });
      const set = (configId: string, value: string) =>
        conn.agent.request(methods.agent.session.setConfigOption, { sessionId, configId, value });
      const res = await set("model", "demo-deep");
      expect(modelMenuOf(res.configOptions)).toEqual({ ...DEMO_MENU, current: "demo-deep" });
      await expect(set("model", "gpt-9")).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(/unknown model: gpt-9/),
      });
      await expect(set("temperature", "hot")).rejects.toMatchObject({ code: -32602 });
      // A rejected value leaves the selection alone.
      expect(modelMenuOf((await set("model", "demo-deep")).configOptions)?.current).toBe("demo-deep");
    } finally {
      await shutdown(conn);
    }
  });

  it("/compact sends typed compaction updates, the lowered usage before the completion", async () => {
    const { conn, sessionId, updates } = await demoInProcess(true);
    try {
      await afterDispatch();
      updates.splice(0);
      const res = await conn.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "/compact" }],
      });
      await afterDispatch();
      expect(res.stopReason).toBe("end_turn");
      expect(updates.map((u) => u.sessionUpdate)).toEqual([
        "compaction_update",
        "compaction_summary_chunk",
        "compaction_summary_chunk",
        "usage_update",
        "compaction_update",
      ]);
      expect(updates[0]).toMatchObject({ status: "in_progress" });
      expect(updates[4]).toMatchObject({
        status: "completed",
        compactionId: (updates[0] as { compactionId: string }).compactionId,
      });
      expect(updates[3]).toMatchObject({ used: COMPACTED_TOKENS, size: 200_000 });
      const summary = updates
        .map((u) =>
          u.sessionUpdate === "compaction_summary_chunk" && u.content.type === "text" ? u.content.text : "",
        )
        .join("");
      expect(summary).toBe(COMPACTION_SUMMARY);
    } finally {
      await shutdown(conn);
    }
  });

  it("/compact for a client without compaction support: a plain sentence and the usage, no typed updates", async () => {
    const { conn, sessionId, updates } = await demoInProcess(false);
    try {
      await afterDispatch();
      updates.splice(0);
      await conn.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "/compact" }],
      });
      await afterDispatch();
      expect(updates.map((u) => u.sessionUpdate)).toEqual(["usage_update", "agent_message_chunk"]);
    } finally {
      await shutdown(conn);
    }
  });

  it("`model` is a scenario word; only a prompt that starts with the /compact command compacts", () => {
    expect(pickScenario("which model?")).toBe("model");
    expect(pickScenario("a slow model")).toBe("slow");
    expect(isCompactCommand("/compact")).toBe(true);
    expect(isCompactCommand("  /compact now")).toBe(true);
    expect(isCompactCommand("please /compact")).toBe(false);
    expect(isCompactCommand("/compaction")).toBe(false);
  });
});

describe("modelMenuOf", () => {
  const select = (extra: Partial<SessionConfigOption> & Record<string, unknown>): SessionConfigOption =>
    ({ type: "select", id: "x", name: "X", currentValue: "a", options: [], ...extra }) as SessionConfigOption;

  it("takes the first select of category model, ignoring other categories and non-selects", () => {
    const menu = modelMenuOf([
      select({ id: "mode", category: "mode", options: [{ value: "ask", name: "Ask" }] }),
      { type: "boolean", id: "b", name: "B", category: "model", currentValue: true } as SessionConfigOption,
      select({ id: "m1", category: "model", currentValue: "a", options: [{ value: "a", name: "A" }] }),
      select({ id: "m2", category: "model", options: [{ value: "z", name: "Z" }] }),
    ]);
    expect(menu).toEqual({ configId: "m1", current: "a", options: [{ id: "a", name: "A" }] });
  });

  it("flattens groups in order, skips malformed and duplicate entries, names fall back to the id", () => {
    const menu = modelMenuOf([
      select({
        id: "m",
        category: "model",
        currentValue: "b",
        options: [
          {
            group: "g1",
            name: "G1",
            options: [{ value: "a", name: "A", description: "first" }, { value: 7 }],
          },
          {
            group: "g2",
            name: "G2",
            options: [
              { value: "b", name: " " },
              { value: "a", name: "again" },
            ],
          },
        ],
      } as never),
    ]);
    expect(menu).toEqual({
      configId: "m",
      current: "b",
      options: [
        { id: "a", name: "A", description: "first" },
        { id: "b", name: "b" },
      ],
    });
  });

  it("is undefined without a model selector", () => {
    expect(modelMenuOf(undefined)).toBeUndefined();
    expect(modelMenuOf([])).toBeUndefined();
    expect(modelMenuOf([select({ category: "thought_level" })])).toBeUndefined();
  });
});

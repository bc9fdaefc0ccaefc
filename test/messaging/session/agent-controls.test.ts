/**
 * The shared agent-control handlers (compaction, model menu, model choice) against ScriptedProvider
 * through a real SessionManager: every reply is the exact text a channel posts.
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/messaging/base/logger.js";
import {
  agentStartFailedReply,
  applyModelChoice,
  COMPACT_BUSY,
  COMPACT_NOTHING,
  compactSession,
  formatPct,
  loadModelMenu,
  MODEL_BUSY,
  MODEL_CURRENT_UNKNOWN,
  MODEL_NOT_OFFERED,
  MODEL_UNKNOWN,
  type ModelMenu,
} from "../../../src/messaging/session/agent-controls.js";
import { SessionManager } from "../../../src/messaging/session/session-manager.js";
import {
  ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptStep,
} from "../../../src/providers/scripted.js";
import { ManualClock, settle } from "../../helpers/manual-clock.js";

const KEY = "telegram:42";
const NEW = "/new";

const MENU: ModelMenu = {
  configId: "model",
  current: "swift",
  options: [
    { id: "swift", name: "Swift", description: "quick" },
    { id: "deep", name: "Deep" },
  ],
};

function setup(options: ScriptedProviderOptions = {}, turns: ScriptStep[][] = []) {
  const created: ScriptedProvider[] = [];
  const sessions = new SessionManager<ScriptedProvider>({
    createProvider: () => {
      const p = new ScriptedProvider(turns, options);
      created.push(p);
      return p;
    },
  });
  return { sessions, created };
}

describe("compactSession", () => {
  it("with no session at all: nothing to compact, and no agent is spawned for it", async () => {
    const { sessions, created } = setup({ compaction: {} });
    expect(await compactSession(sessions, KEY, { newCommand: NEW })).toBe(COMPACT_NOTHING);
    expect(created).toHaveLength(0);
    expect(sessions.isBusy(KEY)).toBe(false);
  });

  it("while a turn holds the session: ask again when it ends; the agent is not touched", async () => {
    const { sessions } = setup({ compaction: { outcome: { ok: true, contextUsagePct: 3 } } });
    const provider = await sessions.provider(KEY);
    const release = sessions.tryAcquire(KEY);
    expect(release).not.toBeNull();
    expect(await compactSession(sessions, KEY, { newCommand: NEW })).toBe(COMPACT_BUSY);
    expect(provider.compactions).toBe(0);
    release?.();
    expect(await compactSession(sessions, KEY, { newCommand: NEW })).toBe(
      "✅ Context compacted. Context usage is now 3%.",
    );
    expect(provider.compactions).toBe(1);
  });

  it("a session held before its agent exists has nothing to compact yet", async () => {
    const { sessions } = setup({ compaction: {} });
    const release = sessions.tryAcquire(KEY);
    expect(await compactSession(sessions, KEY, { newCommand: NEW })).toBe(COMPACT_NOTHING);
    release?.();
  });

  it("a turn running outside the lock still refuses", async () => {
    const clock = new ManualClock();
    // One delayed step, so the turn is genuinely in flight while compaction is asked.
    const { sessions } = setup({ compaction: {}, timers: clock }, [
      [
        { delayMs: 1_000, event: { type: "text", text: "x" } },
        { type: "complete", stopReason: "end_turn" },
      ],
    ]);
    const provider = await sessions.provider(KEY);
    const turn = provider.prompt("go")[Symbol.asyncIterator]();
    const first = turn.next();
    await settle();
    expect(provider.hasActiveTurn()).toBe(true);
    expect(await compactSession(sessions, KEY, { newCommand: NEW })).toBe(COMPACT_BUSY);
    expect(provider.compactions).toBe(0);
    await clock.advance(1_000);
    await first;
    while (!(await turn.next()).done) {}
  });

  it("an agent without compaction: says so and names the fresh-session command", async () => {
    const { sessions } = setup();
    await sessions.provider(KEY);
    expect(await compactSession(sessions, KEY, { newCommand: "`!new`" })).toBe(
      "This agent does not offer compaction. To free its context, start a fresh session with `!new` (the agent forgets this conversation).",
    );
    expect(sessions.isBusy(KEY)).toBe(false);
  });

  it("success without a usage figure is the bare receipt; a tiny figure never reads 0%", async () => {
    const plain = setup({ compaction: { outcome: { ok: true } } });
    await plain.sessions.provider(KEY);
    expect(await compactSession(plain.sessions, KEY, { newCommand: NEW })).toBe("✅ Context compacted.");
    const tiny = setup({ compaction: { outcome: { ok: true, contextUsagePct: 0.4 } } });
    await tiny.sessions.provider(KEY);
    expect(await compactSession(tiny.sessions, KEY, { newCommand: NEW })).toBe(
      "✅ Context compacted. Context usage is now <1%.",
    );
  });

  it("holds the session while the agent compacts: a turn or a model switch meanwhile is refused", async () => {
    const clock = new ManualClock();
    const { sessions } = setup({
      timers: clock,
      modelMenu: MENU,
      compaction: { delayMs: 5_000, outcome: { ok: true, contextUsagePct: 12.6 } },
    });
    const provider = await sessions.provider(KEY);
    const running = compactSession(sessions, KEY, { newCommand: NEW });
    await settle();
    expect(sessions.isBusy(KEY)).toBe(true);
    expect(sessions.tryAcquire(KEY)).toBeNull();
    expect(await compactSession(sessions, KEY, { newCommand: NEW })).toBe(COMPACT_BUSY);
    expect(await applyModelChoice(sessions, KEY, "deep")).toBe(MODEL_BUSY);
    expect(provider.modelChoices).toEqual([]);
    await clock.advance(5_000);
    expect(await running).toBe("✅ Context compacted. Context usage is now 13%.");
    expect(provider.contextUsagePct).toBe(12.6);
    expect(sessions.isBusy(KEY)).toBe(false);
  });

  it("a failed compaction is one bounded line, never a success, and releases the session", async () => {
    const long = `backend\nexploded ${"x".repeat(500)}`;
    const { sessions } = setup({ compaction: { outcome: { ok: false, error: long } } });
    await sessions.provider(KEY);
    const reply = await compactSession(sessions, KEY, { newCommand: NEW });
    expect(reply.startsWith("⚠️ Compaction failed: backend exploded xxx")).toBe(true);
    expect(reply).not.toContain("\n");
    expect(reply.endsWith("…")).toBe(true);
    expect([...reply].length).toBeLessThanOrEqual(230);
    expect(sessions.isBusy(KEY)).toBe(false);
  });

  it("an agent that throws, or fails without a reason, still gets a clear failure line", async () => {
    const thrown = setup({ compaction: { throws: "agent exited" } });
    await thrown.sessions.provider(KEY);
    expect(await compactSession(thrown.sessions, KEY, { newCommand: NEW })).toBe(
      "⚠️ Compaction failed: agent exited",
    );
    expect(thrown.sessions.isBusy(KEY)).toBe(false);
    // The agent that broke is replaced at once, so the next message meets a working one.
    expect(thrown.created).toHaveLength(2);
    expect(await thrown.sessions.existingProvider(KEY)).toBe(thrown.created[1]);
    const silent = setup({ compaction: { outcome: { ok: false } } });
    await silent.sessions.provider(KEY);
    expect(await compactSession(silent.sessions, KEY, { newCommand: NEW })).toBe(
      "⚠️ Compaction failed: the agent did not finish the compaction",
    );
  });
});

describe("loadModelMenu", () => {
  it("starts the agent and returns its menu", async () => {
    const { sessions, created } = setup({ modelMenu: MENU });
    expect(await loadModelMenu(sessions, KEY)).toEqual({ menu: MENU });
    expect(created[0]?.started).toBe(true);
  });

  it("an agent without a selector (or an empty one) gets the not-offered reply", async () => {
    expect(await loadModelMenu(setup().sessions, KEY)).toEqual({ reply: MODEL_NOT_OFFERED });
    const empty = setup({ modelMenu: { configId: "m", current: undefined, options: [] } });
    expect(await loadModelMenu(empty.sessions, KEY)).toEqual({ reply: MODEL_NOT_OFFERED });
  });

  it("an agent that fails to start gets a reply, not an exception", async () => {
    const sessions = new SessionManager<ScriptedProvider>({
      createProvider: () => {
        const p = new ScriptedProvider([], { modelMenu: MENU });
        p.start = () => Promise.reject(new Error("spawn gemini ENOENT"));
        return p;
      },
    });
    const result = await loadModelMenu(sessions, KEY);
    expect(result).toEqual({ reply: "⚠️ The agent could not be started: spawn gemini ENOENT" });
    expect(result).toEqual({ reply: agentStartFailedReply(new Error("spawn gemini ENOENT")) });
  });
});

describe("applyModelChoice", () => {
  it("switches and names the model the agent now reports", async () => {
    const { sessions, created } = setup({ modelMenu: MENU });
    expect(await applyModelChoice(sessions, KEY, "deep")).toBe("✅ Model: Deep");
    expect(created[0]?.modelChoices).toEqual(["deep"]);
    expect(created[0]?.modelMenu()?.current).toBe("deep");
    expect(sessions.isBusy(KEY)).toBe(false);
  });

  it("refuses while a turn holds the session, without calling the agent", async () => {
    const { sessions } = setup({ modelMenu: MENU });
    const provider = await sessions.provider(KEY);
    const release = sessions.tryAcquire(KEY);
    expect(await applyModelChoice(sessions, KEY, "deep")).toBe(MODEL_BUSY);
    expect(provider.modelChoices).toEqual([]);
    release?.();
  });

  it("an id that is not in the current menu is refused without calling the agent", async () => {
    const { sessions } = setup({ modelMenu: MENU });
    const provider = await sessions.provider(KEY);
    expect(await applyModelChoice(sessions, KEY, "gpt-9")).toBe(MODEL_UNKNOWN);
    expect(provider.modelChoices).toEqual([]);
    expect(provider.modelMenu()?.current).toBe("swift");
  });

  it("no selector: the not-offered reply", async () => {
    const { sessions } = setup();
    expect(await applyModelChoice(sessions, KEY, "deep")).toBe(MODEL_NOT_OFFERED);
  });

  it("a setModel failure is one bounded line, and the session is released", async () => {
    const { sessions } = setup({
      modelMenu: MENU,
      setModel: () => {
        throw new Error(`agent rejected the model change:\n${"quota ".repeat(100)}`);
      },
    });
    const reply = await applyModelChoice(sessions, KEY, "deep");
    expect(reply.startsWith("⚠️ Could not switch the model: agent rejected the model change: quota")).toBe(
      true,
    );
    expect(reply).not.toContain("\n");
    expect([...reply].length).toBeLessThanOrEqual(240);
    expect(sessions.isBusy(KEY)).toBe(false);
  });

  it("the receipt follows the agent's answer, not the request", async () => {
    const kept = setup({ modelMenu: MENU, setModel: (_id, menu) => menu });
    expect(await applyModelChoice(kept.sessions, KEY, "deep")).toBe(
      "⚠️ The agent reports Swift as the current model, not the one chosen.",
    );
    const silent = setup({ modelMenu: MENU, setModel: (_id, menu) => ({ ...menu, current: undefined }) });
    expect(await applyModelChoice(silent.sessions, KEY, "deep")).toBe(MODEL_CURRENT_UNKNOWN);
    const unnamed = setup({
      modelMenu: MENU,
      setModel: (id, menu) => ({
        ...menu,
        current: id,
        options: [{ id, name: `  Deep\n${"!".repeat(200)}` }],
      }),
    });
    const reply = await applyModelChoice(unnamed.sessions, KEY, "deep");
    expect(reply.startsWith("✅ Model: Deep !!!")).toBe(true);
    expect(reply).not.toContain("\n");
    expect([...reply].length).toBeLessThanOrEqual(90);
  });
});

describe("a model choice outlives its agent process, not its conversation", () => {
  it("a replacement agent (hard stop) is handed the chosen model before it is used", async () => {
    const { sessions, created } = setup({ modelMenu: MENU });
    await applyModelChoice(sessions, KEY, "deep");
    await sessions.hardStop(KEY); // eager respawn
    const replacement = await sessions.provider(KEY);
    expect(created).toHaveLength(2);
    expect(replacement).toBe(created[1]);
    expect(replacement.modelChoices).toEqual(["deep"]);
    expect(replacement.modelMenu()?.current).toBe("deep");
  });

  it("a fresh conversation (evict) starts on the agent's default", async () => {
    const { sessions } = setup({ modelMenu: MENU });
    await applyModelChoice(sessions, KEY, "deep");
    await sessions.evict(KEY);
    const fresh = await sessions.provider(KEY);
    expect(fresh.modelChoices).toEqual([]);
    expect(fresh.modelMenu()?.current).toBe("swift");
  });

  it("/new hands the choice to the next conversation's key (evict with carryTo)", async () => {
    const { sessions, created } = setup({ modelMenu: MENU });
    await applyModelChoice(sessions, KEY, "deep");
    await sessions.evict(KEY, { carryTo: "telegram:42:g1" });
    const next = await sessions.provider("telegram:42:g1");
    expect(next).toBe(created[1]);
    expect(next.modelMenu()?.current).toBe("deep");
    // ...and the old key, were it ever used again, starts on the default.
    expect((await sessions.provider(KEY)).modelMenu()?.current).toBe("swift");
  });

  it("a choice the new agent refuses leaves it usable on its default, and says so in the log", async () => {
    let calls = 0;
    const warnings: string[] = [];
    const created: ScriptedProvider[] = [];
    const sessions = new SessionManager<ScriptedProvider>({
      logger: { ...silentLogger, warn: (msg: string) => warnings.push(msg) },
      createProvider: () => {
        const p = new ScriptedProvider([], {
          modelMenu: MENU,
          setModel: (id, menu) => {
            calls += 1;
            if (calls > 1) throw new Error("model retired");
            return { ...menu, current: id };
          },
        });
        created.push(p);
        return p;
      },
    });
    expect(await applyModelChoice(sessions, KEY, "deep")).toBe("✅ Model: Deep");
    await sessions.hardStop(KEY);
    const replacement = await sessions.provider(KEY);
    expect(replacement).toBe(created[1]);
    expect(replacement.modelMenu()?.current).toBe("swift");
    expect(warnings).toEqual(["could not restore a session setting on the new agent"]);
  });
});

describe("formatPct", () => {
  it("rounds, and keeps a non-empty context above zero", () => {
    expect(formatPct(0)).toBe("0%");
    expect(formatPct(0.2)).toBe("<1%");
    expect(formatPct(1.5)).toBe("2%");
    expect(formatPct(99.6)).toBe("100%");
  });
});

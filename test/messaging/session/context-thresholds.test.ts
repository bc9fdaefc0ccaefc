/**
 * ContextWatch against ScriptedProvider through a real SessionManager: the soft notice once per
 * growth cycle (re-armed when usage falls back below it), the automatic compaction at the hard
 * threshold with its receipt, a muted conversation (compacted, told nothing, its nudge kept), an
 * agent without compaction, and thresholds switched off.
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/messaging/base/logger.js";
import type { ContextThresholds } from "../../../src/messaging/session/context-thresholds.js";
import { ContextWatch } from "../../../src/messaging/session/context-thresholds.js";
import { SessionManager } from "../../../src/messaging/session/session-manager.js";
import { ScriptedProvider, type ScriptedProviderOptions } from "../../../src/providers/scripted.js";

const KEY = "webchat:default:direct:c1";

async function setup(options: ScriptedProviderOptions = {}, thresholds?: ContextThresholds) {
  const created: ScriptedProvider[] = [];
  const sessions = new SessionManager<ScriptedProvider>({
    createProvider: () => {
      const p = new ScriptedProvider([], options);
      created.push(p);
      return p;
    },
  });
  await sessions.provider(KEY);
  const watch = new ContextWatch({
    thresholds: thresholds ?? { softPct: 80, hardPct: 90 },
    sessions,
    logger: silentLogger,
    commands: { compact: "`/compact`", new: "`/new`" },
  });
  const said: string[] = [];
  let muted = false;
  const sink = {
    notify: async (text: string) => {
      said.push(text);
      return true;
    },
    muted: () => muted,
  };
  return {
    watch,
    said,
    provider: () => created[0] as ScriptedProvider,
    after: (pct: number | undefined) => watch.afterTurn(KEY, pct, sink),
    mute: (on: boolean) => {
      muted = on;
    },
  };
}

describe("ContextWatch", () => {
  it("tells a conversation once that its context is filling up, and again after it fell back", async () => {
    const s = await setup({ compaction: { outcome: { ok: true, contextUsagePct: 10 } } });
    await s.after(50);
    expect(s.said).toEqual([]);
    await s.after(81.4);
    expect(s.said).toEqual([
      "📈 This conversation has used 81% of the agent's context. `/compact` summarizes it (I do it myself at 90%), or `/new` starts fresh.",
    ]);
    await s.after(85);
    expect(s.said).toHaveLength(1);
    await s.after(20); // compacted by hand: a new growth cycle
    await s.after(82);
    expect(s.said).toHaveLength(2);
  });

  it("compacts past the hard threshold, with the terse receipt", async () => {
    const s = await setup({ compaction: { outcome: { ok: true, contextUsagePct: 10 } } });
    await s.after(92.6);
    expect(s.provider().compactions).toBe(1);
    expect(s.said).toEqual(["Context reached 93%: ✅ Context compacted. Context usage is now 10%."]);
  });

  it("a failed compaction says so once; the next turns get the soft notice instead of the same failure", async () => {
    const s = await setup({ compaction: { outcome: { ok: false, error: "the model refused" } } });
    await s.after(95);
    await s.after(96);
    await s.after(97);
    expect(s.provider().compactions).toBe(1);
    expect(s.said).toEqual([
      "Context reached 95%: ⚠️ Compaction failed: the model refused",
      "📈 This conversation has used 96% of the agent's context. `/compact` summarizes it (I do it myself at 90%), or `/new` starts fresh.",
    ]);
  });

  it("muted: the compaction still runs, nothing is said, and the one nudge is kept for later", async () => {
    const s = await setup({ compaction: { outcome: { ok: true, contextUsagePct: 10 } } });
    s.mute(true);
    await s.after(83);
    await s.after(91);
    expect(s.provider().compactions).toBe(1);
    expect(s.said).toEqual([]);
    s.mute(false);
    await s.after(84);
    expect(s.said).toHaveLength(1);
  });

  it("an agent without compaction is told about /new instead, once, even past the hard threshold", async () => {
    const s = await setup({});
    await s.after(95);
    await s.after(97);
    expect(s.said).toEqual([
      "📈 This conversation has used 95% of the agent's context. This agent cannot compact it: `/new` starts a fresh conversation (the agent forgets this one).",
    ]);
  });

  it("no reported usage, or thresholds off: nothing happens", async () => {
    const s = await setup({ compaction: {} }, { softPct: 0, hardPct: 0 });
    await s.after(99);
    await s.after(undefined);
    expect(s.said).toEqual([]);
    expect(s.provider().compactions).toBe(0);
  });
});

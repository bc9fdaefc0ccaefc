import { describe, expect, it } from "vitest";
import { MidTurnRouter, normalizeQueueMode } from "../../../src/messaging/queue/mid-turn-router.js";
import type { ReceiptSurface } from "../../../src/messaging/queue/receipt.js";
import { formatReceipt } from "../../../src/messaging/queue/receipt.js";
import { STOP_NOTHING_RUNNING, stopRunningTurn } from "../../../src/messaging/queue/stop.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { SessionManager } from "../../../src/messaging/session/session-manager.js";
import type { PipelineProvider } from "../../../src/messaging/turn/pipeline.js";
import { runTurnPipeline } from "../../../src/messaging/turn/pipeline.js";
import { RecordingRenderer } from "../../../src/messaging/turn/recording-renderer.js";
import { ScriptedProvider } from "../../../src/providers/scripted.js";

/** A real receipt surface in memory: posts and edits, and it has no delete at all. */
class MemorySurface implements ReceiptSurface {
  readonly bubbles = new Map<string, string[]>();
  private n = 0;
  async post(text: string): Promise<string> {
    const id = `rcpt-${++this.n}`;
    this.bubbles.set(id, [text]);
    await Promise.resolve();
    return id;
  }
  async edit(id: string, text: string): Promise<void> {
    const history = this.bubbles.get(id);
    if (!history) throw new Error(`edit of unknown receipt ${id}`);
    history.push(text);
    await Promise.resolve();
  }
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("queue receipts", () => {
  it("formats five items verbatim then collapses the rest", () => {
    const items = Array.from({ length: 8 }, (_, i) => ({ text: `m${i}` }));
    expect(formatReceipt("queued", items.slice(0, 2))).toBe('⏳ Queued (2): "m0" · "m1"');
    expect(formatReceipt("answering", items)).toBe(
      '▶️ Now answering (8): "m0" · "m1" · "m2" · "m3" · "m4" · …and 3 more',
    );
    expect(formatReceipt("cancelled", items.slice(0, 1))).toBe('🛑 Cancelled (1): "m0"');
    expect(formatReceipt("answering", items.slice(0, 1), 4)).toBe('▶️ Now answering (1): "m0" (+4 deferred)');
  });

  it("names what a message with files holds; a files-only message is never an empty quote", () => {
    expect(
      formatReceipt("queued", [
        { text: "", files: ["chart.png"] },
        { text: "see these", files: ["a.txt", "b.txt"] },
        { text: "", files: ["x", "y", "z"] },
      ]),
    ).toBe('⏳ Queued (3): 📎 chart.png · "see these" 📎 2 files · 📎 3 files');
  });

  it("queue mode normalizes anything else to steer", () => {
    expect(normalizeQueueMode("queue")).toBe("queue");
    for (const v of ["steer", "QUEUE", "", undefined, 3]) expect(normalizeQueueMode(v)).toBe("steer");
  });
});

describe("MidTurnRouter", () => {
  it("100 messages racing turn ends across 10 conversations: none lost, none twice, FIFO, one turn per burst", async () => {
    const sessions = new SessionManager({ createProvider: () => new ScriptedProvider([]) });
    const surfaces = new Map<string, MemorySurface>();
    const turns = new Map<string, string[][]>();
    const drained = new Map<string, string[][]>();
    const router = new MidTurnRouter({
      sessions,
      queueMode: "queue",
      surfaceFor: (key) => {
        const s = new MemorySurface();
        surfaces.set(key, s);
        return s;
      },
      runTurn: async (key, _text, release, { items, interpretCommands }) => {
        const list = turns.get(key) ?? [];
        list.push(items.map((i) => i.text));
        turns.set(key, list);
        // A drained burst replays with interpretCommands=false; a fresh message keeps it.
        if (!interpretCommands) drained.set(key, [...(drained.get(key) ?? []), items.map((i) => i.text)]);
        await tick(Math.random() * 4);
        release();
      },
    });
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) {
      const key = `web:c${i % 10}`;
      sends.push(router.submit(key, { text: `${key}#${i}` }, { interpretCommands: true }));
      if (i % 7 === 0) await tick(1);
    }
    await Promise.all(sends);
    for (let c = 0; c < 10; c++) {
      const key = `web:c${c}`;
      while (sessions.isBusy(key)) await tick(2);
      const seen = (turns.get(key) ?? []).flat();
      const expected = Array.from({ length: 10 }, (_, j) => `${key}#${c + j * 10}`);
      expect(seen).toEqual(expected); // none lost, none twice, FIFO
      const bursts = drained.get(key) ?? [];
      const surface = surfaces.get(key);
      // Every held burst got exactly one receipt, flipped (edited) to "Now answering" exactly once.
      const receipts = surface ? [...surface.bubbles.values()] : [];
      expect(receipts.length).toBe(bursts.length);
      for (const [i, history] of receipts.entries()) {
        expect(history[0]?.startsWith("⏳ Queued")).toBe(true);
        expect(history.at(-1)).toBe(
          formatReceipt(
            "answering",
            (bursts[i] ?? []).map((text) => ({ text })),
          ),
        );
        expect(history.filter((h) => h.startsWith("▶️")).length).toBe(1);
      }
    }
    // The race really happened: messages were held and collapsed, not only run one by one.
    const allBursts = [...drained.values()].flat();
    expect(allBursts.length).toBeGreaterThan(0);
    expect(allBursts.some((b) => b.length > 1)).toBe(true);
  });

  it("a burst over the collapse cap is split FIFO with '+N deferred'", async () => {
    const sessions = new SessionManager({ createProvider: () => new ScriptedProvider([]) });
    const surface = new MemorySurface();
    const turns: string[][] = [];
    let gate!: () => void;
    const router = new MidTurnRouter({
      sessions,
      queueMode: "queue",
      surfaceFor: () => surface,
      runTurn: async (_k, _t, release, { items }) => {
        turns.push(items.map((i) => i.text));
        if (turns.length === 1) await new Promise<void>((r) => (gate = r));
        release();
      },
    });
    const first = router.submit("k", { text: "first" }, { interpretCommands: true });
    await tick(1);
    for (let i = 0; i < 53; i++) await router.submit("k", { text: `q${i}` }, { interpretCommands: true });
    gate();
    await first;
    while (sessions.isBusy("k")) await tick(1);
    expect(turns.map((t) => t.length)).toEqual([1, 50, 3]);
    expect(turns.flat().slice(1)).toEqual(Array.from({ length: 53 }, (_, i) => `q${i}`));
    const histories = [...surface.bubbles.values()];
    expect(histories[0]?.at(-1)).toMatch(/^▶️ Now answering \(50\): .*\(\+3 deferred\)$/);
  });

  it("a drain whose receipt cannot be edited still lets go of the session", async () => {
    const sessions = new SessionManager({ createProvider: () => new ScriptedProvider([]) });
    const surface = new MemorySurface();
    surface.edit = async () => {
      throw new Error("Network request for 'editMessageText' failed!");
    };
    let gate!: () => void;
    let turns = 0;
    const router = new MidTurnRouter({
      sessions,
      queueMode: "queue",
      surfaceFor: () => surface,
      runTurn: async (_k, _t, release) => {
        turns += 1;
        if (turns === 1) await new Promise<void>((r) => (gate = r));
        release();
      },
    });
    const first = router.submit("k", { text: "one" }, { interpretCommands: true });
    await tick(5);
    expect(await router.submit("k", { text: "two" }, { interpretCommands: true })).toBe("queued");
    gate();
    await expect(first).rejects.toThrow("editMessageText");
    // The session is free again: the next message runs instead of waiting forever.
    expect(sessions.isBusy("k")).toBe(false);
    expect(await router.submit("k", { text: "three" }, { interpretCommands: true })).toBe("ran");
  });

  it("steers into a live turn when the provider supports it, else queues", async () => {
    const provider = new ScriptedProvider([[{ delayMs: 30 }, { type: "complete", stopReason: "end_turn" }]], {
      supportsSteer: true,
    });
    const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
    const renderer = new RecordingRenderer();
    const router = new MidTurnRouter({
      sessions,
      queueMode: "steer",
      surfaceFor: () => new MemorySurface(),
      runTurn: async (key, text, release) => {
        await runTurnPipeline(
          { sessions, audit: new MemoryAuditSink() },
          { sessionKey: key, channelType: "web", text, renderer, release },
        );
      },
    });
    const running = router.submit("web:1", { text: "slow please" }, { interpretCommands: true });
    await tick(5);
    expect(await router.submit("web:1", { text: "also this" }, { interpretCommands: true })).toBe("steered");
    expect(
      await router.submit("web:1", { text: "a file" }, { interpretCommands: true, hasAttachments: true }),
    ).toBe("queued");
    await running;
    expect(provider.steers).toEqual(["also this"]);
    expect(renderer.calls.some((c) => c.call === "onSteerConsumed")).toBe(true);
  });
});

describe("/stop", () => {
  it("cancels cooperatively, clears the queue and finalizes the receipt", async () => {
    const provider = new ScriptedProvider([[{ delayMs: 5000 }, { type: "text", text: "never" }]]);
    const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
    const surface = new MemorySurface();
    const renderer = new RecordingRenderer();
    const router = new MidTurnRouter({
      sessions,
      queueMode: "queue",
      surfaceFor: () => surface,
      runTurn: async (key, text, release) => {
        await runTurnPipeline(
          { sessions, audit: new MemoryAuditSink() },
          { sessionKey: key, channelType: "web", text, renderer, release },
        );
      },
    });
    const running = router.submit("web:1", { text: "go" }, { interpretCommands: true });
    await tick(5);
    await router.submit("web:1", { text: "held" }, { interpretCommands: true });
    const reply = await stopRunningTurn(sessions, "web:1", { router });
    expect(reply).toBe("🛑 Stopping the current turn. Dropped 1 queued message.");
    await running;
    expect(renderer.calls.at(-2)).toEqual({ call: "onDone", stopReason: "cancelled" });
    expect([...surface.bubbles.values()][0]?.at(-1)).toBe('🛑 Cancelled (1): "held"');
    expect(await stopRunningTurn(sessions, "web:1", { router })).toBe(STOP_NOTHING_RUNNING);
  });

  it("hard-stops an agent that ignores cancel after the budget, and the next message starts cleanly", async () => {
    const made: ScriptedProvider[] = [];
    const sessions = new SessionManager<PipelineProvider>({
      softStopBudgetMs: 500,
      createProvider: () => {
        const p =
          made.length === 0
            ? new ScriptedProvider([[{ delayMs: 60_000 }]], { ignoreCancel: true })
            : new ScriptedProvider([
                [
                  { type: "text", text: "fresh" },
                  { type: "complete", stopReason: "end_turn" },
                ],
              ]);
        made.push(p);
        return p;
      },
    });
    const release = sessions.tryAcquire("k");
    if (!release) throw new Error("lock");
    const turn = runTurnPipeline(
      { sessions, audit: new MemoryAuditSink() },
      { sessionKey: "k", channelType: "web", text: "hang", renderer: new RecordingRenderer(), release },
    );
    await tick(5);
    expect(await sessions.stopTurn("k")).toBe("hard_stopped");
    expect(made[0]?.closed).toBe(true);
    await turn;
    const again = sessions.tryAcquire("k");
    if (!again) throw new Error("lock after stop");
    const r2 = new RecordingRenderer();
    const result = await runTurnPipeline(
      { sessions, audit: new MemoryAuditSink() },
      { sessionKey: "k", channelType: "web", text: "hi", renderer: r2, release: again },
    );
    expect(result.text).toBe("fresh");
    expect(made).toHaveLength(2);
  });
});

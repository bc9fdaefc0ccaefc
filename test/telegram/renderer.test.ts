/**
 * TelegramRenderer through the shared pipeline (runTurnPipeline + ScriptedProvider) into grammY's real
 * client and the fake Bot API: streaming by edits, the 4096 UTF-16 wire bound with balanced fences
 * and nothing lost, options keyboards, steer rotation with the lazy chip, stall marks, redaction.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import { runTurnPipeline } from "../../src/messaging/turn/pipeline.js";
import type { ProviderEvent } from "../../src/messaging/turn/provider-events.js";
import type { ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { createTelegramBot, telegramOps } from "../../src/telegram/client.js";
import type { TelegramRendererOptions } from "../../src/telegram/renderer.js";
import { TelegramRenderer } from "../../src/telegram/renderer.js";
import { TelegramTransport } from "../../src/telegram/transport.js";
import { parseTelegramHtml } from "../fakes/telegram/html.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { testDrops } from "../helpers/drops.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock, opsFor, pump, until } from "./helpers.js";

const CHAT = 42;
let fake: FakeTelegram;
let transport: TelegramTransport;

beforeEach(async () => {
  fake = await FakeTelegram.start({ lifetimeMs: 30_000 });
  transport = new TelegramTransport({
    drops: testDrops(new MemoryAuditSink(), "telegram"),
    audit: new MemoryAuditSink(),
    ops: opsFor(fake),
    allowedUserIds: new Set([String(CHAT)]),
  });
});

afterEach(async () => {
  await fake.stop();
});

const text = (t: string): ProviderEvent => ({ type: "text", text: t });
const done: ProviderEvent = { type: "complete", stopReason: "end_turn" };

async function turn(steps: ScriptStep[], opts: Partial<TelegramRendererOptions> = {}) {
  const provider = new ScriptedProvider([steps], { supportsSteer: true });
  const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
  const renderer = new TelegramRenderer(transport, { chatId: String(CHAT), throttleMs: 0, ...opts });
  const release = sessions.tryAcquire("k");
  if (!release) throw new Error("lock");
  const result = await runTurnPipeline(
    { sessions, audit: new MemoryAuditSink() },
    {
      sessionKey: "k",
      channelType: "telegram",
      text: "go",
      renderer,
      release,
    },
  );
  return { result, renderer, provider };
}

/** Every body that reached Telegram in a send or an edit, in call order. */
function bodies(): string[] {
  return fake.calls
    .filter((c) => c.ok && (c.method === "sendMessage" || c.method === "editMessageText"))
    .map((c) => String(c.params.text));
}

const fenceCount = (s: string) => (s.match(/<pre>/g) ?? []).length - (s.match(/<\/pre>/g) ?? []).length;

describe("streaming", () => {
  it("streams one message by edits and finalizes it in place (no preview + duplicate)", async () => {
    const { result } = await turn([
      text("Hello"),
      { delayMs: 5 },
      text(" there, "),
      { delayMs: 5 },
      text("**friend**."),
      done,
    ]);
    expect(result.ok).toBe(true);
    const sends = fake.callsOf("sendMessage");
    expect(sends).toHaveLength(1);
    expect(fake.callsOf("editMessageText").length).toBeGreaterThanOrEqual(1);
    const [final] = fake.sentMessages(CHAT);
    expect(final?.text).toMatch(/^Hello there, <b>friend<\/b>\.\n\n<i>Finished in \d+s<\/i>$/);
    // The typing indicator ran while the agent worked.
    expect(fake.callsOf("sendChatAction").length).toBeGreaterThanOrEqual(1);
  });

  it("a long answer arrives as several messages, each within 4096 UTF-16 units, fences balanced, nothing lost", async () => {
    const para = "Lorem ipsum dolor sit amet, <consectetur> & adipiscing elit. 😀 ".repeat(6);
    const parts: string[] = [];
    for (let i = 0; i < 40; i += 1)
      parts.push(
        i % 7 === 3
          ? `\`\`\`ts\nconst x${i} = "${"y".repeat(300)}" < 1;\n${"// pad\n".repeat(30)}\`\`\`\n\n`
          : `${para}\n\n`,
      );
    const { result } = await turn([...parts.map(text), done]);
    expect(result.ok).toBe(true);
    const sent = fake.sentMessages(CHAT);
    expect(sent.length).toBeGreaterThan(3);
    for (const body of bodies()) {
      expect(body.length).toBeLessThanOrEqual(4096);
      expect(() => parseTelegramHtml(body)).not.toThrow();
      expect(fenceCount(body)).toBe(0);
    }
    // Nothing lost: every non-space character arrives, in order, across the final messages.
    const delivered = sent
      .map((m) => m.visible.replace(/Finished in \d+s/, ""))
      .join("")
      .replace(/\s/g, "");
    const expected = parts
      .join("")
      .replace(/```(ts)?/g, "")
      .replace(/\s/g, "");
    expect(delivered).toBe(expected);
  });

  it("honours a 429 on an edit and still delivers the whole answer", async () => {
    fake.inject("editMessageText", {
      code: 429,
      description: "Too Many Requests: retry after 1",
      retryAfter: 1,
    });
    const { result } = await turn([text("first part"), { delayMs: 20 }, text(" and the rest"), done]);
    expect(result.ok).toBe(true);
    const edits = fake.callsOf("editMessageText");
    expect(edits[0]?.ok).toBe(false);
    expect(fake.sentMessages(CHAT)[0]?.visible).toMatch(/^first part and the rest/);
  }, 10_000);
});

describe("options, steer, approvals, stall", () => {
  it("turns a trailing [OPTIONS:] into an inline keyboard and never shows the protocol", async () => {
    await turn([text("Pick one:\n[OPTIONS: Yes | No | Later]"), done]);
    const [m] = fake.sentMessages(CHAT);
    expect(m?.visible).not.toContain("[OPTIONS");
    expect(m?.replyMarkup).toEqual({
      inline_keyboard: [
        [
          { text: "Yes", callback_data: "o:0" },
          { text: "No", callback_data: "o:1" },
        ],
        [{ text: "Later", callback_data: "o:2" }],
      ],
    });
    for (const body of bodies()) expect(body).not.toContain("[OPTIONS");
  });

  it("seals the pre-steer answer with its options and opens the continuation with a chip", async () => {
    await turn([
      text("The directory has 3 files.\n[OPTIONS: More | Done]"),
      { type: "steer_consumed", id: "s1", summary: "also check the weather" },
      text("It is sunny."),
      done,
    ]);
    const [pre, post] = fake.sentMessages(CHAT);
    expect(pre?.visible).toBe("The directory has 3 files.");
    expect(pre?.replyMarkup).toBeDefined();
    expect(post?.text).toMatch(/^<blockquote>↪️ also check the weather<\/blockquote>\n\nIt is sunny\./);
  });

  it("posts no chip-only message for a steer folded at the very end", async () => {
    await turn([text("All done."), { type: "steer_consumed", id: "s1", summary: "thanks" }, done]);
    const sent = fake.sentMessages(CHAT);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.visible).not.toContain("↪️");
  });

  it("marks a quiet turn 🥱 then 😨 on the live footer, clears it on progress, never seals it", async () => {
    const clock = new ManualClock();
    const provider = new ScriptedProvider(
      [
        [
          text("working"),
          { type: "tool_call", toolCallId: "t", title: "build", kind: "execute" },
          { delayMs: 60_000 },
          text(" ok"),
          done,
        ],
      ],
      {
        timers: clock,
      },
    );
    const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
    const renderer = new TelegramRenderer(transport, {
      chatId: String(CHAT),
      throttleMs: 0,
      timers: clock,
      now: () => clock.now(),
    });
    const release = sessions.tryAcquire("k");
    if (!release) throw new Error("lock");
    const running = runTurnPipeline(
      { sessions, audit: new MemoryAuditSink(), clock },
      { sessionKey: "k", channelType: "telegram", text: "go", renderer, release },
    );
    const shown = () => fake.sentMessages(CHAT)[0]?.visible ?? "";
    await pump(clock, () => shown().includes("🔧 build…"), "the tool footer");
    expect(shown()).not.toMatch(/🥱|😨/);
    await clock.advance(15_001);
    await pump(clock, () => shown().includes("🥱"), "the soft mark");
    await clock.advance(30_000);
    await pump(clock, () => shown().includes("😨") && !shown().includes("🥱"), "the hard mark");
    await clock.advance(15_000);
    await pump(
      clock,
      () => fake.callsOf("editMessageText").some((c) => String(c.params.text).includes("Finished")),
      "the seal",
    );
    await running;
    const final = fake.sentMessages(CHAT)[0]?.visible ?? "";
    // The tool call separates the two texts into paragraphs.
    expect(final).toMatch(/^working\n\nok/);
    expect(final).not.toMatch(/🥱|😨|🔧/);
  });

  it("renders an approval prompt with nonce-bound buttons and writes the outcome onto it", async () => {
    const provider = new ScriptedProvider([
      {
        steps: [permissionRequest()],
        onPermission: { approve: [text("removed."), done] },
      },
    ]);
    const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
    const renderer = new TelegramRenderer(transport, { chatId: String(CHAT), throttleMs: 0 });
    const release = sessions.tryAcquire("k");
    if (!release) throw new Error("lock");
    let nonce = "";
    let settle: (v: "approve") => void = () => {};
    await runTurnPipeline(
      { sessions, audit: new MemoryAuditSink() },
      {
        sessionKey: "k",
        channelType: "telegram",
        text: "go",
        renderer,
        release,
        policy: {
          decider: {
            open: (_req, _signal) => {
              nonce = "N".repeat(22);
              const verdict = new Promise<"approve">((resolve) => {
                settle = resolve;
              });
              void until(
                () => fake.sentMessages(CHAT).some((m) => m.replyMarkup !== undefined),
                "the prompt",
              ).then(async () => {
                await renderer.markApproval("r1", "✅ Approved");
                settle("approve");
              });
              return { nonce, verdict };
            },
          },
        },
      },
    );
    const prompt = fake.sentMessages(CHAT)[0];
    expect(prompt?.visible).toMatch(/^🔐 Permission needed: rm -rf build\n\n✅ Approved$/);
    expect(prompt?.replyMarkup).toEqual({ inline_keyboard: [] });
    const keyboard = fake.callsOf("sendMessage")[0]?.params.reply_markup as {
      inline_keyboard: { callback_data: string }[][];
    };
    expect(keyboard.inline_keyboard[0]?.map((b) => b.callback_data)).toEqual([
      `a:r1:${nonce}:1`,
      `a:r1:${nonce}:0`,
    ]);
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
  });
});

describe("pace", () => {
  it("no edit burst exceeds the configured pace, and the answer still completes", async () => {
    const clock = new ManualClock();
    const paced = await FakeTelegram.start({ now: () => clock.now(), lifetimeMs: 30_000 });
    try {
      // Virtual time only moves while no request is on the wire, so the fake's stamp of a call is
      // the moment the pacer released it.
      let onWire = 0;
      const counting = (async (...args: Parameters<typeof fetch>) => {
        onWire += 1;
        try {
          return await fetch(...args);
        } finally {
          onWire -= 1;
        }
      }) as typeof fetch;
      const bot = createTelegramBot({
        token: paced.token,
        apiRoot: paced.apiRoot,
        clock,
        pace: { privateIntervalMs: 1000, groupIntervalMs: 3000 },
        fetch: counting,
      });
      const t = new TelegramTransport({
        drops: testDrops(new MemoryAuditSink(), "telegram"),
        audit: new MemoryAuditSink(),
        ops: telegramOps(bot),
        allowedUserIds: new Set([String(CHAT)]),
      });
      const steps: ScriptStep[] = [];
      for (let i = 0; i < 30; i += 1) steps.push(text(`chunk ${i} `), { delayMs: 50 });
      const provider = new ScriptedProvider([[...steps, done]], { timers: clock });
      const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
      // No renderer throttle at all: only the client's pace stands between the stream and Telegram.
      const renderer = new TelegramRenderer(t, {
        chatId: String(CHAT),
        throttleMs: 0,
        timers: clock,
        now: () => clock.now(),
      });
      const release = sessions.tryAcquire("k");
      if (!release) throw new Error("lock");
      let finished = false;
      const running = runTurnPipeline(
        { sessions, audit: new MemoryAuditSink(), clock },
        { sessionKey: "k", channelType: "telegram", text: "go", renderer, release },
      ).then(() => {
        finished = true;
      });
      const deadline = Date.now() + 10_000;
      while (!finished) {
        if (Date.now() > deadline) throw new Error("the paced turn did not finish");
        if (onWire === 0) await clock.advance(50);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await running;
      const times = paced.calls
        .filter((c) => c.method === "sendMessage" || c.method === "editMessageText")
        .map((c) => c.at);
      expect(times.length).toBeGreaterThan(2);
      for (let i = 1; i < times.length; i += 1)
        expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1000);
      expect(paced.sentMessages(CHAT)[0]?.visible).toMatch(/^chunk 0 chunk 1 .*chunk 29/);
    } finally {
      await paced.stop();
    }
  });
});

describe("redaction at both sinks", () => {
  it("a credential split across chunks and inside emphasis never reaches a send or edit body", async () => {
    await turn([
      text("Your key is AKIA**IOSF"),
      { delayMs: 5 },
      text("ODNN7EXAMPLE** and also AKIAIOSF"),
      { delayMs: 5 },
      text("ODNN7EXAMPLE plus AKIA_IOSFODNN7"),
      { delayMs: 5 },
      text("EXAMPLE_ done"),
      done,
    ]);
    expect(bodies().length).toBeGreaterThan(1);
    for (const body of bodies()) {
      expect(body).not.toContain("AKIAIOSFODNN7EXAMPLE");
      expect(parseTelegramHtml(body)).not.toContain("AKIAIOSFODNN7EXAMPLE");
    }
  });
});

describe("close", () => {
  it("a turn that produced nothing says so instead of leaving the user guessing", async () => {
    await turn([done]);
    // The notice and the turn's status line, in the one message the turn leaves.
    expect(fake.sentMessages(CHAT).map((m) => m.visible)).toEqual(["(no answer)\n\nFinished in 0s"]);
  });
});

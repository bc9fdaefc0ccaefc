/**
 * Restarts against the fake Bot API, with the real store: an update is journaled before the cursor
 * moves past it, so a crash costs no message and answers none twice. (Killing a real process at
 * random points is test/chaos; here each window is reproduced exactly.)
 */
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ScriptStep } from "../../src/providers/scripted.js";
import { storePath } from "../../src/store/index.js";
import { TELEGRAM_CURSOR } from "../../src/telegram/poller.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { ChannelUnderTest } from "./channel-harness.js";
import { done, OWNER, startChannel, text } from "./channel-harness.js";
import { until } from "./helpers.js";

let fake: FakeTelegram;
const started: ChannelUnderTest[] = [];

beforeEach(async () => {
  fake = await FakeTelegram.start({ lifetimeMs: 30_000 });
});

afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
  await fake.stop();
});

const waiting: ScriptStep = permissionRequest({ title: "slow tool", kind: "execute" });

const FORUM = { id: -100777, type: "supergroup" as const, is_forum: true };

/** The process "dies": it polls no more and its open turns are abandoned, never settled. */
async function crash(c: ChannelUnderTest): Promise<void> {
  await c.running.poller.stopIntake();
}

/** A gateway killed after journaling an update but before its cursor write: the cursor lags. */
function rewindCursor(home: string, value: number): void {
  const db = new Database(storePath(home));
  try {
    db.prepare("update cursor set value = ? where name = ?").run(value, TELEGRAM_CURSOR);
  } finally {
    db.close();
  }
}

describe("restart", () => {
  it("an update Telegram delivers again after a crash is not answered twice", async () => {
    const a = await startChannel(fake, { turns: () => [[text("answer to first"), done]] });
    started.push(a);
    await fake.waitFor(() => fake.callsOf("getUpdates").length === 1, 5000, "the first long poll");
    const first = fake.pushMessage({ id: OWNER }, "first").updateId;
    // Telegram never hears the acknowledgement: the next poll does not reach it.
    fake.inject("getUpdates", { code: 502, description: "Bad Gateway" }, 1_000_000);
    await fake.waitFor(
      () => fake.sentMessages(OWNER).some((m) => m.visible.startsWith("answer to first")),
      5000,
      "the answer",
    );
    await until(async () => (await a.parley.cursors.get(TELEGRAM_CURSOR)) === first + 1, "the cursor");
    await until(async () => (await a.parley.intake.countUnfinished()) === 0, "the message done");
    await crash(a);
    rewindCursor(a.home, first);
    expect(fake.pendingUpdateIds()).toEqual([first]);

    fake.clearInjections();
    const b = await startChannel(fake, { home: a.home, turns: () => [[text("answered AGAIN"), done]] });
    started.push(b);
    // Redelivered, dropped by the journal, and acknowledged this time.
    await fake.waitFor(() => fake.pendingUpdateIds().length === 0, 5000, "the redelivery confirmed");
    expect(b.audit.find("intake", "dropped").map((r) => r.fields.reason)).toEqual(["redelivered"]);
    expect(b.dropLedger.count("telegram", "redelivered")).toBe(1);
    expect(b.providers.size).toBe(0);
    expect(fake.sentMessages(OWNER).filter((m) => m.visible.includes("answer"))).toHaveLength(1);
  });

  it("a turn cut short by a crash is answered after the restart, on the message it had started", async () => {
    const forum = { allowForum: true, allowedForumChatIds: [String(FORUM.id)] };
    const a = await startChannel(fake, {
      telegram: forum,
      turns: () => [{ steps: [text("working on it…"), waiting] }],
    });
    started.push(a);
    fake.pushMessage({ id: OWNER }, "second", { chat: FORUM, threadId: 9 });
    await fake.waitFor(
      () => fake.sentMessages(FORUM.id).some((m) => m.visible.includes("slow tool")),
      5000,
      "the turn waiting on a prompt",
    );
    const before = fake.sentMessages(FORUM.id).length;
    expect(await a.parley.intake.countUnfinished()).toBe(1);
    await crash(a);

    const b = await startChannel(fake, {
      home: a.home,
      telegram: forum,
      turns: () => [[text("answer to second"), done]],
    });
    started.push(b);
    await fake.waitFor(
      () => fake.sentMessages(FORUM.id).some((m) => m.visible.startsWith("answer to second")),
      5000,
      "the resumed answer",
    );
    await until(async () => (await b.parley.intake.countUnfinished()) === 0, "the message done");
    expect([...b.providers.keys()]).toEqual(["telegram:default:forum:-100777:9"]);
    // The answer replaced what the first run had posted as its first part: no new message.
    const sent = fake.sentMessages(FORUM.id);
    expect(sent).toHaveLength(before);
    expect(sent.filter((m) => m.visible.includes("working on it"))).toHaveLength(0);
    expect(sent.filter((m) => m.visible.startsWith("answer to second"))).toHaveLength(1);
  });

  it("a refused update (an unauthorized sender) also moves the cursor, and is never journaled", async () => {
    const a = await startChannel(fake);
    started.push(a);
    const id = fake.pushMessage({ id: 7 }, "let me in").updateId;
    await until(async () => (await a.parley.cursors.get(TELEGRAM_CURSOR)) === id + 1, "the cursor past it");
    expect(await a.parley.intake.unfinished()).toEqual([]);
    expect(
      await a.parley.intake.accept({
        channel: "telegram",
        platformMessageId: `update:${id}`,
        conversationKey: "telegram:7",
        payload: null,
        receivedAtMs: 0,
      }),
    ).toMatchObject({ kind: "accepted" });
  });
});

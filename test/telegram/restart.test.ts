/**
 * Restarts against the fake Bot API: the durable cursor keeps an answered update from being answered
 * again after a crash, and an unusable cursor file costs one bounded replay, never the channel.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ScriptStep } from "../../src/providers/scripted.js";
import { CURSOR_DIR, CURSOR_FILE } from "../../src/telegram/cursor.js";
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

const cursorOnDisk = (home: string) =>
  (JSON.parse(readFileSync(join(home, CURSOR_DIR, CURSOR_FILE), "utf8")) as { offset: number }).offset;

describe("restart", () => {
  it("a crash mid-turn does not answer an already-answered update again (the in-flight one replays once)", async () => {
    const forum = { allowForum: true, allowedForumChatIds: [String(FORUM.id)] };
    const scripts = (key: string) =>
      key.includes("forum")
        ? [{ steps: [text("working on second…"), waiting] }]
        : [[text("answer to first"), done]];
    const a = await startChannel(fake, { telegram: forum, turns: scripts });
    started.push(a);
    // Both updates reach the poll already waiting, so they arrive as one batch.
    await fake.waitFor(() => fake.callsOf("getUpdates").length === 1, 5000, "the first long poll");
    const first = fake.pushMessage({ id: OWNER }, "first").updateId;
    const second = fake.pushMessage({ id: OWNER }, "second", { chat: FORUM, threadId: 9 }).updateId;
    // The process "dies" before its next poll reaches Telegram: nothing it saw is confirmed upstream.
    fake.inject("getUpdates", { code: 502, description: "Bad Gateway" }, 1_000_000);
    await fake.waitFor(
      () => fake.sentMessages(OWNER).some((m) => m.visible.startsWith("answer to first")),
      5000,
      "answer 1",
    );
    await fake.waitFor(
      () => fake.sentMessages(FORUM.id).some((m) => m.visible.includes("slow tool")),
      5000,
      "turn 2 waiting",
    );
    // The low-water mark sits on the in-flight update, past the answered one.
    await until(() => cursorOnDisk(a.home) === second, "the cursor");
    expect(fake.pendingUpdateIds()).toEqual([first, second]);
    await a.running.poller.stopIntake(); // the crash: the open turn is abandoned, never settled

    fake.clearInjections();
    const b = await startChannel(fake, {
      home: a.home,
      telegram: forum,
      turns: () => [[text("answer to second (replayed)"), done]],
    });
    started.push(b);
    await fake.waitFor(
      () => fake.sentMessages(FORUM.id).some((m) => m.visible.startsWith("answer to second (replayed)")),
      5000,
      "the replay of the in-flight update",
    );
    expect([...b.providers.keys()]).toEqual(["telegram:default:forum:-100777:9"]);
    expect(fake.sentMessages(OWNER).filter((m) => m.visible.startsWith("answer to first"))).toHaveLength(1);
    await until(() => cursorOnDisk(a.home) === second + 1, "the cursor past the replay");
  });

  it("an unreadable cursor file replays once, never crashes", async () => {
    const a = await startChannel(fake, { turns: () => [[text("answered"), done]] });
    started.push(a);
    await a.stop();
    mkdirSync(join(a.home, CURSOR_DIR), { recursive: true });
    writeFileSync(join(a.home, CURSOR_DIR, CURSOR_FILE), "{ this is not json");
    const id = fake.pushMessage({ id: OWNER }, "hello").updateId;

    const b = await startChannel(fake, { home: a.home, turns: () => [[text("answered"), done]] });
    started.push(b);
    await fake.waitFor(
      () => fake.sentMessages(OWNER).some((m) => m.visible.startsWith("answered")),
      5000,
      "the answer",
    );
    expect(b.logger.entries.some((e) => e.level === "warn" && e.message.includes("cursor"))).toBe(true);
    await until(() => cursorOnDisk(a.home) === id + 1, "a healthy cursor again");
    await b.stop();

    // The next restart does not replay it again.
    const c = await startChannel(fake, { home: a.home, turns: () => [[text("answered"), done]] });
    started.push(c);
    fake.pushMessage({ id: OWNER }, "/help");
    await fake.waitFor(
      () => fake.sentMessages(OWNER).some((m) => m.visible.includes("Commands")),
      5000,
      "the help",
    );
    expect(c.providers.size).toBe(0);
    expect(fake.sentMessages(OWNER).filter((m) => m.visible.startsWith("answered"))).toHaveLength(1);
  });

  it("a refused update (an unauthorized sender) also advances the cursor", async () => {
    const a = await startChannel(fake);
    started.push(a);
    const id = fake.pushMessage({ id: 7 }, "let me in").updateId;
    await until(
      () => existsSync(join(a.home, CURSOR_DIR, CURSOR_FILE)) && cursorOnDisk(a.home) === id + 1,
      "the cursor past the refusal",
    );
  });
});

/**
 * Nothing Telegram delivers is dropped silently: every update the channel does not turn into a
 * message (a kind parley does not read, an edit, a bot's message, a stranger, a press with no
 * message, a redelivery after a crash) is counted under its reason, through the real poller and
 * grammY's client against the fake Bot API, with the real store.
 */
import Database from "better-sqlite3";
import type { MessageReactionCountUpdated, MessageReactionUpdated, Poll, Update } from "grammy/types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { storePath } from "../../src/store/index.js";
import { TELEGRAM_CURSOR } from "../../src/telegram/poller.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
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

const STRANGER = 7;

async function channel(o: Parameters<typeof startChannel>[1] = {}): Promise<ChannelUnderTest> {
  const c = await startChannel(fake, o);
  started.push(c);
  return c;
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

/** A Bot API Poll, as an Update's `poll` carries it (every required field). */
function poll(id: string): Poll {
  return {
    id,
    question: "Lunch?",
    options: [{ persistent_id: "o1", text: "yes", voter_count: 0 }],
    total_voter_count: 0,
    is_closed: false,
    is_anonymous: true,
    type: "regular",
    allows_multiple_answers: false,
    allows_revoting: false,
    members_only: false,
  };
}

describe("inbound drops", () => {
  it("counts an unknown kind of update, an edit, a bot, a stranger and a bare press, and confirms them all", async () => {
    const c = await channel({ turns: () => [[text("answered"), done]] });
    const now = Math.floor(Date.now() / 1000);
    // A kind outside allowed_updates (Bot API Update.message_reaction): parley does not read it.
    fake.pushUpdate({
      message_reaction: {
        chat: { id: OWNER, type: "private", first_name: "User" },
        message_id: 1,
        user: { id: OWNER, is_bot: false, first_name: "User" },
        date: now,
        old_reaction: [],
        new_reaction: [{ type: "emoji", emoji: "👍" }],
      } satisfies MessageReactionUpdated,
    });
    fake.pushUpdate({
      edited_message: {
        message_id: 2,
        date: now,
        edit_date: now,
        chat: { id: OWNER, type: "private", first_name: "User" },
        from: { id: OWNER, is_bot: false, first_name: "User" },
        text: "hi (edited)",
      } satisfies NonNullable<Update["edited_message"]>,
    });
    fake.pushMessage({ id: 9, is_bot: true }, "a bot speaking");
    fake.pushMessage({ id: STRANGER }, "let me in");
    // A press whose message Telegram no longer includes (the Bot API's `message` is optional).
    fake.pushCallback({ id: OWNER }, 999_999, "o:1");
    fake.pushMessage({ id: OWNER }, "hi");
    await fake.waitFor(() => fake.sentMessages(OWNER).some((m) => m.visible.startsWith("answered")));
    await until(() => fake.pendingUpdateIds().length === 0, "every update confirmed");

    const counts = Object.fromEntries(
      c.dropLedger.counts("telegram").map((t) => [t.reason, t.count] as const),
    );
    expect(counts).toEqual({ unknown_shape: 1, edited: 1, bot_echo: 1, stranger: 1, missing_id: 1 });
    expect(
      c.audit.find("inbound", "dropped").find((r) => r.fields.reason === "unknown_shape")?.fields.shape,
    ).toBe("message_reaction");
    expect(
      c.logger.entries.filter((e) => e.level === "warn" && e.message.includes("does not know")),
    ).toHaveLength(1);
    expect(fake.sentMessages(STRANGER)).toHaveLength(0);
    expect(fake.callsOf("answerCallbackQuery")).toHaveLength(0);
  });

  it("a second update of the same unknown kind is counted again but warned about once", async () => {
    const c = await channel();
    for (const id of [1, 2]) fake.pushUpdate({ poll: poll(`p${id}`) });
    await until(() => c.dropLedger.count("telegram", "unknown_shape") === 2, "both counted");
    expect(
      c.logger.entries.filter((e) => e.level === "warn" && e.message.includes("does not know")),
    ).toHaveLength(1);
  });

  it("counts an update redelivered after a crash as a redelivery, beside an unknown kind", async () => {
    const a = await channel({ turns: () => [[text("answer to first"), done]] });
    await fake.waitFor(() => fake.callsOf("getUpdates").length === 1, 5000, "the first long poll");
    const first = fake.pushMessage({ id: OWNER }, "first").updateId;
    // Telegram never hears the acknowledgement: the next poll does not reach it.
    fake.inject("getUpdates", { code: 502, description: "Bad Gateway" }, 1_000_000);
    await fake.waitFor(() => fake.sentMessages(OWNER).some((m) => m.visible.startsWith("answer to first")));
    await until(async () => (await a.parley.intake.countUnfinished()) === 0, "the message done");
    await until(async () => (await a.parley.cursors.get(TELEGRAM_CURSOR)) === first + 1, "the cursor");
    await a.running.poller.stopIntake();
    rewindCursor(a.home, first);
    // Unconfirmed again, as after a kill between the journal and the cursor write.
    fake.pushUpdate({
      message_reaction_count: {
        chat: { id: -100777, type: "supergroup", title: "Team", is_forum: true },
        message_id: 1,
        date: Math.floor(Date.now() / 1000),
        reactions: [{ type: { type: "emoji", emoji: "👍" }, total_count: 2 }],
      } satisfies MessageReactionCountUpdated,
    });
    expect(fake.pendingUpdateIds()).toContain(first);
    fake.clearInjections();

    const b = await channel({ home: a.home, turns: () => [[text("answered AGAIN"), done]] });
    await until(() => fake.pendingUpdateIds().length === 0, "both confirmed");
    expect(b.dropLedger.count("telegram", "redelivered")).toBe(1);
    expect(b.dropLedger.count("telegram", "unknown_shape")).toBe(1);
    expect(fake.sentMessages(OWNER).filter((m) => m.visible.includes("answer"))).toHaveLength(1);
  });
});

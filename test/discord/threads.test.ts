/**
 * Guild routes: an allow-listed thread answers (after one lookup confirming it IS a thread), a
 * non-allowed channel is ignored (silently for strangers, audited for an approved user), and an
 * allowed channel with autoThread answers in a new thread, audited as a grant.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemorySessionStore } from "../../src/messaging/session/session-store.js";
import type { Stack } from "./helpers.js";
import { ALICE, GUILD, MALLORY, startStack, untilFooter } from "./helpers.js";

const THREAD = "500000000000000001";
const CHANNEL = "500000000000000002";
const OTHER = "500000000000000003";
const NOT_A_THREAD = "500000000000000004";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const answer = (text: string) => [
  { type: "text" as const, text },
  { type: "complete" as const, stopReason: "end_turn" },
];

async function guildStack(
  turns: ReturnType<typeof answer>[],
  o: Pick<Parameters<typeof startStack>[0], "store" | "fake" | "home"> & { channels?: string[] } = {},
): Promise<Stack> {
  const s = await startStack({
    turns,
    discord: {
      allowedThreadIds: [THREAD, NOT_A_THREAD],
      allowedChannelIds: o.channels ?? [CHANNEL],
      autoThread: true,
    },
    ...o,
  });
  s.fake.addChannel({ id: THREAD, type: 11, guild_id: GUILD, parent_id: OTHER });
  s.fake.addChannel({ id: CHANNEL, type: 0, guild_id: GUILD });
  s.fake.addChannel({ id: OTHER, type: 0, guild_id: GUILD });
  s.fake.addChannel({ id: NOT_A_THREAD, type: 0, guild_id: GUILD });
  return s;
}

/** An allowed user's channel message: parley opens a thread and answers there. Returns the thread. */
async function autoThreadOnce(s: Stack): Promise<string> {
  s.fake.userMessage({ channelId: CHANNEL, guildId: GUILD, userId: ALICE, content: "start" });
  const created = () => [...s.fake.channels.values()].find((c) => c.parent_id === CHANNEL)?.id;
  await vi.waitFor(() => expect(created()).toBeDefined());
  const thread = created() ?? "";
  await untilFooter(s.fake, thread);
  return thread;
}

describe("discord: guild routes", () => {
  it("asks for guild messages and their content when a thread or channel is allowed", async () => {
    stack = await guildStack([]);
    const intents = (stack.fake.identifies[0] as { intents: number }).intents;
    expect(intents).toBe((1 << 12) | (1 << 9) | (1 << 15));
  });

  it("answers in an allow-listed thread, confirming it is a thread once", async () => {
    stack = await guildStack([answer("In the thread."), answer("Again.")]);
    stack.fake.userMessage({ channelId: THREAD, guildId: GUILD, userId: ALICE, content: "hello" });
    await untilFooter(stack.fake, THREAD);
    stack.fake.userMessage({ channelId: THREAD, guildId: GUILD, userId: ALICE, content: "again" });
    await untilFooter(stack.fake, THREAD, 2);
    expect(stack.fake.channelMessages(THREAD)[0]?.content).toMatch(/^In the thread\./);
    expect(stack.fake.callsTo("GET", new RegExp(`^/channels/${THREAD}$`))).toHaveLength(1);
    expect(stack.running.transport.maySendTo(THREAD, THREAD, { principal: "" })).toBe(true);
  });

  it("ignores a non-allowed channel: silently for a stranger, audited for an approved user", async () => {
    stack = await guildStack([]);
    stack.fake.userMessage({ channelId: OTHER, guildId: GUILD, userId: MALLORY, content: "chatter" });
    stack.fake.userMessage({ channelId: OTHER, guildId: GUILD, userId: ALICE, content: "me here" });
    stack.fake.userMessage({ channelId: NOT_A_THREAD, guildId: GUILD, userId: ALICE, content: "sneaky" });
    await expect.poll(() => stack?.audit.find("inbound", "denied").length, { timeout: 5000 }).toBe(2);
    const denied = stack.audit.find("inbound", "denied").map((r) => r.fields.user);
    expect(denied).toEqual([ALICE, ALICE]);
    expect(stack.fake.channelMessages(OTHER)).toHaveLength(0);
    expect(stack.fake.channelMessages(NOT_A_THREAD)).toHaveLength(0);
    expect(stack.provider.prompts).toHaveLength(0);
  });

  it("autoThread: an allowed channel's message opens a thread and is answered there", async () => {
    stack = await guildStack([answer("Answered in a fresh thread.")]);
    const asked = stack.fake.userMessage({
      channelId: CHANNEL,
      guildId: GUILD,
      userId: ALICE,
      content: "plan the release",
    });
    await vi.waitFor(
      () => expect(stack?.audit.find("discord_transport.auto_thread", "granted")).toHaveLength(1),
      {
        timeout: 5000,
      },
    );
    const created = stack.fake.callsTo(
      "POST",
      new RegExp(`^/channels/${CHANNEL}/messages/${asked}/threads$`),
    );
    expect(created).toHaveLength(1);
    expect((created[0]?.body as { name?: string } | undefined)?.name).toBe("plan the release");
    const thread = [...stack.fake.channels.values()].find((c) => c.parent_id === CHANNEL);
    expect(thread?.type).toBe(11);
    await untilFooter(stack.fake, thread?.id ?? "");
    expect(stack.fake.channelMessages(thread?.id ?? "")[0]?.content).toMatch(/^Answered in a fresh thread\./);
    expect(stack.fake.channelMessages(CHANNEL)).toHaveLength(0);
    // The created thread is now an allowed route in both directions.
    expect(stack.running.transport.maySendTo(thread?.id ?? "", thread?.id, { principal: "" })).toBe(true);
  });

  it("a stranger in an allowed channel is denied and audited, and no thread is made", async () => {
    stack = await guildStack([]);
    stack.fake.userMessage({ channelId: CHANNEL, guildId: GUILD, userId: MALLORY, content: "let me in" });
    await expect.poll(() => stack?.audit.find("inbound", "denied").length, { timeout: 5000 }).toBe(1);
    expect(stack.fake.callsTo("POST", /\/threads$/)).toHaveLength(0);
  });

  it("an autoThread thread keeps working after a restart, re-admitted against today's config", async () => {
    const store = new MemorySessionStore();
    // One data home for both processes: the journal's message numbers go on from the first run's.
    const home = mkdtempSync(join(tmpdir(), "parley-discord-threads-"));
    stack = await guildStack([answer("First answer."), answer("After the restart.")], { store, home });
    const thread = await autoThreadOnce(stack);
    // Restart: a new process (transport, dispatcher) on the same durable store and the same Discord.
    await stack.running.stop();
    const fake = stack.fake;
    stack = await guildStack([answer("After the restart.")], { store, fake, home });
    expect(stack.running.transport.maySendTo(thread, thread, { principal: "" })).toBe(false);
    fake.userMessage({ channelId: thread, guildId: GUILD, userId: ALICE, content: "still here?" });
    await untilFooter(fake, thread, 2);
    expect(fake.channelMessages(thread).at(-1)?.content).toMatch(/^After the restart\./);
    expect(stack.audit.find("discord_transport.auto_thread", "granted")[0]?.fields).toMatchObject({
      reason: "restored",
      parent: CHANNEL,
      thread,
    });
    expect(stack.running.transport.maySendTo(thread, thread, { principal: "" })).toBe(true);
  });

  it("after a restart, a thread whose channel is no longer allowed stays closed", async () => {
    const store = new MemorySessionStore();
    stack = await guildStack([answer("First answer.")], { store });
    const thread = await autoThreadOnce(stack);
    await stack.running.stop();
    const fake = stack.fake;
    // The operator removed the channel: its threads close with it.
    stack = await guildStack([answer("must not run")], { store, fake, channels: [OTHER] });
    fake.userMessage({ channelId: thread, guildId: GUILD, userId: ALICE, content: "anyone?" });
    await expect.poll(() => stack?.audit.find("inbound", "denied").length, { timeout: 5000 }).toBe(1);
    expect(stack.provider.prompts).toEqual([]);
    expect(stack.audit.find("discord_transport.auto_thread", "granted")).toEqual([]);
  });
});

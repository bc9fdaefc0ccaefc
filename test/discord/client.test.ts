/**
 * DiscordClient against the fake's REST: @discordjs/rest waits out a 429 (bucket and global) and
 * never sends into a bucket it was told is exhausted; the invalid-request breaker refuses sends
 * during its cool-off; results are classified, never thrown.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DiscordClient } from "../../src/discord/client.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { FakeDiscord } from "../fakes/discord/server.js";

const CHAN = "600000000000000001";
const OTHER = "600000000000000002";

let fake: FakeDiscord | undefined;
let client: DiscordClient | undefined;
afterEach(async () => {
  await client?.close();
  await fake?.close();
  client = undefined;
  fake = undefined;
});

async function setup(breaker?: { threshold: number; coolOffMs: number }) {
  fake = await new FakeDiscord().start();
  client = new DiscordClient({
    token: fake.token,
    apiBase: fake.apiBase,
    intents: 0,
    logger: new MemoryLogger(),
    onDispatch: () => {},
    ...(breaker ? { breaker } : {}),
  });
  return { fake, client };
}

const messagesOf = (channel: string) => (method: string, path: string) =>
  method === "POST" && path === `/channels/${channel}/messages`;

describe("discord client: rate limits", () => {
  it("never sends into a bucket that reported Remaining 0, sequentially or concurrently", async () => {
    const { fake, client } = await setup();
    fake.setBucket(messagesOf(CHAN), { limit: 2, resetAfterMs: 250 });
    for (let i = 0; i < 3; i++)
      expect((await client.createMessage(CHAN, { content: `seq ${i}` })).ok).toBe(true);
    const burst = await Promise.all(
      Array.from({ length: 5 }, (_, i) => client.createMessage(CHAN, { content: `burst ${i}` })),
    );
    expect(burst.every((r) => r.ok)).toBe(true);
    expect(fake.violations).toEqual([]);
    expect(fake.callsTo("POST", /messages$/).every((c) => c.status === 200)).toBe(true);
    expect(fake.channelMessages(CHAN).map((m) => m.content)).toEqual([
      "seq 0",
      "seq 1",
      "seq 2",
      ...Array.from({ length: 5 }, (_, i) => `burst ${i}`),
    ]);
  });

  it("waits out a bucket 429's retry_after and retries the same request", async () => {
    const { fake, client } = await setup();
    fake.failNext(messagesOf(CHAN), { status: 429, retryAfterMs: 200 });
    const res = await client.createMessage(CHAN, { content: "after the wait" });
    expect(res.ok).toBe(true);
    const attempts = fake.callsTo("POST", new RegExp(`^/channels/${CHAN}/messages$`));
    expect(attempts.map((c) => c.status)).toEqual([429, 200]);
    expect(fake.channelMessages(CHAN)).toHaveLength(1);
  });

  it("a global 429 holds every route (except interaction callbacks) until it passes", async () => {
    const { fake, client } = await setup();
    fake.failNext(messagesOf(CHAN), { status: 429, retryAfterMs: 300, global: true });
    const first = client.createMessage(CHAN, { content: "one" });
    // Give the first request time to earn its 429 before the others are queued.
    await new Promise((r) => setTimeout(r, 50));
    const others = Promise.all([client.createMessage(OTHER, { content: "two" }), client.typing(OTHER)]);
    const callback = await client.interactionCallback("700000000000000001", "tok", {
      type: 6,
      data: { allowed_mentions: { parse: [] } },
    });
    expect(callback.ok).toBe(true);
    expect((await first).ok).toBe(true);
    expect((await others).every((r) => r.ok)).toBe(true);
    expect(fake.violations).toEqual([]);
  });

  it("classifies a 4xx as permanent without retrying it", async () => {
    const { fake, client } = await setup();
    fake.failNext(messagesOf(CHAN), { status: 403, code: 50013 });
    const res = await client.createMessage(CHAN, { content: "x" });
    expect(res).toMatchObject({ ok: false, kind: "permanent", status: 403 });
    expect(fake.callsTo("POST", /messages$/)).toHaveLength(1);
  });
});

describe("discord client: the invalid-request breaker", () => {
  it("trips below Discord's ceiling and refuses to send during the cool-off", async () => {
    const { fake, client } = await setup({ threshold: 3, coolOffMs: 60_000 });
    for (let i = 0; i < 3; i++) {
      fake.failNext(messagesOf(CHAN), { status: 403, code: 50013 });
      expect((await client.createMessage(CHAN, { content: "x" })).ok).toBe(false);
    }
    const before = fake.calls.length;
    const refused = await client.createMessage(CHAN, { content: "would be invalid again" });
    expect(refused).toMatchObject({ ok: false, kind: "refused" });
    expect(fake.calls.length).toBe(before);
  });
});

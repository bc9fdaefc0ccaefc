/**
 * The long connection against the fake, at the wire: the real SDK's WSClient discovers its endpoint
 * at the configured origin, speaks the SDK's protobuf frames, reassembles fragmented events,
 * acknowledges each one only after our handler returned, gets a failed or lost acknowledgement
 * redelivered, pings and reads the pong, and reconnects (with discovery) when the socket drops.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createHttp } from "../../src/feishu/client.js";
import { FeishuConnection } from "../../src/feishu/connection.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { FakeFeishu, type FakeFeishuOptions } from "../fakes/feishu/server.js";
import { testDrops } from "../helpers/drops.js";

let fake: FakeFeishu;
let connection: FeishuConnection | undefined;

afterEach(async () => {
  connection?.close();
  connection = undefined;
  await fake.stop();
});

const OWNER = { openId: "ou_owner000000000000000000000000001" };

async function connect(
  options: FakeFeishuOptions,
  onMessage: (event: unknown) => Promise<void>,
  secret?: string,
): Promise<MemoryLogger> {
  fake = await FakeFeishu.start({ lifetimeMs: 20_000, ...options });
  const logger = new MemoryLogger();
  connection = new FeishuConnection({
    appId: fake.appId,
    appSecret: secret ?? fake.appSecret,
    origin: fake.origin,
    http: createHttp(),
    logger,
    clock: realClock,
    onMessage,
    drops: testDrops(new MemoryAuditSink(), "feishu"),
    restartFirstMs: 60_000,
  });
  connection.start();
  return logger;
}

const textOf = (event: unknown) =>
  JSON.parse((event as { message: { content: string } }).message.content).text as string;

describe("the long connection", () => {
  it("discovers its endpoint with the app's credentials, then receives and acknowledges an event", async () => {
    const got: string[] = [];
    await connect({}, async (event) => void got.push(textOf(event)));
    await fake.waitFor(() => fake.ws.ready.size === 1, 5000, "the connection");
    const discovery = fake.callsTo(/POST \/callback\/ws\/endpoint/);
    expect(discovery).toHaveLength(1);
    // The secret went to the configured origin, and the fake does not keep it.
    expect(discovery[0]?.body).toEqual({ AppID: fake.appId });
    fake.pushMessage(OWNER, "hello");
    await fake.waitFor(() => fake.ws.acks.length === 1, 5000, "the ack");
    expect(got).toEqual(["hello"]);
    expect(fake.ws.acks[0]).toMatchObject({ code: 200 });
    expect(fake.ws.badFrames).toEqual([]);
  });

  it("reassembles an event the platform sends in several frames (sum/seq)", async () => {
    const got: string[] = [];
    await connect({ fragmentBytes: 97 }, async (event) => void got.push(textOf(event)));
    await fake.waitFor(() => fake.ws.ready.size === 1, 5000, "the connection");
    const long = "多字节 text ✓ ".repeat(60);
    const { event } = fake.pushMessage(OWNER, long);
    await fake.waitFor(() => event.acked, 5000, "the ack");
    expect(event.payload.length).toBeGreaterThan(97 * 10);
    expect(got).toEqual([long]);
  });

  it("answers a failed handler as failed, and the platform delivers the event again", async () => {
    let calls = 0;
    await connect({ ackTimeoutMs: 200 }, async () => {
      calls += 1;
      if (calls === 1) throw new Error("the journal is down");
    });
    await fake.waitFor(() => fake.ws.ready.size === 1, 5000, "the connection");
    const { event } = fake.pushMessage(OWNER, "again");
    await fake.waitFor(() => event.acked, 5000, "the second delivery acknowledged");
    expect(fake.ws.acks.map((a) => a.code)).toEqual([500, 200]);
    expect(event.deliveries).toBe(2);
  });

  it("an acknowledgement lost on the way gets the event delivered again", async () => {
    let calls = 0;
    await connect({ ackTimeoutMs: 200 }, async () => {
      calls += 1;
    });
    await fake.waitFor(() => fake.ws.ready.size === 1, 5000, "the connection");
    fake.ws.loseAcks(1);
    const { event } = fake.pushMessage(OWNER, "once");
    await fake.waitFor(() => event.acked, 5000, "the redelivery acknowledged");
    expect(calls).toBe(2);
  });

  it("pings with its service id and reads the pong", async () => {
    await connect({ clientConfig: { PingInterval: 0.2 } }, async () => {});
    await fake.waitFor(() => fake.ws.pings.length >= 3, 5000, "three pings");
    expect(fake.ws.badFrames).toEqual([]);
  });

  it("reconnects through discovery after the socket drops, and gets what was not acknowledged", async () => {
    const got: string[] = [];
    await connect({ ackTimeoutMs: 60_000 }, async (event) => void got.push(textOf(event)));
    await fake.waitFor(() => fake.ws.ready.size === 1, 5000, "the connection");
    fake.ws.loseAcks(1);
    fake.pushMessage(OWNER, "before the drop");
    await fake.waitFor(() => got.length === 1, 5000, "the first delivery");
    fake.ws.dropAll();
    await fake.waitFor(() => fake.ws.connections === 2 && got.length === 2, 5000, "the reconnect");
    expect(fake.callsTo(/POST \/callback\/ws\/endpoint/)).toHaveLength(2);
    expect(got).toEqual(["before the drop", "before the drop"]);
  });

  it("a refused secret never connects, is logged, and is retried later", async () => {
    const logger = await connect({}, async () => {}, "wrong-secret");
    await fake.waitFor(() => logger.entries.some((e) => e.message.includes("gave up")), 5000, "the give-up");
    expect(fake.ws.connections).toBe(0);
    expect(logger.entries.find((e) => e.message.includes("gave up"))?.message).toContain("code=514");
    expect(JSON.stringify(logger.entries)).not.toContain("wrong-secret");
  });
});

/**
 * The long connection against the fake: subscribe verdicts (a wrong secret is unhealthy within
 * seconds and the retries go on), the 30-second ping and how a silent peer is dropped, answers told
 * apart by req_id, one reply frame in flight per req_id, the push budget (and the fake's own limits
 * on its receipt clock), a push nobody acknowledged sent again, every inbound frame not handed out
 * counted, and a kick reported without a fight. Timers run on a manual clock; only the socket is real.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { FrameVerdict, WeComClientOptions } from "../../src/wecom/client.js";
import { WeComClient } from "../../src/wecom/client.js";
import type { WeComHealth } from "../../src/wecom/health.js";
import { WECOM_MAX_REPLY_BYTES } from "../../src/wecom/limits.js";
import { OriginPolicy } from "../../src/wecom/origins.js";
import { ResponseUrl } from "../../src/wecom/response-url.js";
import type { CallbackFrame } from "../../src/wecom/wire.js";
import {
  ERR_BAD_CREDENTIALS,
  ERR_RATE,
  ERR_STREAM_DEAD,
  errmsgOf,
  FakeWeCom,
} from "../fakes/wecom/server.js";
import { testDrops } from "../helpers/drops.js";
import { ManualClock, settle } from "../helpers/manual-clock.js";
import { wireTexts } from "./helpers.js";

let fake: FakeWeCom;
const clients: WeComClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await fake?.stop();
});

async function connect(o: Partial<WeComClientOptions> & { clock?: ManualClock } = {}) {
  const clock = o.clock ?? new ManualClock();
  const logger = new MemoryLogger();
  const health: WeComHealth[] = [];
  const callbacks: CallbackFrame[] = [];
  const audit = new MemoryAuditSink();
  const drops = testDrops(audit, "wecom");
  const client = new WeComClient({
    url: fake.wsUrl,
    botId: fake.botId,
    secret: fake.secret,
    clock,
    logger,
    drops,
    onCallback: (f) => callbacks.push(f),
    onHealth: (h) => health.push(h),
    ...o,
  });
  clients.push(client);
  client.start();
  return { client, clock, logger, health, callbacks, drops, audit };
}

const healthy = (c: WeComClient) =>
  vi.waitFor(() => expect(c.health.state).toBe("healthy"), { timeout: 5000 });

describe("subscribe", () => {
  it("subscribes with the bot id and secret, and the secret appears in that frame only", async () => {
    fake = await FakeWeCom.start();
    const { client } = await connect();
    await healthy(client);
    const { reqId } = fake.callback({ text: "hi" });
    expect(await client.respond(reqId, "s1", "hello", true)).toEqual({ kind: "accepted" });
    expect(await client.push("zhangsan", "pushed")).toEqual({ kind: "accepted" });
    const carrying = fake.frames.filter((f) => JSON.stringify(f.body ?? {}).includes(fake.secret));
    expect(carrying.map((f) => f.cmd)).toEqual(["aibot_subscribe"]);
    expect(carrying[0]?.reqId).toMatch(/^aibot_subscribe_/);
  });

  it("a wrong secret is unhealthy with its reason at once, and the reconnecting goes on", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    const { client, health, logger } = await connect({ clock, secret: "not-the-secret" });
    await vi.waitFor(() =>
      expect(client.health).toMatchObject({ state: "unhealthy", reason: "subscribe_refused" }),
    );
    expect(health.filter((h) => h.state === "unhealthy")).toHaveLength(1);
    // Only the classification is logged, never WeCom's message (it echoes what was sent).
    const logged = JSON.stringify(logger.entries);
    expect(logged).toContain(String(ERR_BAD_CREDENTIALS));
    expect(logged).not.toContain(errmsgOf(ERR_BAD_CREDENTIALS));
    expect(logged).not.toContain("not-the-secret");
    for (let i = 0; i < 3; i++) {
      const before = fake.subscribes;
      await clock.advance(120_000);
      await vi.waitFor(() => expect(fake.subscribes).toBeGreaterThan(before));
    }
    // The secret is corrected while the gateway runs: the next attempt subscribes.
    fake.secret = "not-the-secret";
    await clock.advance(120_000);
    await healthy(client);
  });

  it("backs off exponentially while the connections keep closing at once", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    const { client } = await connect({
      clock,
      secret: "wrong",
      reconnectBaseMs: 1000,
      reconnectMaxMs: 60_000,
    });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      await vi.waitFor(() => expect(clock.pendingDelays().length).toBeGreaterThan(0));
      const [delay = 0] = clock.pendingDelays();
      delays.push(delay);
      const before = fake.subscribes;
      await clock.advance(delay);
      await vi.waitFor(() => expect(fake.subscribes).toBeGreaterThan(before));
      await vi.waitFor(() => expect(client.health.state).toBe("unhealthy"));
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000]);
  });
});

describe("the minimum-healthy guard", () => {
  it("only a connection that stayed up 30 s resets the backoff; one dropped at once keeps climbing", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    const { client } = await connect({ clock, reconnectBaseMs: 1000, reconnectMaxMs: 60_000 });
    await healthy(client);
    // The reconnect timer, once the drop was seen (the heartbeat stops with the connection).
    const nextDelay = async () => {
      await vi.waitFor(() => expect(client.health.state).toBe("unhealthy"));
      await vi.waitFor(() => expect(clock.pendingDelays()).toHaveLength(1));
      return clock.pendingDelays()[0] ?? 0;
    };
    const reconnect = async (delay: number) => {
      const before = fake.subscribes;
      await clock.advance(delay);
      await vi.waitFor(() => expect(fake.subscribes).toBeGreaterThan(before));
      await healthy(client);
    };
    fake.drop();
    const first = await nextDelay();
    await reconnect(first);
    // Up for a moment only: an accept-then-drop loop must not reconnect at the base delay forever.
    fake.drop();
    const second = await nextDelay();
    await reconnect(second);
    // Up past the guard: the curve starts over.
    await clock.advance(31_000);
    fake.drop();
    const third = await nextDelay();
    expect([first, second, third]).toEqual([1000, 2000, 1000]);
  });
});

describe("heartbeat", () => {
  it("pings every 30 s and takes two unanswered pings for a dead connection", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    const { client, health } = await connect({ clock });
    await healthy(client);
    await clock.advance(30_000);
    await vi.waitFor(() => expect(fake.pings).toBe(1));
    await clock.advance(30_000);
    await vi.waitFor(() => expect(fake.pings).toBe(2));
    expect(client.health.state).toBe("healthy");
    fake.answerPings = false;
    const subscribes = fake.subscribes;
    await clock.advance(30_000);
    await vi.waitFor(() => expect(fake.pings).toBe(3));
    await clock.advance(30_000);
    await vi.waitFor(() => expect(fake.pings).toBe(4));
    await clock.advance(30_000);
    await vi.waitFor(() =>
      expect(health.at(-1)).toMatchObject({ state: "unhealthy", reason: "heartbeat_lost" }),
    );
    fake.answerPings = true;
    await clock.advance(60_000);
    await vi.waitFor(() => expect(fake.subscribes).toBeGreaterThan(subscribes));
    await healthy(client);
  });
});

describe("answers told apart by req_id", () => {
  it("a reply frame's verdict is its own: one frame in flight per req_id, even with answers held and reordered", async () => {
    fake = await FakeWeCom.start();
    const { client } = await connect();
    await healthy(client);
    const a = fake.callback({ text: "a" }).reqId;
    const b = fake.callback({ text: "b" }).reqId;
    fake.replyAcks = "hold";
    fake.refuseNext(
      (cmd, body) => cmd === "aibot_respond_msg" && JSON.stringify(body).includes("second"),
      40_099,
    );
    const verdicts: Promise<FrameVerdict>[] = [
      client.respond(a, "s", "first", false),
      client.respond(a, "s", "second", false),
      client.respond(b, "t", "other", false),
    ];
    await vi.waitFor(() => expect(fake.heldAcks).toBe(2));
    // Only one frame of `a` has left: the second waits for the first one's answer.
    expect(fake.framesOf("aibot_respond_msg").map((f) => f.reqId)).toEqual([a, b]);
    fake.releaseAcks({ reverse: true });
    await vi.waitFor(() => expect(fake.heldAcks).toBe(1));
    fake.releaseAcks();
    const [first, second, other] = await Promise.all(verdicts);
    expect(first).toEqual({ kind: "accepted" });
    expect(second).toEqual({ kind: "refused", errcode: 40_099, terminal: false });
    expect(other).toEqual({ kind: "accepted" });
  });

  it("846605 and 846608 are terminal; a push never answered is sent again, then 'unacked' after the bound", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    const { client } = await connect({ clock, maxResends: 1 });
    await healthy(client);
    const { reqId } = fake.callback({ text: "x" });
    expect(await client.respond(reqId, "s", "done", true)).toEqual({ kind: "accepted" });
    expect(await client.respond(reqId, "s", "again", false)).toEqual({
      kind: "refused",
      errcode: ERR_STREAM_DEAD,
      terminal: true,
    });
    fake.makeUnroutable(reqId);
    expect(await client.respond(reqId, "s2", "new", false)).toMatchObject({
      terminal: true,
      errcode: 846605,
    });
    fake.replyAcks = "none";
    const silent = client.push("zhangsan", "anyone?");
    await vi.waitFor(() => expect(fake.framesOf("aibot_send_msg")).toHaveLength(1));
    await clock.advance(5_000);
    // No answer is no evidence: the push goes out again, on a req_id of its own.
    await vi.waitFor(() => expect(fake.framesOf("aibot_send_msg")).toHaveLength(2));
    const [first, second] = fake.framesOf("aibot_send_msg");
    expect(second?.reqId).not.toBe(first?.reqId);
    await clock.advance(5_000);
    expect(await silent).toEqual({ kind: "unacked" });
  });

  it("a push into a conversation nobody opened is refused; a frame with no connection is unsent", async () => {
    fake = await FakeWeCom.start();
    const { client } = await connect();
    await healthy(client);
    expect(await client.push("nobody-wrote", "hello")).toMatchObject({ kind: "refused" });
    await client.close();
    expect(await client.push("zhangsan", "after close")).toEqual({ kind: "unsent" });
  });
});

describe("the byte cap at the wire", () => {
  it("a frame, a push or a response_url body over 20,480 bytes is cut at a whole character, and logged", async () => {
    fake = await FakeWeCom.start();
    const { client, logger } = await connect();
    await healthy(client);
    // Mixed widths around the cut: 3-byte CJK, a 4-byte emoji (a surrogate pair), ASCII.
    const long = "企业微信😀 a".repeat(2_000);
    const { reqId } = fake.callback({ text: "hi" });
    expect(await client.respond(reqId, "s1", long, true)).toEqual({ kind: "accepted" });
    expect(await client.push("zhangsan", long)).toEqual({ kind: "accepted" });
    const body = fake.lastCallbackBody();
    const responseUrl = new ResponseUrl({
      origins: new OriginPolicy([fake.origin]),
      timers: new ManualClock(),
      logger,
    });
    expect(await responseUrl.post(String(body.response_url), long)).toBe(true);
    const sent = wireTexts(fake);
    expect(sent).toHaveLength(3);
    for (const t of sent) {
      expect(Buffer.byteLength(t)).toBeLessThanOrEqual(WECOM_MAX_REPLY_BYTES);
      expect(Buffer.byteLength(t)).toBeGreaterThan(WECOM_MAX_REPLY_BYTES - 4);
      expect(long.startsWith(t)).toBe(true);
      // A whole character at the end: no lone high surrogate, and the bytes round-trip.
      expect(t).not.toMatch(/[\uD800-\uDBFF]$/);
      expect(Buffer.from(t, "utf8").toString("utf8")).toBe(t);
    }
    const cuts = logger.entries.filter((e) => e.message.includes("cut at the wire"));
    expect(cuts).toHaveLength(3);
    expect(JSON.stringify(cuts)).not.toContain("企业");
  });

  it("content within the cap passes untouched", async () => {
    fake = await FakeWeCom.start();
    const { client, logger } = await connect();
    await healthy(client);
    const exact = "企".repeat(WECOM_MAX_REPLY_BYTES / 4) + "😀".repeat(WECOM_MAX_REPLY_BYTES / 16);
    expect(Buffer.byteLength(exact)).toBe(WECOM_MAX_REPLY_BYTES);
    fake.callback({ text: "hi" });
    expect(await client.push("zhangsan", exact)).toEqual({ kind: "accepted" });
    expect(fake.pushes[0]?.content).toBe(exact);
    expect(logger.entries.filter((e) => e.message.includes("cut at the wire"))).toEqual([]);
  });
});

describe("the push budget", () => {
  it("never sends more than 30 pushes a minute into one conversation: the rest wait for the window", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    const { client } = await connect({ clock });
    await healthy(client);
    fake.callback({ userid: "lisi", text: "hi" });
    const sends = Array.from({ length: 35 }, (_, i) => client.push("lisi", `part ${i}`));
    await vi.waitFor(() => expect(fake.pushes).toHaveLength(30));
    await settle();
    expect(fake.pushes).toHaveLength(30);
    // WeCom's minute is its own receipt clock's: the budget keeps a second on top of it.
    await clock.advance(60_999);
    await settle();
    expect(fake.pushes).toHaveLength(30);
    await clock.advance(1);
    const verdicts = await Promise.all(sends);
    expect(verdicts.every((v) => v.kind === "accepted")).toBe(true);
    expect(fake.pushes.every((p) => p.accepted)).toBe(true);
    expect(fake.pushes.map((p) => p.content)).toEqual(Array.from({ length: 35 }, (_, i) => `part ${i}`));
  });
});

describe("a kick", () => {
  it("is reported, not fought: no reconnect", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    const { client, logger } = await connect({ clock });
    await healthy(client);
    const subscribes = fake.subscribes;
    fake.kick();
    await vi.waitFor(() => expect(client.health).toMatchObject({ state: "unhealthy", reason: "kicked" }));
    await clock.advance(10 * 60_000);
    await settle();
    expect(fake.subscribes).toBe(subscribes);
    expect(logger.entries.some((e) => e.level === "error" && e.message.includes("another connection"))).toBe(
      true,
    );
  });

  it("a second gateway subscribing with the same bot kicks the first", async () => {
    fake = await FakeWeCom.start();
    const first = await connect();
    await healthy(first.client);
    const second = await connect();
    await healthy(second.client);
    await vi.waitFor(() =>
      expect(first.client.health).toMatchObject({ state: "unhealthy", reason: "kicked" }),
    );
    expect(second.client.health.state).toBe("healthy");
  });
});

describe("callbacks and events", () => {
  it("hands callbacks out as they arrive and drops enter_chat and feedback events on purpose", async () => {
    fake = await FakeWeCom.start();
    const { client, callbacks, drops, audit } = await connect();
    await healthy(client);
    fake.event("enter_chat");
    fake.event("feedback_event");
    fake.callback({ text: "one" });
    await vi.waitFor(() => expect(callbacks).toHaveLength(1));
    expect(callbacks[0]?.body.text?.content).toBe("one");
    expect(drops.ledger.count("wecom", "event_unanswered")).toBe(2);
    expect(audit.find("inbound", "dropped").map((e) => e.fields.event)).toEqual([
      "enter_chat",
      "feedback_event",
    ]);
  });
});

describe("a push nobody acknowledged", () => {
  it("in flight when the socket dies: sent again once the connection is back, and it lands once", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    const { client } = await connect({ clock });
    await healthy(client);
    fake.callback({ text: "hi" });
    const subscribes = fake.subscribes;
    fake.mishapNext((cmd) => cmd === "aibot_send_msg", "drop");
    const verdict = client.push("zhangsan", "part two");
    await vi.waitFor(() => expect(client.health.state).toBe("unhealthy"));
    // The reconnect (1 s backoff), then the same content again.
    await clock.advance(1_000);
    await vi.waitFor(() => expect(fake.subscribes).toBe(subscribes + 1));
    expect(await verdict).toEqual({ kind: "accepted" });
    expect(fake.framesOf("aibot_send_msg").map((f) => f.errcode)).toEqual([null, 0]);
    expect(fake.pushes.map((p) => [p.content, p.accepted])).toEqual([["part two", true]]);
  });

  it("lost on the way (no answer in 5 s): sent again on the same socket", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    const { client } = await connect({ clock });
    await healthy(client);
    fake.callback({ text: "hi" });
    fake.mishapNext((cmd) => cmd === "aibot_send_msg", "lost");
    const verdict = client.push("zhangsan", "part two");
    await vi.waitFor(() => expect(fake.framesOf("aibot_send_msg")).toHaveLength(1));
    await clock.advance(5_000);
    expect(await verdict).toEqual({ kind: "accepted" });
    expect(fake.pushes.map((p) => p.content)).toEqual(["part two"]);
    expect(fake.subscribes).toBe(1);
  });

  it("a refusal is a verdict, never re-sent", async () => {
    fake = await FakeWeCom.start();
    const { client } = await connect();
    await healthy(client);
    fake.callback({ text: "hi" });
    fake.refuseNext((cmd) => cmd === "aibot_send_msg", 45_009);
    expect(await client.push("zhangsan", "x")).toEqual({ kind: "refused", errcode: 45_009, terminal: false });
    expect(fake.framesOf("aibot_send_msg")).toHaveLength(1);
  });
});

describe("the fake's push limits (WeCom's, on its own receipt clock)", () => {
  it("refuses the 31st push 59,999 ms after the first with 45009 and takes it at 60,000; our budget never tries", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now() });
    // No budget on our side: the platform's own edge, as observed.
    const { client } = await connect({ clock, pushWindows: [] });
    await healthy(client);
    fake.callback({ text: "hi" });
    for (let i = 0; i < 30; i++) expect(await client.push("zhangsan", `p${i}`)).toEqual({ kind: "accepted" });
    await clock.advance(59_999);
    expect(await client.push("zhangsan", "early")).toMatchObject({ kind: "refused", errcode: ERR_RATE });
    await clock.advance(1);
    expect(await client.push("zhangsan", "on time")).toEqual({ kind: "accepted" });
  });

  it("refuses past the hourly limit even when every minute is within its own", async () => {
    const clock = new ManualClock();
    fake = await FakeWeCom.start({ now: () => clock.now(), pushesPerHour: 40 });
    const { client } = await connect({ clock, pushWindows: [] });
    await healthy(client);
    fake.callback({ text: "hi" });
    for (let i = 0; i < 40; i++) {
      expect(await client.push("zhangsan", `p${i}`)).toEqual({ kind: "accepted" });
      if (i === 19) await clock.advance(30 * 60_000);
    }
    await clock.advance(5 * 60_000);
    expect(await client.push("zhangsan", "41st")).toMatchObject({ kind: "refused", errcode: ERR_RATE });
    await clock.advance(25 * 60_000);
    expect(await client.push("zhangsan", "an hour on")).toEqual({ kind: "accepted" });
  });
});

describe("inbound frames that are not handed out", () => {
  it("are counted with a reason each: unreadable, without a req_id, an unknown cmd, a stray answer, binary", async () => {
    fake = await FakeWeCom.start();
    const { client, callbacks, drops } = await connect();
    await healthy(client);
    fake.raw("not json");
    fake.raw(JSON.stringify({ cmd: "aibot_msg_callback", headers: {}, body: {} }));
    fake.raw(JSON.stringify({ cmd: "aibot_future_cmd", headers: { req_id: "x1" }, body: {} }));
    fake.raw(JSON.stringify({ headers: { req_id: "aibot_send_msg_nothing" }, errcode: 0, errmsg: "ok" }));
    fake.rawBinary(Buffer.from([1, 2, 3]));
    fake.callback({ text: "still here" });
    await vi.waitFor(() => expect(callbacks).toHaveLength(1));
    const c = (reason: string) => drops.ledger.count("wecom", reason);
    await vi.waitFor(() => expect(c("unparseable")).toBe(2));
    expect(c("missing_id")).toBe(1);
    expect(c("unknown_shape")).toBe(1);
    expect(c("stray_ack")).toBe(1);
  });
});

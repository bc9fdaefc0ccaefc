/**
 * The whole WeCom channel (start()) against the fake, with the real store: who is answered, the
 * msgid dedupe (after authorization, across a restart too, and released when a turn failed), the
 * wrong secret, typed approvals, files captioned as commands, replies as pushes, steering, /queue,
 * and a credential split across chunks.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { readHealth } from "../../src/wecom/health.js";
import { STEER_NOTICE } from "../../src/wecom/surface.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { done, fakeWeComLab, GUEST, OWNER, startWeComChannel, text } from "./channel-harness.js";
import { wireTexts } from "./helpers.js";

const lab = fakeWeComLab();
const SECRET = "AKIAQ7ZR3M5TXW2KP9VB";

const shown = (pattern: string | RegExp) =>
  vi.waitFor(
    () => {
      const all = lab.fake.visible();
      const hit = all.some((v) => (typeof pattern === "string" ? v.includes(pattern) : pattern.test(v)));
      if (!hit) throw new Error(`not shown: ${pattern}\n${all.join("\n---\n")}`);
    },
    { timeout: 8000, interval: 10 },
  );

async function subscribed() {
  await vi.waitFor(() => expect(lab.fake.connected).toBe(true), { timeout: 5000 });
}

describe("who is answered", () => {
  it("a stranger and a group message get no reply and an audit row each; bot messages are dropped", async () => {
    const c = await lab.channel({ turns: () => [[text("should never run"), done]] });
    await subscribed();
    lab.fake.callback({ userid: "wangwu", text: "let me in" });
    lab.fake.callback({ userid: OWNER, chattype: "group", text: "hi from the group" });
    lab.fake.callback({ userid: null, text: "nobody" });
    lab.fake.callback({ userid: lab.fake.botId, text: "echo of myself" });
    await vi.waitFor(() => expect(c.audit.find("inbound", "denied")).toHaveLength(3));
    expect(c.audit.find("wecom.chat_gate", "denied")[0]?.fields).toMatchObject({
      user: OWNER,
      reason: "denied_group_chat",
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(c.providers.size).toBe(0);
    expect(lab.fake.visible()).toEqual([]);
    expect(await c.parley.intake.unfinished()).toEqual([]);
  });

  it("allowAllUsers still refuses a frame with no userid", async () => {
    const c = await lab.channel({
      wecom: { allowedUsers: [], allowAllUsers: true },
      turns: () => [[text("hello anyone"), done]],
    });
    await subscribed();
    lab.fake.callback({ userid: null, text: "ghost" });
    lab.fake.callback({ userid: "anyone", text: "hi" });
    await shown("hello anyone");
    expect(c.audit.find("inbound", "denied")).toHaveLength(1);
    expect(c.running.transport.configuredTargets()).toEqual([
      { targetId: "user:anyone", label: "WeCom user anyone", available: true },
    ]);
  });
});

describe("the msgid dedupe", () => {
  it("a repeated msgid gets one answer; a frame without one is never suppressed", async () => {
    const c = await lab.channel({
      turns: () => [
        [text("answer one"), done],
        [text("answer two"), done],
        [text("answer three"), done],
      ],
    });
    await subscribed();
    lab.fake.callback({ msgid: "m-1", text: "hello" });
    await shown("answer one");
    lab.fake.callback({ msgid: "m-1", text: "hello" });
    await vi.waitFor(() => expect(c.audit.find("intake", "dropped")).toHaveLength(1));
    lab.fake.callback({ msgid: null, text: "no id" });
    await shown("answer two");
    lab.fake.callback({ msgid: null, text: "no id" });
    await shown("answer three");
    expect(lab.fake.visible().filter((v) => v.includes("answer one"))).toHaveLength(1);
  });

  it("nothing is dropped uncounted: an unknown frame, an event, a duplicate msgid and a callback while stopping each have a reason", async () => {
    const c = await lab.channel({ turns: () => [[text("answer one"), done]] });
    await subscribed();
    lab.fake.raw(JSON.stringify({ cmd: "aibot_future_callback", headers: { req_id: "f-1" }, body: {} }));
    lab.fake.event("enter_chat");
    lab.fake.callback({ msgid: "m-dup", text: "hello" });
    await shown("answer one");
    lab.fake.callback({ msgid: "m-dup", text: "hello" });
    const count = (reason: string) => c.dropLedger.count("wecom", reason);
    // Each callback frame has its own req_id (which the journal keeps to answer on), so WeCom's
    // redelivery is the same msgid with a changed payload; counted once, by the journal.
    await vi.waitFor(() => expect(count("redelivered_changed")).toBe(1));
    expect(count("duplicate")).toBe(0);
    expect(count("unknown_shape")).toBe(1);
    expect(count("event_unanswered")).toBe(1);
    await c.running.intake.stop();
    lab.fake.callback({ msgid: "m-late", text: "too late" });
    await vi.waitFor(() => expect(count("stopping")).toBe(1));
    expect(c.audit.find("inbound", "dropped").map((e) => e.fields.reason)).toEqual(
      expect.arrayContaining(["unknown_shape", "event_unanswered", "stopping"]),
    );
    expect(c.audit.find("intake", "dropped").map((e) => e.fields.reason)).toEqual(["redelivered_changed"]);
  });

  it("dedupes AFTER authorization: a stranger's frame cannot occupy a msgid an allowed user's message carries", async () => {
    const c = await lab.channel({ turns: () => [[text("answered the colleague"), done]] });
    await subscribed();
    lab.fake.callback({ userid: "wangwu", msgid: "m-shared", text: "squatting" });
    await vi.waitFor(() => expect(c.audit.find("inbound", "denied")).toHaveLength(1));
    lab.fake.callback({ userid: OWNER, msgid: "m-shared", text: "hello" });
    await shown("answered the colleague");
    expect(c.audit.find("intake", "dropped")).toEqual([]);
  });

  it("a repeated msgid gets one answer across a kill and restart", async () => {
    const a = await lab.channel({ turns: () => [[text("first answer"), done]] });
    await subscribed();
    const first = lab.fake.callback({ msgid: "m-9", text: "hello" });
    await shown("first answer");
    await vi.waitFor(async () => expect(await a.parley.intake.countUnfinished()).toBe(0));
    await a.crash();
    const b = await lab.channel({ home: a.home, turns: () => [[text("answered AGAIN"), done]] });
    await subscribed();
    // WeCom delivers the same frame again.
    lab.fake.callback({ msgid: "m-9", text: "hello", reqId: first.reqId });
    await vi.waitFor(() =>
      expect(b.audit.find("intake", "dropped").map((r) => r.fields.reason)).toEqual(["redelivered"]),
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(b.providers.size).toBe(0);
    expect(lab.fake.visible().join("\n")).not.toContain("AGAIN");
  });

  it("a turn that failed gives its msgid back: WeCom's redelivery is answered", async () => {
    const c = await lab.channel({
      makeProvider: (_key, n) =>
        n === 1
          ? new ScriptedProvider([], { startError: "agent rejected session/new: not logged in" })
          : new ScriptedProvider([[text("answered on the redelivery"), done]]),
    });
    await subscribed();
    lab.fake.callback({ msgid: "m-5", text: "please" });
    await shown("The agent could not be started");
    await vi.waitFor(() => expect(c.audit.find("intake", "revoked")).toHaveLength(1));
    lab.fake.callback({ msgid: "m-5", text: "please" });
    await shown("answered on the redelivery");
    expect(c.audit.find("intake", "dropped")).toEqual([]);
  });
});

describe("a restart", () => {
  it("a turn cut short by a crash is answered after the restart, in the bubble it had started: no duplicate, nothing lost", async () => {
    const a = await lab.channel({
      turns: () => [[text("working on it…"), { delayMs: 60_000 }]],
      provider: { timers: new ManualClock() },
    });
    await subscribed();
    lab.fake.callback({ msgid: "m-crash", text: "do the thing" });
    await shown("working on it…");
    expect(await a.parley.intake.countUnfinished()).toBe(1);
    await a.crash();
    const b = await lab.channel({ home: a.home, turns: () => [[text("the whole answer"), done]] });
    await subscribed();
    await shown("the whole answer");
    await vi.waitFor(async () => expect(await b.parley.intake.countUnfinished()).toBe(0));
    // The resumed turn names its bubble as the first run did: the same bubble now holds the answer.
    expect(lab.fake.bubbles()).toHaveLength(1);
    expect(lab.fake.visible().join("\n")).not.toContain("working on it");
    expect(lab.fake.visible().filter((v) => v.includes("the whole answer"))).toHaveLength(1);
  });
});

describe("the connection", () => {
  it("a wrong secret shows unhealthy with its reason in seconds, recorded for doctor; retrying goes on", async () => {
    const c = await lab.channel({
      env: { WECOM_SECRET: "wrong-secret" },
      overrides: { client: { reconnectBaseMs: 50, reconnectMaxMs: 100 } },
    });
    await vi.waitFor(
      () =>
        expect(c.running.client.health).toMatchObject({ state: "unhealthy", reason: "subscribe_refused" }),
      {
        timeout: 3000,
      },
    );
    expect(readHealth(c.home)).toMatchObject({ state: "unhealthy", reason: "subscribe_refused" });
    const attempts = lab.fake.subscribes;
    await vi.waitFor(() => expect(lab.fake.subscribes).toBeGreaterThan(attempts + 1), { timeout: 3000 });
    lab.fake.secret = "wrong-secret";
    await vi.waitFor(() => expect(c.running.client.health.state).toBe("healthy"), { timeout: 3000 });
    expect(readHealth(c.home)?.state).toBe("healthy");
    expect(JSON.stringify(c.logger.entries)).not.toContain("wrong-secret");
  });
});

describe("approvals", () => {
  // Beyond the spec: its WeCom has no decider (a prompt could only time out to deny); here the
  // kit's typed-reply floor answers it, with the prompt sent as a push.
  it("beyond the spec's decider-less WeCom: a typed 1 approves only while a prompt is open", async () => {
    const c = await lab.channel({
      turns: () => [
        [text("one")],
        {
          steps: [permissionRequest({ title: "rm -rf build" })],
          onPermission: { approve: [text("removed"), done], deny: [text("kept"), done] },
        },
      ],
    });
    await subscribed();
    // No prompt open: "1" is an ordinary message to the agent.
    lab.fake.callback({ text: "1" });
    await shown("one");
    const provider = [...c.providers.values()][0];
    expect(provider?.prompts).toEqual(["1"]);
    await vi.waitFor(() => expect(c.sessions.isBusy([...c.providers.keys()][0] ?? "")).toBe(false));
    lab.fake.callback({ text: "clean up" });
    await shown("Permission needed:** rm -rf build");
    lab.fake.callback({ text: "1" });
    await shown("removed");
    await shown("🔐 rm -rf build: ✅ Approved (this once)");
    expect(provider?.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
  });

  it("no verdict approves after a restart: the prompt died with the process", async () => {
    const a = await lab.channel({ turns: () => [{ steps: [permissionRequest({ title: "deploy" })] }] });
    await subscribed();
    lab.fake.callback({ text: "deploy it" });
    await shown("Permission needed:** deploy");
    await a.crash();
    const b = await lab.channel({
      home: a.home,
      // The restarted agent gets the resumed message, then "1" as an ordinary message.
      turns: () => [
        [text("resumed answer"), done],
        [text("got 1"), done],
      ],
    });
    await subscribed();
    await shown("resumed answer");
    lab.fake.callback({ text: "1" });
    await shown("got 1");
    const provider = [...b.providers.values()][0];
    expect(provider?.answers).toEqual([]);
    expect(provider?.prompts.at(-1)).toBe("1");
  });
});

describe("files", () => {
  it("an attachment captioned /new is ingested and resets nothing; its plaintext is deleted after the turn", async () => {
    const tmpRoot = mkdtempSync(join(tmpdir(), "parley-wecom-ingest-"));
    const c = await lab.channel({
      turns: () => [
        [text("before"), done],
        [text("saw the picture"), done],
      ],
      ingestTmpRoot: tmpRoot,
    });
    await subscribed();
    lab.fake.callback({ text: "hi" });
    await shown("before");
    const key = [...c.providers.keys()][0] ?? "";
    await vi.waitFor(() => expect(c.sessions.isBusy(key)).toBe(false));
    const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(64, 1)]);
    lab.fake.callback({
      msgtype: "mixed",
      mixed: [
        { msgtype: "text", text: { content: "/new" } },
        { msgtype: "image", image: lab.fake.hostMedia(png) },
      ],
    });
    await shown("saw the picture");
    expect(c.running.hub.keyOf({ userid: OWNER })).toBe(key);
    const provider = c.providers.get(key);
    expect(JSON.stringify(provider?.prompts.at(-1))).toContain("/new");
    expect(JSON.stringify(provider?.prompts.at(-1))).toMatch(/image/);
    await vi.waitFor(() => expect(c.sessions.isBusy(key)).toBe(false));
    expect(readdirSync(tmpRoot)).toEqual([]);
  });

  it("a voice message is its transcript; enter_chat and feedback events are dropped on purpose", async () => {
    const c = await lab.channel({ turns: () => [[text("heard you"), done]] });
    await subscribed();
    lab.fake.event("enter_chat");
    lab.fake.event("feedback_event");
    lab.fake.callback({ msgtype: "voice", voice: "what is the weather" });
    await shown("heard you");
    expect([...c.providers.values()][0]?.prompts).toEqual(["what is the weather"]);
    expect(lab.fake.visible()).toHaveLength(1);
  });
});

describe("replies and the mid-turn", () => {
  it("command replies are pushes; nothing goes on an inbound req_id after its answer", async () => {
    const c = await lab.channel({ turns: () => [[text("the answer"), done]] });
    await subscribed();
    const { reqId } = lab.fake.callback({ text: "hello" });
    await shown("the answer");
    const frames = lab.fake.framesOf("aibot_respond_msg").length;
    lab.fake.callback({ text: "/status" });
    await vi.waitFor(() => expect(lab.fake.pushes.length).toBeGreaterThan(0));
    expect(lab.fake.pushes[0]?.accepted).toBe(true);
    // The context notice and the status reply travel as pushes; no frame went back on the answered req_id.
    expect(lab.fake.framesOf("aibot_respond_msg").length).toBe(frames);
    expect(lab.fake.framesOf("aibot_respond_msg").every((f) => f.reqId === reqId)).toBe(true);
    expect(c.audit.find("inbound", "denied")).toEqual([]);
  });

  it("a reply no push can carry falls back to a sealed bubble on its own message, then to its response_url", async () => {
    const c = await lab.channel();
    await subscribed();
    // Every push refused (the budget spent elsewhere): the /help reply seals a bubble on /help's req_id.
    for (let i = 0; i < 10; i++) lab.fake.refuseNext((cmd) => cmd === "aibot_send_msg", 45_009);
    const help = lab.fake.callback({ text: "/help" });
    await vi.waitFor(() => expect(lab.fake.framesOf("aibot_respond_msg").length).toBeGreaterThan(0));
    const frame = lab.fake.framesOf("aibot_respond_msg")[0];
    expect(frame?.reqId).toBe(help.reqId);
    expect(JSON.stringify(frame?.body)).toContain('"finish":true');
    await shown("reply 1 (approve) or 2 (deny)");
    // Its req_id routes no more: the response_url is the last resort.
    const status = lab.fake.callback({ text: "/status" });
    lab.fake.makeUnroutable(status.reqId);
    for (let i = 0; i < 10; i++) lab.fake.refuseNext((cmd) => cmd === "aibot_send_msg", 45_009);
    await vi.waitFor(() => expect(lab.fake.posts.filter((p) => p.accepted)).toHaveLength(1));
    expect(c.audit.find("inbound", "denied")).toEqual([]);
  });

  it("a message mid-turn steers (with a one-shot notice); files and /queue are refused with a resend prompt", async () => {
    const c = await lab.channel({
      turns: () => [[text("working "), { delayMs: 400 }, text("done."), done]],
    });
    await subscribed();
    lab.fake.callback({ text: "start" });
    await shown("working");
    lab.fake.callback({ text: "also this" });
    await shown(STEER_NOTICE);
    lab.fake.callback({ text: "/queue later please" });
    await shown("can't keep this one for later");
    lab.fake.callback({ msgtype: "image", media: lab.fake.hostMedia(Buffer.alloc(40, 1)) });
    await shown("Files can't join an answer in progress");
    await shown("done.");
    const provider = [...c.providers.values()][0];
    expect(provider?.steers).toEqual(["also this"]);
    expect(provider?.prompts).toEqual(["start"]);
    expect(c.running.hub.router.receiptQueue([...c.providers.keys()][0] ?? "").size).toBe(0);
  });
});

describe("a planted credential", () => {
  it("split across two chunks or two reasoning chunks never reaches a frame, a push or a response_url body", async () => {
    const half = [SECRET.slice(0, 10), SECRET.slice(10)];
    await lab.channel({
      turns: () => [
        [
          { type: "thinking", text: `the key is ${half[0]}` },
          { type: "thinking", text: `${half[1]} keep quiet` },
          text(`Your key: ${half[0]}`),
          text(`${half[1]} is set.`),
          done,
        ],
      ],
    });
    await subscribed();
    // Every push refused: the answer's head falls back to the response_url.
    for (let i = 0; i < 5; i++) lab.fake.refuseNext((cmd) => cmd === "aibot_send_msg", 40_051);
    lab.fake.refuseNext(
      (cmd, body) => cmd === "aibot_respond_msg" && JSON.stringify(body).includes('"finish":true'),
      40_050,
    );
    lab.fake.callback({ text: "what is my key?" });
    await vi.waitFor(() => expect(lab.fake.posts.length).toBeGreaterThan(0), { timeout: 5000 });
    const all = wireTexts(lab.fake).join("\n");
    expect(all).toContain("is set.");
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain(half[1]);
  });
});

describe("/yolo", () => {
  it("a guest may not /yolo; the owner may", async () => {
    const c = await lab.channel();
    await subscribed();
    lab.fake.callback({ userid: GUEST, text: "/yolo on" });
    await shown("Only the owner of this bot can switch auto-approve on.");
    lab.fake.callback({ userid: OWNER, text: "/yolo on 30m" });
    await shown("Auto-approve is ON for 30m");
    expect(c.audit.find("auto_approve", "granted")[0]?.fields.caller).toBe(OWNER);
  });
});

describe("stop", () => {
  it("settles turns before the socket closes", async () => {
    const c = await startWeComChannel(lab.fake, {
      turns: () => [[text("half "), { delayMs: 200 }, text("rest"), done]],
    });
    await subscribed();
    lab.fake.callback({ text: "go" });
    await shown("half");
    await c.stop();
    // The cut-short turn ended on screen before the connection went.
    expect(lab.fake.bubbles().every((b) => b.finished)).toBe(true);
  });
});

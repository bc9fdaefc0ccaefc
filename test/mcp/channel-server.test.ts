/**
 * `parley channel-server` as an agent host meets it: the real binary spawned over stdio by the MCP
 * SDK's client (the host side), with the real grammY client pointed at the fake Bot API and the
 * real web chat behind it. Pushes for allow-listed people only, body-free; the body read through
 * channel_read as untrusted content; reply through the Telegram renderer (split, redacted); the
 * permission relay answered from the chat or denied on timeout; forged, unknown-version and
 * cross-conversation locators refused and audited; coalescing into one push with meta.count; and a
 * crash (SIGKILL) and respawn that re-pushes nothing already pushed, pushes what came meanwhile,
 * and still resolves the old locators.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { BIN, freshHome } from "../helpers/spawn-parley.js";
import { WebChatSocket } from "../helpers/webchat-socket.js";

const OWNER = 4242;
const STRANGER = 777;
const SECRET = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";

interface Push {
  method: string;
  params: { content?: string; meta?: Record<string, string>; request_id?: string; behavior?: string };
}

interface Host {
  client: Client;
  /** Anything on stdout that is not the protocol (a log line, say) lands here. */
  errors: Error[];
  pushes: Push[];
  stderr: () => string;
  pid: number;
  close: () => Promise<void>;
}

let fake: FakeTelegram;
const hosts: Host[] = [];

beforeEach(async () => {
  fake = await FakeTelegram.start({ lifetimeMs: 90_000 });
});

afterEach(async () => {
  for (const h of hosts.splice(0)) await h.close();
  await fake.stop();
});

function configure(home: string, extra: Record<string, unknown> = {}): void {
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      telegram: { allowedUserIds: [OWNER], owner: String(OWNER), apiRoot: fake.apiRoot },
      channelServer: { coalesceMs: 400, permissionTimeoutSeconds: 5 },
      ...extra,
    }),
  );
}

async function connectHost(home: string): Promise<Host> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "channel-server", "--port", "0"],
    cwd: home,
    env: { PATH: process.env.PATH ?? "", HOME: home, PARLEY_HOME: home, TELEGRAM_BOT_TOKEN: fake.token },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d) => {
    err += String(d);
  });
  const client = new Client({ name: "test-host", version: "0.0.1" });
  const pushes: Push[] = [];
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  client.fallbackNotificationHandler = async (n) => {
    pushes.push(n as Push);
  };
  await client.connect(transport);
  const host: Host = {
    client,
    errors,
    pushes,
    stderr: () => err,
    pid: transport.pid ?? 0,
    close: async () => {
      await client.close().catch(() => undefined);
    },
  };
  hosts.push(host);
  return host;
}

async function until(what: string, test: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const channelPushes = (h: Host) => h.pushes.filter((p) => p.method === "notifications/claude/channel");
const verdicts = (h: Host) => h.pushes.filter((p) => p.method === "notifications/claude/channel/permission");

async function call(h: Host, name: string, args: Record<string, unknown>) {
  const r = (await h.client.callTool({ name, arguments: args })) as {
    content: { text: string }[];
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
  };
  return {
    text: r.content.map((c) => c.text).join("\n"),
    isError: r.isError === true,
    data: r.structuredContent,
  };
}

function auditOf(home: string): { operation: string; outcome: string; fields: Record<string, unknown> }[] {
  return readFileSync(join(home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

async function started(h: Host): Promise<void> {
  await h.client.listTools();
  await fake.waitFor(() => fake.callsOf("getUpdates").length > 0, 15_000, "the first poll");
}

describe("parley channel-server", () => {
  it("pushes an allow-listed Telegram message (body-free), none for a stranger; reply lands split and redacted", async () => {
    const home = freshHome();
    configure(home);
    const host = await connectHost(home);
    expect(host.client.getServerCapabilities()?.experimental).toMatchObject({
      "claude/channel": {},
      "claude/channel/permission": {},
    });
    expect(host.client.getInstructions()).toContain("channel_read");
    const names = (await host.client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(
      [
        "channel_read",
        "channel_respond",
        "edit_message",
        "fetch_messages",
        "react",
        "reply",
        "send_file",
      ].sort(),
    );
    await started(host);

    fake.pushMessage({ id: STRANGER }, "let me in");
    fake.pushMessage({ id: OWNER }, "the launch code is banana");
    await until("a push", () => channelPushes(host).length > 0);
    await new Promise((r) => setTimeout(r, 800));
    const pushes = channelPushes(host);
    expect(pushes).toHaveLength(1);
    const meta = pushes[0]?.params.meta ?? {};
    expect(meta).toMatchObject({
      source: "telegram",
      user_id: String(OWNER),
      chat_type: "direct",
      count: "1",
    });
    // Body-free: who, where and a locator; never the words.
    expect(pushes[0]?.params.content).not.toContain("banana");
    for (const key of Object.keys(meta)) expect(key).toMatch(/^[A-Za-z0-9_]+$/);
    expect(meta.locator).toMatch(/^telegram:v1:[A-Za-z0-9_-]+$/);
    expect(
      auditOf(home)
        .filter((r) => r.operation === "inbound" && r.outcome === "denied")
        .map((r) => r.fields.user),
    ).toEqual([String(STRANGER)]);

    const read = await call(host, "channel_read", { locator: meta.locator });
    expect(read.isError).toBe(false);
    expect(read.text).toContain("the launch code is banana");
    expect(read.text).toMatch(/untrusted/i);
    expect(read.text).toContain(`from user ${OWNER}`);
    expect(read.text).not.toContain("let me in");

    const before = fake.sentMessages(OWNER).length;
    const long = `${"word ".repeat(1200)}\n\nthe key is ${SECRET}\n\n${"more ".repeat(200)}`;
    const replied = await call(host, "reply", { chat_id: meta.chat_id, text: long });
    expect(replied.isError).toBe(false);
    const sent = fake.sentMessages(OWNER).slice(before);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    for (const m of sent) expect([...m.visible].length).toBeLessThanOrEqual(4096);
    const all = sent.map((m) => m.visible).join("");
    expect(all).not.toContain(SECRET);
    expect(all).toContain("the key is");
    expect(fake.sentMessages(STRANGER)).toHaveLength(0);

    // edit_message edits the reply in place; react reacts on the person's message.
    const sentId = String(replied.data?.message_id);
    const edited = await call(host, "edit_message", {
      chat_id: meta.chat_id,
      message_id: sentId,
      text: "short now",
    });
    expect(edited.isError).toBe(false);
    expect(fake.sentMessages(OWNER).some((m) => m.visible === "short now")).toBe(true);
    expect(
      (await call(host, "react", { chat_id: meta.chat_id, message_id: meta.locator, emoji: "👍" })).isError,
    ).toBe(false);
    expect(fake.callsOf("setMessageReaction").length).toBeGreaterThan(0);
    // stdout carried nothing but the protocol (logs and the web chat URL went to stderr).
    expect(host.errors).toEqual([]);
    expect(host.stderr()).toMatch(/http:\/\/127\.0\.0\.1:\d+\/\?token=/);
  }, 60_000);

  it("refuses forged, unknown-version and other-conversation locators, with reasons, audited", async () => {
    const home = freshHome();
    configure(home);
    const host = await connectHost(home);
    await started(host);
    const WEB = await webChatOf(host);
    fake.pushMessage({ id: OWNER }, "first");
    await until("the telegram push", () => channelPushes(host).length === 1);
    WEB.say("from the web");
    await until("the web push", () => channelPushes(host).length === 2);
    const tg = channelPushes(host)[0]?.params.meta ?? {};
    const web = channelPushes(host)[1]?.params.meta ?? {};
    expect(web.source).toBe("webchat");
    // A reply to the web chat lands there, through the web chat's renderer.
    const answered = await call(host, "channel_respond", { locator: web.locator, response: "hello **web**" });
    expect(answered.isError).toBe(false);
    await WEB.waitFor((b) => b.role !== "user" && b.text.includes("hello"), 10_000, "the reply on the page");
    WEB.close();

    const locator = tg.locator as string;
    // One character of the signed data changed (mid-string: every bit there is significant).
    const at = locator.indexOf(":v1:") + 10;
    const flipped = locator[at] === "A" ? "B" : "A";
    const forged = await call(host, "channel_read", {
      locator: `${locator.slice(0, at)}${flipped}${locator.slice(at + 1)}`,
    });
    expect(forged).toMatchObject({ isError: true });
    expect(forged.text).toMatch(/^Refused: the locator's signature does not verify/);
    const future = await call(host, "channel_read", { locator: locator.replace(":v1:", ":v9:") });
    expect(future).toMatchObject({ isError: true });
    expect(future.text).toMatch(/version/i);
    const crossed = await call(host, "reply", { chat_id: web.chat_id, text: "hi", reply_to: tg.locator });
    expect(crossed).toMatchObject({ isError: true });
    expect(crossed.text).toMatch(/another conversation/);
    const wrongKind = await call(host, "channel_read", { locator: tg.chat_id });
    expect(wrongKind).toMatchObject({ isError: true });
    const refusals = () =>
      auditOf(home)
        .filter((r) => r.operation === "channel_server.locator")
        .map((r) => r.fields.reason);
    await until("the refusals audited", () => refusals().length === 4);
    expect(refusals()).toEqual(["forged", "unknown_version", "other_conversation", "wrong_kind"]);
    // Nothing reached either chat from a refused call.
    expect(fake.sentMessages(OWNER).some((m) => m.visible === "hi")).toBe(false);
  }, 60_000);

  it("relays a permission request into the chat: a typed yes allows, a button denies, no answer in time denies", async () => {
    const home = freshHome();
    configure(home);
    const host = await connectHost(home);
    await started(host);
    fake.pushMessage({ id: OWNER }, "please run the tests");
    await until("the push", () => channelPushes(host).length === 1);

    await host.client.notification({
      method: "notifications/claude/channel/permission_request",
      params: {
        request_id: "abcde",
        tool_name: "Bash",
        description: "run the tests",
        input_preview: "npm test",
      },
    });
    await fake.waitFor(
      () =>
        fake.sentMessages(OWNER).some((m) => m.visible.includes("Bash") && m.visible.includes("yes abcde")),
      10_000,
      "the prompt in the chat",
    );
    fake.pushMessage({ id: OWNER }, "yes abcde");
    await until("the verdict", () => verdicts(host).length === 1);
    expect(verdicts(host)[0]?.params).toEqual({ request_id: "abcde", behavior: "allow" });
    // The typed answer is the relay's: it is not pushed to the host as a message.
    expect(channelPushes(host)).toHaveLength(1);

    // A press on the prompt's Deny button answers too (its callback data carries the prompt's nonce).
    await host.client.notification({
      method: "notifications/claude/channel/permission_request",
      params: { request_id: "kmnop", tool_name: "Edit", description: "edit a file", input_preview: "y" },
    });
    await fake.waitFor(
      () => fake.sentMessages(OWNER).some((m) => m.visible.includes("yes kmnop") && m.replyMarkup),
      10_000,
      "the prompt with buttons",
    );
    const prompt = fake.sentMessages(OWNER).find((m) => m.visible.includes("yes kmnop"));
    if (!prompt) throw new Error("no prompt");
    const markup = prompt.replyMarkup as { inline_keyboard: { text: string; callback_data: string }[][] };
    const buttons = markup.inline_keyboard.flat();
    const deny = buttons.find((b) => /deny/i.test(b.text));
    expect(deny).toBeDefined();
    fake.pushCallback({ id: OWNER }, prompt.messageId, deny?.callback_data as string);
    await until("the button's verdict", () => verdicts(host).length === 2);
    expect(verdicts(host)[1]?.params).toEqual({ request_id: "kmnop", behavior: "deny" });

    // Someone else's typed answer does not count; nobody answering denies.
    await host.client.notification({
      method: "notifications/claude/channel/permission_request",
      params: { request_id: "fghij", tool_name: "Write", description: "write a file", input_preview: "x" },
    });
    await fake.waitFor(
      () => fake.sentMessages(OWNER).some((m) => m.visible.includes("yes fghij")),
      10_000,
      "the second prompt",
    );
    fake.pushMessage({ id: STRANGER }, "yes fghij");
    await until("the timeout verdict", () => verdicts(host).length === 3, 12_000);
    expect(verdicts(host)[2]?.params).toEqual({ request_id: "fghij", behavior: "deny" });
    // The audit file is written a moment after the verdict goes out.
    await until(
      "the audit lines",
      () => auditOf(home).filter((r) => r.operation === "tool_permission").length === 3,
    );
    expect(
      auditOf(home)
        .filter((r) => r.operation === "tool_permission")
        .map((r) => [r.outcome, r.fields.request]),
    ).toEqual([
      ["approved", "abcde"],
      ["denied", "kmnop"],
      ["denied", "fghij"],
    ]);
    const timedOut = auditOf(home).find(
      (r) => r.operation === "tool_permission" && r.fields.request === "fghij",
    );
    expect(timedOut?.fields.reason).toBe("timeout");
  }, 60_000);

  it("coalesces messages that arrive together into one push with meta.count", async () => {
    const home = freshHome();
    configure(home);
    const host = await connectHost(home);
    await started(host);
    fake.pushMessage({ id: OWNER }, "one");
    fake.pushMessage({ id: OWNER }, "two");
    fake.pushMessage({ id: OWNER }, "three");
    await until("a push", () => channelPushes(host).length > 0);
    await new Promise((r) => setTimeout(r, 800));
    expect(channelPushes(host)).toHaveLength(1);
    const meta = channelPushes(host)[0]?.params.meta ?? {};
    expect(meta.count).toBe("3");
    const read = await call(host, "channel_read", { locator: meta.locator });
    expect(read.text.indexOf("one")).toBeLessThan(read.text.indexOf("two"));
    expect(read.text.indexOf("two")).toBeLessThan(read.text.indexOf("three"));
    // The web chat's answer path: channel_respond marks it handled.
    const responded = await call(host, "channel_respond", {
      locator: meta.locator,
      response: "got all three",
    });
    expect(responded).toMatchObject({ isError: false, data: { replied: true, handled: true } });
    expect(fake.sentMessages(OWNER).some((m) => m.visible === "got all three")).toBe(true);
  }, 60_000);

  it("a scheduled prompt that comes due is a wake in the conversation that scheduled it", async () => {
    const home = freshHome();
    configure(home);
    const host = await connectHost(home);
    await started(host);
    fake.pushMessage({ id: OWNER }, "/at +2s check the build");
    await fake.waitFor(
      () => fake.sentMessages(OWNER).some((m) => /Scheduled/.test(m.visible)),
      10_000,
      "scheduled",
    );
    // The command was parley's: no push for it.
    expect(channelPushes(host)).toHaveLength(0);
    await until("the wake", () => channelPushes(host).length === 1, 10_000);
    const wake = channelPushes(host)[0]?.params ?? {};
    expect(wake.content).toMatch(/^Scheduled prompt \S+ \(once, run 1\) is due on telegram\./);
    expect(wake.meta).toMatchObject({ source: "telegram", user_id: "schedule", chat_type: "direct" });
    const read = await call(host, "channel_read", { locator: wake.meta?.locator });
    expect(read.text).toContain("check the build");
    expect(read.text).toContain("a scheduled prompt");
    await call(host, "channel_respond", { locator: wake.meta?.locator, response: "the build is green" });
    expect(fake.sentMessages(OWNER).filter((m) => m.visible === "the build is green")).toHaveLength(1);
  }, 60_000);

  it("after a crash and a respawn: nothing pushed twice, what came meanwhile is pushed, old locators still resolve", async () => {
    const home = freshHome();
    configure(home);
    const first = await connectHost(home);
    await started(first);
    fake.pushMessage({ id: OWNER }, "before the crash");
    await until("the first push", () => channelPushes(first).length === 1);
    const old = channelPushes(first)[0]?.params.meta ?? {};
    process.kill(first.pid, "SIGKILL");
    await until("the server gone", () => {
      try {
        process.kill(first.pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    fake.pushMessage({ id: OWNER }, "while it was down");

    const second = await connectHost(home);
    await until("the push of what came meanwhile", () => channelPushes(second).length > 0, 20_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(channelPushes(second)).toHaveLength(1);
    const fresh = channelPushes(second)[0]?.params.meta ?? {};
    expect((await call(second, "channel_read", { locator: fresh.locator })).text).toContain(
      "while it was down",
    );
    const again = await call(second, "channel_read", { locator: old.locator });
    expect(again.isError).toBe(false);
    expect(again.text).toContain("before the crash");
    expect(
      (await call(second, "channel_respond", { locator: old.locator, response: "late answer" })).isError,
    ).toBe(false);
    expect(fake.sentMessages(OWNER).filter((m) => m.visible === "late answer")).toHaveLength(1);
  }, 60_000);
});

/** The web chat the channel server started (its URL is announced on stderr, never stdout). */
async function webChatOf(host: Host): Promise<WebChatSocket> {
  await until("the web chat URL", () => /http:\/\/\S+\?token=\S+/.test(host.stderr()));
  const url = /http:\/\/\S+\?token=\S+/.exec(host.stderr())?.[0] as string;
  return WebChatSocket.open(url, "host-test");
}

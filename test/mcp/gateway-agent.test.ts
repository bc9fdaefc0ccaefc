/**
 * Gateway mode, end to end: the real `parley start` drives a real ACP agent subprocess that takes the
 * MCP server parley offers at session/new (`parley agent-tools`, spawned by the agent) and calls its
 * tools, with the real grammY client pointed at the fake Bot API and the real web chat. send_message
 * reaches the person's own chat, redacted; to a target the allow-list does not cover it is refused,
 * the agent reads the refusal, and the refusal is audited. A web chat session /linked to Telegram is
 * mirrored there. A scheduled prompt due while parley was down fires after the restart, once, in
 * the conversation that scheduled it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeTelegram } from "../fakes/telegram/server.js";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { freshHome, startParley } from "../helpers/spawn-parley.js";
import { WebChatSocket } from "../helpers/webchat-socket.js";

const TOOL_AGENT = fileURLToPath(new URL("../fakes/acp/tool-agent.mjs", import.meta.url));
const OWNER = 4242;
const STRANGER = 999;
const SECRET = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
/** A 1x1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

let fake: FakeTelegram;
const running: RunningParley[] = [];

beforeEach(async () => {
  fake = await FakeTelegram.start({ lifetimeMs: 90_000 });
});

afterEach(async () => {
  for (const p of running.splice(0)) await p.stop();
  await fake.stop();
});

function configure(home: string): void {
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      agent: { command: process.execPath, args: [TOOL_AGENT] },
      telegram: { allowedUserIds: [OWNER], owner: String(OWNER), apiRoot: fake.apiRoot },
      targets: { phone: `telegram:dm:${OWNER}`, stranger: `telegram:dm:${STRANGER}` },
    }),
  );
}

async function start(home: string): Promise<RunningParley> {
  const p = await startParley([], { home, env: { TELEGRAM_BOT_TOKEN: fake.token } });
  running.push(p);
  return p;
}

function audit(home: string): { operation: string; outcome: string; fields: Record<string, unknown> }[] {
  return readFileSync(join(home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

const visible = (chat: number) => fake.sentMessages(chat).map((m) => m.visible);

describe("agent tools in gateway mode", () => {
  it("send_message reaches the person's own chat, redacted; to a stranger it is refused and audited", async () => {
    const home = freshHome();
    configure(home);
    await start(home);
    await fake.waitFor(() => fake.callsOf("getUpdates").length > 0, 15_000, "the first poll");

    fake.pushMessage({ id: OWNER }, `call send_message ${JSON.stringify({ text: `heads-up: ${SECRET}` })}`);
    await fake.waitFor(
      () => visible(OWNER).some((v) => v.startsWith("tool ok")),
      20_000,
      "the agent's answer after its send",
    );
    const sent = visible(OWNER);
    // The agent's own message landed as its own message, with the credential masked.
    expect(sent.filter((v) => v.startsWith("heads-up:"))).toHaveLength(1);
    expect(sent.join("\n")).not.toContain(SECRET);

    fake.pushMessage(
      { id: OWNER },
      `call send_message ${JSON.stringify({ text: "hello stranger", target: "stranger" })}`,
    );
    await fake.waitFor(
      () => visible(OWNER).some((v) => v.startsWith("tool error")),
      20_000,
      "the refusal the agent read",
    );
    expect(visible(OWNER).find((v) => v.startsWith("tool error"))).toMatch(/not delivered/i);
    expect(fake.sentMessages(STRANGER)).toHaveLength(0);
    const refusals = audit(home).filter(
      (r) => r.operation.startsWith("channel.proactive_send") && r.outcome !== "sent",
    );
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.some((r) => r.fields.target === "stranger")).toBe(true);
  }, 60_000);

  it("send_file sends an image from the agent's folder; a path outside it is refused", async () => {
    const home = freshHome();
    configure(home);
    // parley runs the agent in its own working folder (here the data home).
    writeFileSync(join(home, "chart.png"), PNG);
    await start(home);
    await fake.waitFor(() => fake.callsOf("getUpdates").length > 0, 15_000, "the first poll");
    fake.pushMessage(
      { id: OWNER },
      `call send_file ${JSON.stringify({ path: "chart.png", caption: "the chart" })}`,
    );
    await fake.waitFor(() => visible(OWNER).some((v) => v.startsWith("tool ok")), 20_000, "the file sent");
    expect(fake.callsOf("sendPhoto").filter((c) => c.ok)).toHaveLength(1);
    expect(visible(OWNER)).toContain("the chart");

    fake.pushMessage({ id: OWNER }, `call send_file ${JSON.stringify({ path: "/etc/hostname" })}`);
    await fake.waitFor(() => visible(OWNER).some((v) => v.startsWith("tool error")), 20_000, "the refusal");
    expect(visible(OWNER).find((v) => v.startsWith("tool error"))).toMatch(/File not sent/);
    expect(fake.callsOf("sendPhoto")).toHaveLength(1);
  }, 60_000);

  it("a web chat session linked to a Telegram target is mirrored there, through the egress", async () => {
    const home = freshHome();
    configure(home);
    const p = await start(home);
    // The web chat announces itself before Telegram has started: a link needs Telegram running.
    await fake.waitFor(() => fake.callsOf("getUpdates").length > 0, 15_000, "the first poll");
    const page = await WebChatSocket.open(p.url, "mirror-me");
    try {
      page.say("/link phone");
      await page.waitFor((b) => /Linked/.test(b.text), 15_000, "the link confirmed");
      page.say("what is the weather");
      await page.waitFor((b) => b.text.includes("echo: what is the weather"), 15_000, "the answer");
      await fake.waitFor(
        () => visible(OWNER).some((v) => v.includes("echo: what is the weather")),
        15_000,
        "the mirrored turn",
      );
      const mirrored = visible(OWNER).filter((v) => v.includes("echo: what is the weather"));
      expect(mirrored).toHaveLength(1);
      // Where it came from and the words it answered, quoted, then the answer.
      expect(mirrored[0]).toBe("🔁 from webchat\nwhat is the weather\n\necho: what is the weather");
    } finally {
      page.close();
    }
  }, 60_000);
});

describe("scheduled prompts", () => {
  it("/every, /jobs and /unschedule: scheduled, listed, cancelled; a too-short interval is refused", async () => {
    const home = freshHome();
    configure(home);
    await start(home);
    await fake.waitFor(() => fake.callsOf("getUpdates").length > 0, 15_000, "the first poll");
    const reply = async (text: string, test: RegExp) => {
      const before = visible(OWNER).length;
      fake.pushMessage({ id: OWNER }, text);
      await fake.waitFor(
        () =>
          visible(OWNER)
            .slice(before)
            .some((v) => test.test(v)),
        15_000,
        text,
      );
      return visible(OWNER)
        .slice(before)
        .find((v) => test.test(v)) as string;
    };
    expect(await reply("/every 10s too often", /shortest/)).toMatch(/1 minute/);
    const added = await reply("/every 1h check the build", /Scheduled/);
    const id = /Scheduled (\S+) every 1h/.exec(added)?.[1];
    expect(id).toBeDefined();
    expect(await reply("/jobs", /Scheduled prompts|No scheduled/)).toContain(`${id} every 1h`);
    expect(await reply(`/unschedule ${id}`, /Cancelled|No scheduled/)).toContain(`Cancelled ${id}`);
    expect(await reply("/jobs", /Scheduled prompts|No scheduled/)).toMatch(/^No scheduled prompts here/);
  }, 60_000);

  it("a job due while parley was down fires after the restart, once, in its own conversation", async () => {
    const home = freshHome();
    configure(home);
    const first = await start(home);
    await fake.waitFor(() => fake.callsOf("getUpdates").length > 0, 15_000, "the first poll");
    fake.pushMessage({ id: OWNER }, "/at +3s nightly summary");
    await fake.waitFor(() => visible(OWNER).some((v) => /scheduled/i.test(v)), 15_000, "the confirmation");
    await first.stop();
    running.splice(running.indexOf(first), 1);
    // The moment passes while parley is down.
    await new Promise((r) => setTimeout(r, 3500));
    expect(visible(OWNER).some((v) => v.includes("nightly summary") && !/Scheduled/.test(v))).toBe(false);

    const second = await start(home);
    await fake.waitFor(
      () => visible(OWNER).some((v) => v.includes("echo: nightly summary")),
      20_000,
      "the missed run, delivered",
    );
    await second.stop();
    running.splice(running.indexOf(second), 1);
    // A third start finds nothing left to run.
    await start(home);
    await fake.waitFor(() => fake.callsOf("getUpdates").length > 3, 15_000, "polling again");
    await new Promise((r) => setTimeout(r, 1500));
    expect(visible(OWNER).filter((v) => v.includes("echo: nightly summary"))).toHaveLength(1);
    expect(fake.sentMessages(STRANGER)).toHaveLength(0);
  }, 90_000);
});

/**
 * Issue 36's acceptance, on a real gateway in this process: the web chat and Telegram (grammY on
 * the loopback fake), the bundled demo agent, the operations side on a manual clock. /metrics is
 * parsed strictly after scripted turns and its counters moved by exactly what happened; /readyz
 * turns 503 while the Telegram fake is away and 200 when it is back; the web chat's owner is told
 * of the outage after alerts.channelDownMinutes (the manual clock, not real minutes) and of the
 * recovery once.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { telegramChannel } from "../../src/telegram/index.js";
import { webchatChannel } from "../../src/webchat/index.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { PageClient } from "../helpers/page-client.js";
import type { StartedGateway } from "./helpers.js";
import { get, scrape, startGateway } from "./helpers.js";
import { type Family, sampleValue, seriesOf } from "./prometheus-text.js";

const OWNER = 4242;
const clock = new ManualClock(Date.parse("2025-06-01T09:00:00Z"));
let fake: FakeTelegram;
let gw: StartedGateway;
let page: PageClient;

beforeAll(async () => {
  process.env.DEMO_AGENT_SPEED = "0";
  fake = await FakeTelegram.start({ lifetimeMs: 170_000 });
  gw = await startGateway({
    raw: { telegram: { allowedUserIds: [OWNER], apiRoot: fake.apiRoot } },
    env: { TELEGRAM_BOT_TOKEN: fake.token },
    channels: [webchatChannel, telegramChannel],
    clock,
  });
  page = new PageClient("ops-owner-page");
  await page.connect(gw.url);
}, 60_000);

afterAll(async () => {
  page?.close();
  await gw?.gateway.shutdown();
  await fake?.stop();
});

const turns = (m: Map<string, Family>, channel: string, outcome = "answered") =>
  sampleValue(m, "parley_turns_total", { channel, outcome });

/** Labels a parley metric may carry, and the values each may take: channel names and fixed words. */
const ALLOWED_LABELS: Record<string, RegExp> = {
  channel: /^(webchat|telegram|schedule)$/,
  outcome: /^(answered|failed|cancelled|delivery_failed)$/,
  verdict: /^(approved|auto_approved|denied)$/,
  kind: /^(turn|proactive)$/,
  incident: /^(channel_down|agent_failing|unclean_stop)$/,
  phase: /^(raised|recovered)$/,
  le: /^(\+Inf|\d+(\.\d+)?)$/,
};

describe("health and metrics of a running gateway", () => {
  it("/healthz and /readyz answer 200 once Telegram is connected", async () => {
    const health = await get(gw.base, "/healthz");
    expect(health).toMatchObject({ status: 200, text: "ok\n" });
    await vi.waitFor(async () => expect((await get(gw.base, "/readyz")).status).toBe(200), {
      timeout: 15_000,
      interval: 100,
    });
    expect(JSON.parse((await get(gw.base, "/readyz")).text)).toEqual({ ready: true });
  });

  it("counts exactly the turns, approvals and first tokens that happened, by channel", async () => {
    const before = await scrape(gw.base);
    expect(seriesOf(before, "parley_turns_total")).toEqual([]);
    expect(sampleValue(before, "parley_channel_connected", { channel: "telegram" })).toBe(1);
    expect(sampleValue(before, "parley_channel_connected", { channel: "webchat" })).toBe(1);

    // One turn on the web chat.
    page.say("hello");
    await vi.waitFor(async () => expect(turns(await scrape(gw.base), "webchat")).toBe(1), {
      timeout: 30_000,
      interval: 100,
    });
    // One on Telegram, then a tool turn there whose permission is approved by button.
    fake.pushMessage({ id: OWNER }, "hello");
    await vi.waitFor(async () => expect(turns(await scrape(gw.base), "telegram")).toBe(1), {
      timeout: 30_000,
      interval: 100,
    });
    fake.pushMessage({ id: OWNER }, "please use the tool");
    await fake.waitFor(
      () => fake.sentMessages(OWNER).some((m) => m.visible.includes("Permission needed")),
      30_000,
      "the permission prompt",
    );
    const prompt = fake.sentMessages(OWNER).find((m) => m.visible.includes("Permission needed"));
    const keyboard = prompt?.replyMarkup as { inline_keyboard: { callback_data: string }[][] };
    const approve = keyboard.inline_keyboard.flat().find((b) => b.callback_data.endsWith(":1"));
    fake.pushCallback({ id: OWNER }, prompt?.messageId ?? 0, approve?.callback_data ?? "");
    await vi.waitFor(async () => expect(turns(await scrape(gw.base), "telegram")).toBe(2), {
      timeout: 30_000,
      interval: 100,
    });

    const m = await scrape(gw.base);
    expect(
      seriesOf(m, "parley_turns_total")
        .map((s) => [s.labels.channel, s.labels.outcome, s.value])
        .sort(),
    ).toEqual([
      ["telegram", "answered", 2],
      ["webchat", "answered", 1],
    ]);
    for (const [channel, n] of [
      ["webchat", 1],
      ["telegram", 2],
    ] as const) {
      expect(sampleValue(m, "parley_turn_duration_seconds_count", { channel })).toBe(n);
      expect(sampleValue(m, "parley_turn_first_token_seconds_count", { channel })).toBe(n);
      expect(sampleValue(m, "parley_turn_first_token_seconds_bucket", { channel, le: "+Inf" })).toBe(n);
    }
    expect(seriesOf(m, "parley_approvals_total").map((s) => [s.labels.verdict, s.value])).toEqual([
      ["approved", 1],
    ]);
    expect(seriesOf(m, "parley_deliveries_failed_total")).toEqual([]);
    expect(seriesOf(m, "parley_channel_reconnects_total")).toEqual([]);
    expect(sampleValue(m, "parley_intake_backlog_messages")).toBe(0);
    expect(sampleValue(m, "parley_intake_backlog_oldest_age_seconds")).toBe(0);
    expect(sampleValue(m, "parley_queue_depth", { channel: "telegram" })).toBe(0);
    expect(sampleValue(m, "parley_conversations_working")).toBe(0);
    expect(sampleValue(m, "parley_agent_processes")).toBeGreaterThanOrEqual(1);
    // Two conversations, one agent session each.
    expect(sampleValue(m, "parley_agent_sessions")).toBe(2);
    expect(sampleValue(m, "parley_store_open")).toBe(1);
    // prom-client's default process metrics ride along.
    expect(m.get("process_cpu_user_seconds_total")?.type).toBe("counter");
    expect(m.get("nodejs_eventloop_lag_seconds")?.type).toBe("gauge");

    // No label carries what anyone wrote, or an id: only channel names and fixed words.
    for (const family of m.values()) {
      if (!family.name.startsWith("parley_")) continue;
      expect(family.help.length, family.name).toBeGreaterThan(0);
      for (const sample of family.samples)
        for (const [label, value] of Object.entries(sample.labels)) {
          expect(ALLOWED_LABELS[label], `${family.name}: label ${label}`).toBeDefined();
          expect(value, `${family.name}{${label}}`).toMatch(ALLOWED_LABELS[label] as RegExp);
        }
    }
  }, 120_000);

  it("/readyz is 503 while Telegram is away, the owner hears of it after the configured minutes, and of its return once", async () => {
    const alerts = () =>
      page.shown("system").filter((b) => b.text.includes("telegram has been disconnected"));
    const recoveries = () =>
      page.shown("system").filter((b) => b.text.includes("telegram is connected again"));
    await fake.pause();
    await vi.waitFor(async () => expect((await get(gw.base, "/readyz")).status).toBe(503), {
      timeout: 20_000,
      interval: 100,
    });
    const body = JSON.parse((await get(gw.base, "/readyz")).text) as { ready: boolean; notReady: string[] };
    expect(body.ready).toBe(false);
    expect(body.notReady).toHaveLength(1);
    expect(body.notReady[0]).toMatch(/^telegram: disconnected/);
    expect(sampleValue(await scrape(gw.base), "parley_channel_connected", { channel: "telegram" })).toBe(0);

    // Four minutes down: nobody is told yet (the default is five).
    await clock.advance(4 * 60_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(alerts()).toEqual([]);
    await clock.advance(60_000);
    await vi.waitFor(() => expect(alerts()).toHaveLength(1), { timeout: 5_000 });
    expect(alerts()[0]?.text).toContain("telegram has been disconnected for 5 minutes");
    // Once per incident: more minutes down tell nothing new.
    await clock.advance(30 * 60_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(alerts()).toHaveLength(1);

    await fake.resume();
    await vi.waitFor(async () => expect((await get(gw.base, "/readyz")).status).toBe(200), {
      timeout: 30_000,
      interval: 200,
    });
    await vi.waitFor(() => expect(recoveries()).toHaveLength(1), { timeout: 5_000 });
    expect(recoveries()[0]?.text).toContain("it was down for 35 minutes");
    await clock.advance(60 * 60_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(recoveries()).toHaveLength(1);
    expect(alerts()).toHaveLength(1);

    const m = await scrape(gw.base);
    expect(sampleValue(m, "parley_channel_reconnects_total", { channel: "telegram" })).toBe(1);
    expect(sampleValue(m, "parley_owner_alerts_total", { incident: "channel_down", phase: "raised" })).toBe(
      1,
    );
    expect(
      sampleValue(m, "parley_owner_alerts_total", { incident: "channel_down", phase: "recovered" }),
    ).toBe(1);
    // Audited: the raise and the recovery, each with how many owners heard it.
    await vi.waitFor(() => {
      const rows = readFileSync(join(gw.home, "audit.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { operation: string; outcome: string; fields: Record<string, unknown> })
        .filter((r) => r.operation === "ops.alert");
      expect(rows.map((r) => [r.outcome, r.fields.incident, r.fields.phase, r.fields.delivered])).toEqual([
        ["sent", "channel_down", "raised", 1],
        ["sent", "channel_down", "recovered", 1],
      ]);
    });
  }, 120_000);
});

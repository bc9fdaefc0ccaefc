/**
 * Owner alerts through a real gateway: an agent failing three turns in a row is told to the web chat
 * owner once, and its recovery once (a fake ACP agent that fails on the word "fail"); a start that
 * takes over a dead process's lock tells the Telegram owner, once, that the last stop was unclean;
 * alerts.enabled false tells nobody. Failed turns count in parley_turns_total as "failed".
 */

import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { telegramChannel } from "../../src/telegram/index.js";
import { webchatChannel } from "../../src/webchat/index.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { PageClient } from "../helpers/page-client.js";
import type { StartedGateway } from "./helpers.js";
import { freshHome, scrape, startGateway } from "./helpers.js";
import { sampleValue } from "./prometheus-text.js";

const FAIL_AGENT = fileURLToPath(new URL("../fakes/acp/fail-on-word.mjs", import.meta.url));
const agent = { command: process.execPath, args: [FAIL_AGENT], maxProcesses: 1 };

const started: StartedGateway[] = [];
const pages: PageClient[] = [];
const fakes: FakeTelegram[] = [];
afterEach(async () => {
  for (const p of pages.splice(0)) p.close();
  for (const g of started.splice(0)) await g.gateway.shutdown();
  for (const f of fakes.splice(0)) await f.stop();
});

const auditRows = (home: string) =>
  readFileSync(join(home, "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { operation: string; outcome: string; fields: Record<string, unknown> })
    .filter((r) => r.operation === "ops.alert");

describe("owner alerts from a running gateway", () => {
  it("tells the web chat owner when the agent fails three turns in a row, and when it answers again", async () => {
    const g = await startGateway({ raw: { agent }, channels: [webchatChannel] });
    started.push(g);
    const page = new PageClient("failing-agent");
    pages.push(page);
    await page.connect(g.url);
    const failed = async () =>
      sampleValue(await scrape(g.base), "parley_turns_total", { channel: "webchat", outcome: "failed" });
    const said = (needle: string) => page.shown("system").filter((b) => b.text.includes(needle));
    for (let i = 1; i <= 2; i += 1) {
      page.say(`please fail ${i}`, `f${i}`);
      await vi.waitFor(async () => expect(await failed()).toBe(i), { timeout: 20_000, interval: 100 });
    }
    expect(said("the agent failed")).toEqual([]);
    page.say("please fail 3", "f3");
    await vi.waitFor(() => expect(said("the agent failed 3 turns in a row")).toHaveLength(1), {
      timeout: 20_000,
    });
    page.say("please fail 4", "f4");
    await vi.waitFor(async () => expect(await failed()).toBe(4), { timeout: 20_000, interval: 100 });
    page.say("hello again", "h1");
    await vi.waitFor(() => expect(said("the agent answered again")).toHaveLength(1), { timeout: 20_000 });
    page.say("and once more", "h2");
    await vi.waitFor(
      async () =>
        expect(
          sampleValue(await scrape(g.base), "parley_turns_total", {
            channel: "webchat",
            outcome: "answered",
          }),
        ).toBe(2),
      { timeout: 20_000, interval: 100 },
    );
    expect(said("the agent failed")).toHaveLength(1);
    expect(said("the agent answered again")).toHaveLength(1);
    await g.gateway.shutdown();
    expect(auditRows(g.home).map((r) => [r.outcome, r.fields.incident, r.fields.phase])).toEqual([
      ["sent", "agent_failing", "raised"],
      ["sent", "agent_failing", "recovered"],
    ]);
  }, 120_000);

  it("tells the Telegram owner, once, that the previous run did not stop cleanly", async () => {
    const fake = await FakeTelegram.start({ lifetimeMs: 60_000 });
    fakes.push(fake);
    const home = freshHome();
    const dead = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid ?? 999_999;
    writeFileSync(join(home, "parley.lock"), `${dead}\n`);
    const g = await startGateway({
      raw: { agent, telegram: { allowedUserIds: [4242], apiRoot: fake.apiRoot } },
      env: { TELEGRAM_BOT_TOKEN: fake.token },
      channels: [webchatChannel, telegramChannel],
      home,
    });
    started.push(g);
    const notices = () => fake.sentMessages(4242).filter((m) => m.visible.includes("unclean stop"));
    await vi.waitFor(() => expect(notices()).toHaveLength(1), { timeout: 20_000 });
    expect(notices()[0]?.visible).toContain(`pid ${dead}`);
    await new Promise((r) => setTimeout(r, 500));
    expect(notices()).toHaveLength(1);
    await g.gateway.shutdown();
    expect(
      auditRows(home).map((r) => [r.outcome, r.fields.incident, r.fields.delivered, r.fields.pid]),
    ).toEqual([["sent", "unclean_stop", 1, dead]]);
  }, 60_000);

  it("alerts.enabled false: three failed turns tell nobody", async () => {
    const g = await startGateway({ raw: { agent, alerts: { enabled: false } }, channels: [webchatChannel] });
    started.push(g);
    const page = new PageClient("quiet");
    pages.push(page);
    await page.connect(g.url);
    for (let i = 1; i <= 3; i += 1) {
      page.say(`fail ${i}`, `m${i}`);
      await vi.waitFor(
        async () =>
          expect(
            sampleValue(await scrape(g.base), "parley_turns_total", {
              channel: "webchat",
              outcome: "failed",
            }),
          ).toBe(i),
        { timeout: 20_000, interval: 100 },
      );
    }
    await new Promise((r) => setTimeout(r, 300));
    // Neither as a notice nor in any other bubble.
    const told = [...page.shown("system"), ...page.shown("assistant")].filter((b) =>
      b.text.includes("parley:"),
    );
    expect(told).toEqual([]);
  }, 60_000);
});

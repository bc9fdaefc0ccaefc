/**
 * The chaos run with two gateways on one PostgreSQL (issue 26): two real `parley` processes, each in
 * its own data home on one host, sharing the store; two web chat pages (one on each gateway, as a
 * load balancer would spread them) and the Telegram fake (polled by whichever gateway is elected).
 * At seeded random points one gateway is killed with SIGKILL, most often the one polling Telegram;
 * its pages reconnect to the survivor, and it is started again a little later (as a supervisor
 * would), as a new member. In the end every message sent must have exactly one answer on its
 * channel, Telegram must never have been polled by two gateways at once, and each time the poller
 * died the time until the survivor polled again is reported (the measured failover).
 */
import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { PageClient } from "../helpers/page-client.js";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { startParley } from "../helpers/spawn-parley.js";
import { ChaosTraffic, rng, tally } from "./traffic.js";

export interface ClusterChaosOptions {
  kills: number;
  seed: number;
  /** The shared, empty database. */
  databaseUrl: string;
  leaseSeconds: number;
  agentDelayMs?: number;
  stallMs?: number;
  log?: (line: string) => void;
}

export interface ClusterChaosResult {
  kills: number;
  pollerKills: number;
  sent: { webchat: number; telegram: number };
  lost: string[];
  duplicated: string[];
  /** Most getUpdates calls ever open at once (must be 1). */
  maxConcurrentPolls: number;
  /** Per kill of the Telegram poller: ms from the kill until a gateway polled again. */
  failoverMs: number[];
  ambiguousResends: number;
  unfinished: number;
  homes: string[];
  elapsedMs: number;
}

const AGENT = fileURLToPath(new URL("../fakes/acp/chaos-agent.mjs", import.meta.url));
const TELEGRAM_USERS = [4201, 4202];
const NAMES = ["gw-a", "gw-b"];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function query<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Which gateway (by index) holds Telegram's connection right now, if a live one does. */
async function poller(url: string): Promise<number | undefined> {
  const rows = await query<{ gateway_id: string }>(
    url,
    `select o.gateway_id from ownership o join gateway_member m on m.gateway_id = o.gateway_id
      where o.resource = 'connection:telegram.getUpdates' and m.expires_at_ms > ${Date.now()}`,
  );
  const id = rows[0]?.gateway_id;
  const index = id === undefined ? -1 : NAMES.findIndex((n) => id.startsWith(`${n}/`));
  return index < 0 ? undefined : index;
}

export async function runClusterChaos(o: ClusterChaosOptions): Promise<ClusterChaosResult> {
  const log = o.log ?? (() => {});
  const random = rng(o.seed);
  const started = Date.now();
  const fake = await FakeTelegram.start({ lifetimeMs: 60 * 60_000, maxCalls: 1_000_000, maxPollMs: 500 });
  const homes = NAMES.map((name) => {
    const home = mkdtempSync(join(tmpdir(), `parley-cluster-${name}-`));
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        telegram: { allowedUserIds: TELEGRAM_USERS.map(String), pollTimeoutSeconds: 1 },
        agent: { command: process.execPath, args: [AGENT], maxProcesses: 2 },
        intake: { maxAttempts: 100 },
        audit: { jsonl: false },
        cluster: { leaseSeconds: o.leaseSeconds, name, pickUpMs: 250 },
      }),
    );
    return home;
  });
  const env = {
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_API_ROOT: fake.apiRoot,
    CHAOS_AGENT_DELAY_MS: String(o.agentDelayMs ?? 30),
    PARLEY_DATABASE_URL: o.databaseUrl,
  };
  const gateways: (RunningParley | undefined)[] = [undefined, undefined];
  const pages = ["cluster-a", "cluster-b"].map((c) => new PageClient(c));
  /** Which gateway each page is connected to. */
  const pageOn = [0, 1];
  const traffic = new ChaosTraffic(random, pages, fake, TELEGRAM_USERS);
  const pollerKilledAt: number[] = [];
  const killTimes: number[] = [];

  const boot = async (i: number) => {
    gateways[i] = await startParley([], { home: homes[i] as string, env });
  };
  const kill = async (i: number) => {
    const p = gateways[i] as RunningParley;
    const exited = new Promise((resolve) => p.child.once("exit", resolve));
    p.child.kill("SIGKILL");
    await exited;
    gateways[i] = undefined;
    appendFileSync(join(homes[i] as string, "parley.log"), `--- killed\n${p.stderr()}`);
  };

  try {
    await boot(0);
    await boot(1);
    await Promise.all(pages.map((p, i) => p.connect(gateways[pageOn[i] as number]?.url ?? "")));
    for (let k = 1; k <= o.kills; k += 1) {
      await traffic.burst();
      await sleep(Math.floor(random() * 900));
      const holder = await poller(o.databaseUrl);
      const victim = holder !== undefined && random() < 0.7 ? holder : Math.floor(random() * 2);
      const at = Date.now();
      await kill(victim);
      killTimes.push(at);
      if (victim === holder) pollerKilledAt.push(at);
      log(
        `kill ${k}/${o.kills}: ${NAMES[victim]}${victim === holder ? " (the poller)" : ""} after ${traffic.last}`,
      );
      const survivor = 1 - victim;
      for (const [i, page] of pages.entries()) {
        if (pageOn[i] !== victim) continue;
        page.close();
        pageOn[i] = survivor;
        await page.connect(gateways[survivor]?.url ?? "");
      }
      // Started again as a supervisor would, after the survivor has had the lease to take over.
      await sleep(o.leaseSeconds * 1000 + 1500);
      await boot(victim);
    }
    await traffic.settle(o.stallMs ?? 45_000);

    // What a freshly loaded page is shown (the shared history), and each Telegram chat.
    const fresh = pages.map((p) => new PageClient(p.conversation));
    await Promise.all(fresh.map((p) => p.connect(gateways[0]?.url ?? "")));
    await sleep(300);
    const lost: string[] = [];
    const duplicated: string[] = [];
    for (const page of fresh) {
      const answers = tally(
        [...page.bubbles.values()].filter((b) => b.role === "assistant").map((b) => b.text),
      );
      for (const { token } of traffic.sentTo.webchat.filter(
        (s) => s.page.conversation === page.conversation,
      )) {
        const n = answers.counts.get(token) ?? 0;
        if (n === 0) lost.push(`webchat:${token}`);
        if (n > 1) duplicated.push(`webchat:${token}`);
      }
      page.close();
    }
    for (const user of TELEGRAM_USERS) {
      const answers = tally(fake.sentMessages(user).map((m) => m.visible));
      for (const { token } of traffic.sentTo.telegram.filter((s) => s.user === user)) {
        const n = answers.counts.get(token) ?? 0;
        if (n === 0) lost.push(`telegram:${token}`);
        if (n > 1) duplicated.push(`telegram:${token}`);
      }
    }
    // Failover: from a poller's kill to the next getUpdates (measured only when no other kill fell between).
    const failoverMs: number[] = [];
    for (const at of pollerKilledAt) {
      const nextKill = killTimes.find((t) => t > at) ?? Number.POSITIVE_INFINITY;
      const polled = fake.pollStarts.find((t) => t > at);
      if (polled !== undefined && polled < nextKill) failoverMs.push(polled - at);
    }
    const [unfinished] = await query<{ n: string }>(
      o.databaseUrl,
      "select count(*) as n from intake where state <> 'done'",
    );
    const [ambiguous] = await query<{ n: string }>(
      o.databaseUrl,
      "select count(*) as n from audit where operation = 'delivery' and fields like '%ambiguous_resend%'",
    );
    return {
      kills: o.kills,
      pollerKills: pollerKilledAt.length,
      sent: { webchat: traffic.sentTo.webchat.length, telegram: traffic.sentTo.telegram.length },
      lost,
      duplicated,
      maxConcurrentPolls: fake.maxConcurrentPolls,
      failoverMs,
      ambiguousResends: Number(ambiguous?.n ?? 0),
      unfinished: Number(unfinished?.n ?? 0),
      homes,
      elapsedMs: Date.now() - started,
    };
  } finally {
    for (const page of pages) page.close();
    for (const [i, g] of gateways.entries()) {
      if (!g) continue;
      await g.stop();
      appendFileSync(join(homes[i] as string, "parley.log"), `--- the last start\n${g.stderr()}`);
    }
    await fake.stop();
  }
}

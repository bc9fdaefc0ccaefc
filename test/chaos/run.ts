/**
 * The chaos run: the real `parley` binary as a child process, its web chat driven by page-like
 * clients and its Telegram channel by the fake Bot API, a scripted agent answering every message
 * "answer:<token>", and the gateway killed with SIGKILL at random (seeded) points and started again.
 * When the last restart has settled, every message sent must have exactly one answer on its channel,
 * and no message of the bot may hold a part of an answer that another message also holds (a part
 * posted twice) or a fragment no answer completed (a part orphaned by a crash). The one exception
 * the run reports apart: Telegram has no idempotency key and no way to look a bot's message up, so
 * a kill between Telegram creating a message and parley recording it leaves that part unknown, and
 * it is created again; each such case must be one the gateway audited (ambiguous_resend).
 *
 * The page clients behave like the page: they keep a message until the server says "accepted"
 * (journaled) and send it again after a reconnect; they reconnect to each new start's URL (a new
 * token per start), and the final check reads what a freshly loaded page is shown.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { storePath } from "../../src/store/index.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { PageClient } from "../helpers/page-client.js";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { startParley } from "../helpers/spawn-parley.js";

export interface ChaosOptions {
  kills: number;
  seed: number;
  /** Pause between the agent's three answer pieces (ms). */
  agentDelayMs?: number;
  /**
   * How long the last start may go without answering anything more before what is still owed
   * counts as lost (a backlog of paced Telegram turns takes a while; a stuck one never ends).
   */
  stallMs?: number;
  log?: (line: string) => void;
}

export interface ChaosResult {
  kills: number;
  sent: { webchat: number; telegram: number };
  /** Tokens sent (and so accepted, eventually: the clients and Telegram keep resending) with no answer. */
  lost: string[];
  /** Tokens answered more than once on their channel. */
  duplicated: string[];
  /** Bot messages holding a fragment of an answer and no whole one (an orphaned part), by channel. */
  orphans: { webchat: string[]; telegram: string[] };
  /** Parts the gateway created again because a kill left it unknown whether they had landed. */
  ambiguousResends: number;
  /** Journal rows still unfinished at the end (must be 0). */
  unfinished: number;
  /** On a failure: each Telegram chat's bot messages as they ended (for the diagnosis). */
  telegramChats?: Record<string, string[]>;
  /** The run's data home (its store, and parley.log with every start's log). */
  home: string;
  elapsedMs: number;
}

const AGENT = fileURLToPath(new URL("../fakes/acp/chaos-agent.mjs", import.meta.url));
const TELEGRAM_USERS = [4101, 4102];
const CONVERSATIONS = ["chaos-a", "chaos-b"];

/** mulberry32: a small seeded PRNG, so a failing run can be replayed with its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The queue receipt's states (formatReceipt): "⏳ Queued", "▶️ Now answering", "🛑 Cancelled". */
const RECEIPT = /^(⏳|▶️|🛑) /u;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How often each token is answered in a set of message texts, and the fragments no answer completes. */
export function tally(texts: readonly string[]): { counts: Map<string, number>; orphans: string[] } {
  const counts = new Map<string, number>();
  const orphans: string[] = [];
  for (const text of texts) {
    const whole = text.match(/answer:m\d+\b/g) ?? [];
    for (const a of whole) {
      const token = a.slice("answer:".length);
      counts.set(token, (counts.get(token) ?? 0) + 1);
    }
    // The agent's first piece alone ("answ…"): a part that landed and was never completed. (A queue
    // receipt quotes the messages it holds: it is not an answer.)
    if (whole.length === 0 && /\bans/.test(text) && !RECEIPT.test(text)) orphans.push(text);
  }
  return { counts, orphans };
}

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const log = o.log ?? (() => {});
  const random = rng(o.seed);
  const started = Date.now();
  const home = mkdtempSync(join(tmpdir(), "parley-chaos-"));
  const fake = await FakeTelegram.start({ lifetimeMs: 60 * 60_000, maxCalls: 1_000_000, maxPollMs: 500 });
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      telegram: { allowedUserIds: TELEGRAM_USERS.map(String), pollTimeoutSeconds: 1 },
      agent: { command: process.execPath, args: [AGENT], maxProcesses: 1 },
      // The run is about losing and doubling, not the cap on a message that keeps dying (own test).
      intake: { maxAttempts: 100 },
      audit: { jsonl: false },
    }),
  );
  const env = {
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_API_ROOT: fake.apiRoot,
    CHAOS_AGENT_DELAY_MS: String(o.agentDelayMs ?? 30),
  };
  const pages = CONVERSATIONS.map((c) => new PageClient(c));
  const sentTo = {
    webchat: [] as { page: PageClient; token: string }[],
    telegram: [] as { user: number; token: string }[],
  };
  let next = 1;
  let parley: RunningParley | undefined;
  let boots = 0;

  const boot = async () => {
    boots += 1;
    parley = await startParley([], { home, env });
    await Promise.all(pages.map((p) => p.connect(parley?.url ?? "")));
  };
  const kill = async (p: RunningParley) => {
    const child: ChildProcessWithoutNullStreams = p.child;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    // Each start's log, kept beside the store: a failing seed can be read, not only replayed.
    appendFileSync(join(home, "parley.log"), `--- start ${boots}\n${p.stderr()}`);
    for (const page of pages) page.close();
  };

  try {
    await boot();
    for (let k = 1; k <= o.kills; k += 1) {
      const burst = 1 + Math.floor(random() * 3);
      for (let i = 0; i < burst; i += 1) {
        const token = `m${next++}`;
        if (random() < 0.5) {
          const page = pages[Math.floor(random() * pages.length)] as PageClient;
          page.say(token);
          sentTo.webchat.push({ page, token });
        } else {
          const user = TELEGRAM_USERS[Math.floor(random() * TELEGRAM_USERS.length)] as number;
          fake.pushMessage({ id: user }, token);
          sentTo.telegram.push({ user, token });
        }
        await sleep(Math.floor(random() * 120));
      }
      // The kill lands anywhere: before, during or after the journal, the turn, a part's creation.
      // Now and then the gateway is left alone longer, so paced turns (Telegram: a call a second per
      // chat) finish between kills too, as they would between real crashes.
      await sleep(random() < 0.2 ? 1500 + Math.floor(random() * 2500) : Math.floor(random() * 900));
      await kill(parley as RunningParley);
      log(`kill ${k}/${o.kills} after m${next - 1}`);
      await boot();
    }
    // Settle: the last start answers everything still owed, for as long as it makes progress.
    const owed = () => {
      const web = pages.flatMap(
        (p) => tally([...p.bubbles.values()].filter((b) => b.role === "assistant").map((b) => b.text)).counts,
      );
      const tg = TELEGRAM_USERS.map((u) => tally(fake.sentMessages(u).map((m) => m.visible)).counts);
      const webMissing = sentTo.webchat.filter(({ token }) => !web.some((c) => c.has(token)));
      const tgMissing = sentTo.telegram.filter(({ token }) => !tg.some((c) => c.has(token)));
      return webMissing.length + tgMissing.length;
    };
    let left = owed();
    let progressAt = Date.now();
    while (left > 0 && Date.now() - progressAt < (o.stallMs ?? 45_000)) {
      await sleep(200);
      const now = owed();
      if (now < left) progressAt = Date.now();
      left = now;
    }
    await sleep(500); // anything late (a duplicate in flight) lands before the count

    // What a freshly loaded page is shown (the history after every restart), and each Telegram chat.
    const fresh = CONVERSATIONS.map((c) => new PageClient(c));
    await Promise.all(fresh.map((p) => p.connect(parley?.url ?? "")));
    const lost: string[] = [];
    const duplicated: string[] = [];
    const orphans = { webchat: [] as string[], telegram: [] as string[] };
    for (const page of fresh) {
      const bubbles = [...page.bubbles.values()];
      const answers = tally(bubbles.filter((b) => b.role === "assistant").map((b) => b.text));
      orphans.webchat.push(...answers.orphans);
      const users = bubbles.filter((b) => b.role === "user").map((b) => b.text);
      for (const { token } of sentTo.webchat.filter((s) => s.page.conversation === page.conversation)) {
        const n = answers.counts.get(token) ?? 0;
        if (n === 0) lost.push(`webchat:${token}`);
        if (n > 1) duplicated.push(`webchat:${token}`);
        // The reloaded page shows the question once too.
        const asked = users.filter((u) => u === token).length;
        if (asked === 0) lost.push(`webchat-user:${token}`);
        if (asked > 1) duplicated.push(`webchat-user:${token}`);
      }
      page.close();
    }
    for (const user of TELEGRAM_USERS) {
      const answers = tally(fake.sentMessages(user).map((m) => m.visible));
      orphans.telegram.push(...answers.orphans);
      for (const { token } of sentTo.telegram.filter((s) => s.user === user)) {
        const n = answers.counts.get(token) ?? 0;
        if (n === 0) lost.push(`telegram:${token}`);
        if (n > 1) duplicated.push(`telegram:${token}`);
      }
    }
    const db = new Database(storePath(home), { readonly: true });
    let unfinished: number;
    let ambiguousResends: number;
    try {
      unfinished = (
        db.prepare("select count(*) as n from intake where state <> 'done'").get() as { n: number }
      ).n;
      ambiguousResends = (
        db
          .prepare(
            "select count(*) as n from audit where operation = 'delivery' and fields like '%ambiguous_resend%'",
          )
          .get() as { n: number }
      ).n;
    } finally {
      db.close();
    }
    const failed = lost.length + duplicated.length + orphans.webchat.length + orphans.telegram.length > 0;
    return {
      ...(failed
        ? {
            telegramChats: Object.fromEntries(
              TELEGRAM_USERS.map((u) => [
                String(u),
                fake.sentMessages(u).map((m) => `${m.messageId}: ${m.visible}`),
              ]),
            ),
          }
        : {}),
      home,
      kills: o.kills,
      sent: { webchat: sentTo.webchat.length, telegram: sentTo.telegram.length },
      lost,
      duplicated,
      orphans,
      ambiguousResends,
      unfinished,
      elapsedMs: Date.now() - started,
    };
  } finally {
    for (const page of pages) page.close();
    await parley?.stop();
    if (parley) appendFileSync(join(home, "parley.log"), `--- start ${boots} (the last)\n${parley.stderr()}`);
    await fake.stop();
  }
}

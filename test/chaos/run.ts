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
import { ChaosTraffic, rng, tally } from "./traffic.js";

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
  /**
   * The pause before each kill, drawn evenly from [min, max] ms. Absent: mostly under a second,
   * now and then 1.5 to 4 s (so paced turns finish between kills too).
   */
  killEveryMs?: readonly [number, number];
  /**
   * The gateway's intake.maxAttempts. Absent: 100, so no message is given up and the run is only
   * about losing and doubling; lower, a message cut short that often is given up with a notice.
   */
  maxAttempts?: number;
  log?: (line: string) => void;
}

export interface ChaosResult {
  kills: number;
  sent: { webchat: number; telegram: number };
  /**
   * Tokens sent (and so accepted, eventually: the clients and Telegram keep resending) with no
   * answer and no notice that they were not run.
   */
  lost: string[];
  /** Tokens a "not run again" (or "too old to run") notice named: their sender was told to resend. */
  givenUp: string[];
  /** Tokens such a notice named although they were answered (must be none). */
  wrongNotices: string[];
  /**
   * The history the next turn's agent reads: answered tokens with no agent line holding their
   * answer (missing), or with more than one (doubled).
   */
  history: { missing: string[]; doubled: string[] };
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The notice of a message found unfinished at start and not run (journal.ts giveUp). */
const GIVEN_UP = /your message “(m\d+)”, (?:so it was not run again|and it is now too old to run)/gu;

/** The tokens the notices among `texts` name. */
function noticed(texts: readonly string[]): Set<string> {
  return new Set(texts.flatMap((t) => [...t.matchAll(GIVEN_UP)].map((m) => m[1] as string)));
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
      intake: { maxAttempts: o.maxAttempts ?? 100 },
      audit: { jsonl: false },
    }),
  );
  const env = {
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_API_ROOT: fake.apiRoot,
    CHAOS_AGENT_DELAY_MS: String(o.agentDelayMs ?? 30),
  };
  const pages = CONVERSATIONS.map((c) => new PageClient(c));
  const traffic = new ChaosTraffic(random, pages, fake, TELEGRAM_USERS);
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
      await traffic.burst();
      // The kill lands anywhere: before, during or after the journal, the turn, a part's creation.
      // Now and then the gateway is left alone longer, so paced turns (Telegram: a call a second per
      // chat) finish between kills too, as they would between real crashes.
      const every = o.killEveryMs;
      await sleep(
        every
          ? every[0] + Math.floor(random() * (every[1] - every[0]))
          : random() < 0.2
            ? 1500 + Math.floor(random() * 2500)
            : Math.floor(random() * 900),
      );
      await kill(parley as RunningParley);
      log(`kill ${k}/${o.kills} after ${traffic.last}`);
      await boot();
    }
    // Settle: the last start answers everything still owed, for as long as it makes progress.
    await traffic.settle(o.stallMs ?? 45_000);

    // What a freshly loaded page is shown (the history after every restart), and each Telegram chat.
    const fresh = CONVERSATIONS.map((c) => new PageClient(c));
    await Promise.all(fresh.map((p) => p.connect(parley?.url ?? "")));
    const lost: string[] = [];
    const duplicated: string[] = [];
    const givenUp: string[] = [];
    const wrongNotices: string[] = [];
    const answered = new Set<string>();
    const orphans = { webchat: [] as string[], telegram: [] as string[] };
    // A token a notice named was not run: told, not lost; a notice on an answered one is wrong.
    const judge = (channel: string, token: string, answers: number, notices: Set<string>) => {
      if (answers > 0) answered.add(token);
      if (notices.has(token)) {
        givenUp.push(`${channel}:${token}`);
        if (answers > 0) wrongNotices.push(`${channel}:${token}`);
      } else if (answers === 0) lost.push(`${channel}:${token}`);
    };
    for (const page of fresh) {
      const bubbles = [...page.bubbles.values()];
      const answers = tally(bubbles.filter((b) => b.role === "assistant").map((b) => b.text));
      const notices = noticed(bubbles.map((b) => b.text));
      orphans.webchat.push(...answers.orphans);
      const users = bubbles.filter((b) => b.role === "user").map((b) => b.text);
      for (const { token } of traffic.sentTo.webchat.filter(
        (s) => s.page.conversation === page.conversation,
      )) {
        const n = answers.counts.get(token) ?? 0;
        judge("webchat", token, n, notices);
        if (n > 1) duplicated.push(`webchat:${token}`);
        // The reloaded page shows the question once too.
        const asked = users.filter((u) => u === token).length;
        if (asked === 0) lost.push(`webchat-user:${token}`);
        if (asked > 1) duplicated.push(`webchat-user:${token}`);
      }
      page.close();
    }
    for (const user of TELEGRAM_USERS) {
      const texts = fake.sentMessages(user).map((m) => m.visible);
      const answers = tally(texts);
      orphans.telegram.push(...answers.orphans);
      for (const { token } of traffic.sentTo.telegram.filter((s) => s.user === user)) {
        const n = answers.counts.get(token) ?? 0;
        judge("telegram", token, n, noticed(texts));
        if (n > 1) duplicated.push(`telegram:${token}`);
      }
    }
    const db = new Database(storePath(home), { readonly: true });
    let unfinished: number;
    let ambiguousResends: number;
    const history = { missing: [] as string[], doubled: [] as string[] };
    try {
      const agentLines = (
        db.prepare("select text from transcript where kind = 'agent'").all() as { text: string }[]
      ).map((r) => r.text);
      const recorded = tally(agentLines).counts;
      for (const token of answered) {
        const n = recorded.get(token) ?? 0;
        if (n === 0) history.missing.push(token);
        if (n > 1) history.doubled.push(token);
      }
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
    const failed =
      lost.length +
        duplicated.length +
        wrongNotices.length +
        orphans.webchat.length +
        orphans.telegram.length >
      0;
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
      sent: { webchat: traffic.sentTo.webchat.length, telegram: traffic.sentTo.telegram.length },
      lost,
      duplicated,
      givenUp,
      wrongNotices,
      history,
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

/**
 * The durable store through the real `parley` binary (a child process), killed and started again:
 * a Discord message accepted just before a SIGKILL is answered after the restart, once; a reloaded
 * web chat page shows the history from before the restart; an older install's JSON files keep
 * their sessions and resume records; a conversation's agent session is resumed after a restart, and
 * when it cannot be, the agent gets the conversation's last messages; a corrupt database is refused
 * with its repair, never reset.
 */

import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { storePath } from "../../src/store/index.js";
import { FakeDiscord } from "../fakes/discord/server.js";
import { PageClient } from "../helpers/page-client.js";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { BIN, freshHome, startParley } from "../helpers/spawn-parley.js";

const CHAOS_AGENT = fileURLToPath(new URL("../fakes/acp/chaos-agent.mjs", import.meta.url));
const MULTI_AGENT = fileURLToPath(new URL("../fakes/acp/multi.mjs", import.meta.url));
const LEGACY = fileURLToPath(new URL("../store/fixtures/legacy-install/", import.meta.url));

const running: RunningParley[] = [];
const pages: PageClient[] = [];
afterEach(async () => {
  for (const p of pages.splice(0)) p.close();
  for (const r of running.splice(0))
    if (r.child.exitCode === null && r.child.signalCode === null) await r.stop();
});

function configure(home: string, config: Record<string, unknown>): void {
  writeFileSync(join(home, "config.json"), JSON.stringify(config));
}

async function boot(home: string, env: Record<string, string> = {}): Promise<RunningParley> {
  const p = await startParley([], { home, env });
  running.push(p);
  return p;
}

async function kill(p: RunningParley): Promise<void> {
  const exited = new Promise((resolve) => p.child.once("exit", resolve));
  p.child.kill("SIGKILL");
  await exited;
}

async function page(url: string, conversation: string): Promise<PageClient> {
  const c = new PageClient(conversation);
  pages.push(c);
  await c.connect(url);
  return c;
}

/** Rows of the store, read-only beside a running (or killed) gateway. */
function query<T>(home: string, sql: string): T[] {
  const db = new Database(storePath(home), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

describe("a restart of the real gateway", () => {
  it("answers, once, a Discord message that was accepted just before a SIGKILL", async () => {
    const fake = await new FakeDiscord().start();
    try {
      const alice = "200000000000000001";
      const dm = "300000000000000001";
      fake.addChannel({ id: dm, type: 1 });
      const home = freshHome();
      configure(home, {
        discord: { allowedUserIds: [alice], apiBase: fake.apiBase },
        agent: { command: process.execPath, args: [CHAOS_AGENT], maxProcesses: 1 },
      });
      const env = { DISCORD_BOT_TOKEN: fake.token };
      // A slow agent: the kill lands while the answer is being written.
      const first = await boot(home, { ...env, CHAOS_AGENT_DELAY_MS: "5000" });
      // Connected: commands are registered once the Gateway is READY.
      await vi.waitFor(() => expect(fake.commands.length).toBeGreaterThan(0), { timeout: 10_000 });
      fake.userMessage({ channelId: dm, userId: alice, content: "m1" });
      await vi.waitFor(
        () => expect(query<{ n: number }>(home, "select count(*) as n from intake")[0]?.n).toBe(1),
        { timeout: 10_000, interval: 5 },
      );
      await kill(first);
      expect(query<{ state: string }>(home, "select state from intake")[0]?.state).not.toBe("done");

      const second = await boot(home, { ...env, CHAOS_AGENT_DELAY_MS: "10" });
      await vi.waitFor(
        () => expect(fake.channelMessages(dm).some((m) => m.content.includes("answer:m1"))).toBe(true),
        { timeout: 15_000 },
      );
      await vi.waitFor(() =>
        expect(query<{ outcome: string }>(home, "select outcome from intake")).toEqual([
          { outcome: "answered" },
        ]),
      );
      // One answer, in one message: a part the first run had posted was edited, not posted again.
      const answers = fake.channelMessages(dm).filter((m) => /\bans/.test(m.content));
      expect(answers.map((m) => m.content.split("\n")[0])).toEqual(["answer:m1"]);
      await second.stop();
    } finally {
      await fake.close();
    }
  }, 60_000);

  it("shows a reloaded web chat page the history from before the restart, each message once", async () => {
    const home = freshHome();
    configure(home, { agent: { command: process.execPath, args: [CHAOS_AGENT], maxProcesses: 1 } });
    const first = await boot(home, { CHAOS_AGENT_DELAY_MS: "5" });
    const before = await page(first.url, "reload-me");
    before.say("m1");
    await vi.waitFor(() => expect(before.shown("assistant").at(-1)?.text).toBe("answer:m1"), {
      timeout: 10_000,
    });
    before.say("m2");
    await vi.waitFor(() => expect(before.shown("assistant").at(-1)?.text).toBe("answer:m2"), {
      timeout: 10_000,
    });
    await first.stop();

    // A new start has a new URL (a new token); the page, reloaded there, keeps its conversation.
    const second = await boot(home, { CHAOS_AGENT_DELAY_MS: "5" });
    const after = await page(second.url, "reload-me");
    expect(after.shown("user").map((b) => b.text)).toEqual(["m1", "m2"]);
    expect(after.shown("assistant").map((b) => b.text)).toEqual(["answer:m1", "answer:m2"]);
    // Another conversation sees none of it.
    expect((await page(second.url, "someone-else")).bubbles.size).toBe(0);
  }, 60_000);

  it("keeps an older install's sessions and resume records (its JSON files imported once)", async () => {
    const home = freshHome();
    cpSync(LEGACY, home, { recursive: true });
    const p = await boot(home);
    // The web chat conversation of the old install still has its title: the session row came along.
    const old = await page(p.url, "aaa111");
    old.say("/status", "s1");
    await vi.waitFor(() => expect(old.shown("system").at(-1)?.text).toContain("Title: Plan the trip"), {
      timeout: 10_000,
    });
    await p.stop();
    for (const rel of [
      "sessions.json",
      "trust/discord_resume_expectations.json",
      "routing/telegram_offset.json",
    ])
      expect(readFileSync(join(home, `${rel}.imported`)).length).toBeGreaterThan(0);
    expect(
      query<{ conversation: string }>(
        home,
        "select conversation from resume_expectation order by conversation",
      ),
    ).toEqual([{ conversation: "dm1" }, { conversation: "dm9" }]);
    expect(query<{ value: number }>(home, "select value from cursor")).toEqual([{ value: 43 }]);
  }, 60_000);

  it("resumes a conversation's agent session after a restart; when the agent cannot, replays its last messages", async () => {
    for (const [flags, expected] of [
      [[], /^answer 2: second \| history: first$/],
      [
        ["no-load"],
        /^answer 1: \[Context:[\s\S]*User: first[\s\S]*Assistant: answer 1: first[\s\S]*\]second/,
      ],
    ] as const) {
      const home = freshHome();
      const agentStore = join(home, "agent-sessions");
      mkdirSync(agentStore);
      configure(home, {
        agent: { command: process.execPath, args: [MULTI_AGENT, ...flags], env: { FAKE_STORE: agentStore } },
      });
      const first = await boot(home);
      const a = await page(first.url, "remember-me");
      a.say("first");
      await vi.waitFor(() => expect(a.shown("assistant").at(-1)?.text).toMatch(/^answer 1: first/), {
        timeout: 10_000,
      });
      // The answer on screen comes a moment before its message is marked answered; a kill in that
      // window rightly runs it again after the restart, which is another test's business.
      await vi.waitFor(
        () => expect(query<{ state: string }>(home, "select state from intake")).toEqual([{ state: "done" }]),
        { timeout: 10_000 },
      );
      await kill(first);
      const second = await boot(home);
      const b = await page(second.url, "remember-me");
      b.say("second");
      await vi.waitFor(() => expect(b.shown("assistant").at(-1)?.text).toMatch(expected), {
        timeout: 10_000,
      });
    }
  }, 90_000);

  it("refuses a corrupt database with its repair, and never resets it", async () => {
    const home = freshHome();
    const garbage = Buffer.from("this is not a database, and it holds somebody's only copy\n".repeat(200));
    writeFileSync(storePath(home), garbage);
    const start = spawnSync(process.execPath, [BIN, "start", "--port", "0"], {
      env: { PATH: process.env.PATH ?? "", HOME: home, PARLEY_HOME: home },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(start.status).toBe(1);
    expect(start.stderr).toContain(storePath(home));
    expect(start.stderr).toContain("Nothing was reset");
    expect(start.stderr).toContain(".recover");
    expect(readFileSync(storePath(home)).equals(garbage)).toBe(true);
    const doctor = spawnSync(process.execPath, [BIN, "doctor"], {
      env: { PATH: process.env.PATH ?? "", HOME: home, PARLEY_HOME: home },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(doctor.status).toBe(1);
    expect(doctor.stdout).toMatch(/✗ store: .*parley\.db/);
    expect(doctor.stdout).toContain(".recover");
    expect(readFileSync(storePath(home)).equals(garbage)).toBe(true);
  }, 60_000);
});

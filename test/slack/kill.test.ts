/**
 * The real `parley` binary (a child process) with Slack in Socket Mode against the fake and a real
 * ACP agent subprocess, killed with SIGKILL while an answer is being written, then started again:
 * the message is answered once, on the message the first run had posted (edited, not posted again).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { storePath } from "../../src/store/index.js";
import { FakeSlack } from "../fakes/slack/server.js";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { freshHome, startParley } from "../helpers/spawn-parley.js";
import { ALICE, DM } from "./helpers.js";

const CHAOS_AGENT = fileURLToPath(new URL("../fakes/acp/chaos-agent.mjs", import.meta.url));

const running: RunningParley[] = [];
let fake: FakeSlack | undefined;
afterEach(async () => {
  for (const r of running.splice(0))
    if (r.child.exitCode === null && r.child.signalCode === null) await r.stop();
  await fake?.close();
  fake = undefined;
});

function count(home: string, sql: string): unknown[] {
  const db = new Database(storePath(home), { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

describe("slack: SIGKILL mid-answer, the real gateway", () => {
  it("answers once after the restart, on the message the first run posted", async () => {
    fake = await new FakeSlack({ lifetimeMs: 60_000 }).start();
    const f = fake;
    const home = freshHome();
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        // Edited, not streamed: the first run's live message is on screen before the kill.
        slack: { apiUrl: f.apiUrl, allowedUserIds: [ALICE], streaming: false },
        agent: { command: process.execPath, args: [CHAOS_AGENT], maxProcesses: 1 },
      }),
    );
    const env = { SLACK_BOT_TOKEN: f.botToken, SLACK_APP_TOKEN: f.appToken };
    const first = await startParley([], { home, env: { ...env, CHAOS_AGENT_DELAY_MS: "5000" } });
    running.push(first);
    await vi.waitFor(() => expect(f.delivery.openSockets).toBe(1), { timeout: 10_000 });
    const { ts: thread } = f.userMessage({ channel: DM, user: ALICE, text: "m1" });
    await vi.waitFor(() => expect(f.botMessages(DM).length).toBe(1), { timeout: 10_000 });
    const live = f.botMessages(DM)[0]?.ts;
    // The kill lands once the ledger knows the live message landed (mid-answer: the agent waits).
    await vi.waitFor(() => expect(count(home, "select state from delivery")).toEqual([{ state: "landed" }]), {
      timeout: 10_000,
      interval: 5,
    });
    const exited = new Promise((resolve) => first.child.once("exit", resolve));
    first.child.kill("SIGKILL");
    await exited;
    expect(count(home, "select state from intake where state != 'done'")).toHaveLength(1);

    const second = await startParley([], { home, env: { ...env, CHAOS_AGENT_DELAY_MS: "10" } });
    running.push(second);
    await vi.waitFor(
      () => expect(f.botMessages(DM).some((m) => f.visible(m).includes("answer:m1"))).toBe(true),
      { timeout: 20_000 },
    );
    await vi.waitFor(
      () => expect(count(home, "select outcome from intake")).toEqual([{ outcome: "answered" }]),
      { timeout: 10_000 },
    );
    const answers = f.thread(DM, thread).filter((m) => m.bot);
    expect(answers.map((m) => m.ts)).toEqual([live]);
    expect(f.visible(answers[0] as (typeof answers)[number])).toMatch(/^answer:m1/);
    await second.stop();
  }, 60_000);
});

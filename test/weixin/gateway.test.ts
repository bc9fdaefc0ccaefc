/**
 * Weixin through the real `parley` binary (a child process) and its config keys, against the fake:
 * `weixin.allowedUserIds` in the operator's config file, WEIXIN_BOT_TOKEN, WEIXIN_API_URL and
 * WEIXIN_CDN_URL in the environment. A message journaled just before a SIGKILL (the agent still
 * writing its answer) is answered after the restart, once.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { storePath } from "../../src/store/index.js";
import { FakeIlink } from "../fakes/weixin/server.js";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { freshHome, startParley } from "../helpers/spawn-parley.js";
import { OWNER } from "./channel-harness.js";

const CHAOS_AGENT = fileURLToPath(new URL("../fakes/acp/chaos-agent.mjs", import.meta.url));

const running: RunningParley[] = [];
let fake: FakeIlink | undefined;
afterEach(async () => {
  for (const r of running.splice(0))
    if (r.child.exitCode === null && r.child.signalCode === null) await r.stop();
  expect(fake?.authFailures ?? 0).toBe(0);
  await fake?.stop();
  fake = undefined;
});

function intake<T>(home: string, sql: string): T[] {
  const db = new Database(storePath(home), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

async function boot(home: string, f: FakeIlink, delayMs: number): Promise<RunningParley> {
  const before = f.callsTo("getupdates").length;
  const p = await startParley([], {
    home,
    env: {
      WEIXIN_BOT_TOKEN: f.token,
      WEIXIN_API_URL: f.origin,
      WEIXIN_CDN_URL: f.cdnUrl,
      CHAOS_AGENT_DELAY_MS: String(delayMs),
    },
  });
  running.push(p);
  await f.waitFor(() => f.callsTo("getupdates").length > before, 15_000, "the first poll");
  return p;
}

describe("Weixin in the real gateway", () => {
  it("answers, once, a message journaled just before a SIGKILL", async () => {
    const f = await FakeIlink.start({ lifetimeMs: 90_000, idleMs: 90_000, holdMs: 500 });
    fake = f;
    const home = freshHome();
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        weixin: { allowedUserIds: [OWNER] },
        agent: { command: process.execPath, args: [CHAOS_AGENT], maxProcesses: 1 },
      }),
    );
    const first = await boot(home, f, 5000);
    f.push(OWNER, "m1");
    await vi.waitFor(
      () => expect(intake<{ n: number }>(home, "select count(*) as n from intake")[0]?.n).toBe(1),
      {
        timeout: 10_000,
        interval: 20,
      },
    );
    const exited = new Promise((resolve) => first.child.once("exit", resolve));
    first.child.kill("SIGKILL");
    await exited;
    expect(intake<{ state: string }>(home, "select state from intake")[0]?.state).not.toBe("done");
    expect(f.visible().filter((v) => v.includes("answer:m1"))).toEqual([]);

    const second = await boot(home, f, 10);
    await vi.waitFor(() => expect(f.visible().some((v) => v.includes("answer:m1"))).toBe(true), {
      timeout: 20_000,
    });
    await vi.waitFor(() =>
      expect(intake<{ outcome: string }>(home, "select outcome from intake")).toEqual([
        { outcome: "answered" },
      ]),
    );
    expect(f.visible().filter((v) => v.includes("answer:"))).toHaveLength(1);
    await second.stop();
  }, 90_000);
});

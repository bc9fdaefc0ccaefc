/**
 * Feishu through the real `parley` binary (a child process) and its config keys, against the fake:
 * `feishu.appId`, `feishu.domain` and `feishu.allowedOpenIds` in the operator's config file,
 * FEISHU_APP_SECRET in the environment. A message journaled just before a SIGKILL (the agent still
 * writing its answer) is answered after the restart, once, as a reply to that message.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { storePath } from "../../src/store/index.js";
import { FakeFeishu } from "../fakes/feishu/server.js";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { freshHome, startParley } from "../helpers/spawn-parley.js";
import { OWNER } from "./channel-harness.js";

const CHAOS_AGENT = fileURLToPath(new URL("../fakes/acp/chaos-agent.mjs", import.meta.url));

const running: RunningParley[] = [];
let fake: FakeFeishu | undefined;
afterEach(async () => {
  for (const r of running.splice(0))
    if (r.child.exitCode === null && r.child.signalCode === null) await r.stop();
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

async function boot(home: string, f: FakeFeishu, delayMs: number): Promise<RunningParley> {
  const before = f.ws.connections;
  const p = await startParley([], {
    home,
    env: { FEISHU_APP_SECRET: f.appSecret, CHAOS_AGENT_DELAY_MS: String(delayMs) },
  });
  running.push(p);
  await f.waitFor(() => f.ws.connections > before && f.ws.ready.size > 0, 15_000, "the long connection");
  return p;
}

describe("Feishu in the real gateway", () => {
  it("answers, once, a message journaled just before a SIGKILL", async () => {
    const f = await FakeFeishu.start({ lifetimeMs: 90_000, idleMs: 90_000 });
    fake = f;
    const home = freshHome();
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({
        feishu: { appId: f.appId, domain: f.origin, allowedOpenIds: [OWNER.openId] },
        agent: { command: process.execPath, args: [CHAOS_AGENT], maxProcesses: 1 },
      }),
    );
    // A slow agent: the kill lands while the answer is being written.
    const first = await boot(home, f, 5000);
    const { messageId, event } = f.pushMessage(OWNER, "m1");
    await vi.waitFor(() => expect(event.acked).toBe(true), { timeout: 10_000, interval: 10 });
    // Acknowledged only once journaled: the row is there.
    expect(intake<{ n: number }>(home, "select count(*) as n from intake")[0]?.n).toBe(1);
    const exited = new Promise((resolve) => first.child.once("exit", resolve));
    first.child.kill("SIGKILL");
    await exited;
    expect(intake<{ state: string }>(home, "select state from intake")[0]?.state).not.toBe("done");
    expect(f.botMessages().filter((m) => m.visible.includes("answer:m1"))).toEqual([]);

    const second = await boot(home, f, 10);
    await vi.waitFor(() => expect(f.botMessages().some((m) => m.visible.includes("answer:m1"))).toBe(true), {
      timeout: 20_000,
    });
    await vi.waitFor(() =>
      expect(intake<{ outcome: string }>(home, "select outcome from intake")).toEqual([
        { outcome: "answered" },
      ]),
    );
    const answers = f.botMessages().filter((m) => m.visible.includes("answer:"));
    expect(answers).toHaveLength(1);
    expect(answers[0]?.parentId).toBe(messageId);
    // The event was delivered once: the restart answered it from the journal, not from a redelivery.
    expect(event.deliveries).toBe(1);
    await second.stop();
  }, 90_000);
});

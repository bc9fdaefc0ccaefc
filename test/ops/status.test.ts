/**
 * `parley status` against a real gateway of the data home: exit 3 with nothing running (no lock, or
 * a dead process's lock), 0 running and healthy, 1 degraded (Telegram's fake away, or a gateway
 * that does not answer its socket); `--json` for scripts; the socket owner-only in an owner-only
 * folder; the installed command and `npm start -- status` reach the same code.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parleyArgs } from "../../scripts/start.mjs";
import { runCli } from "../../src/gateway/cli.js";
import type { StatusReport } from "../../src/gateway/ops/status-cli.js";
import { statusSocketPath } from "../../src/gateway/ops/status-socket.js";
import { telegramChannel } from "../../src/telegram/index.js";
import { webchatChannel } from "../../src/webchat/index.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { BIN } from "../helpers/spawn-parley.js";
import type { StartedGateway } from "./helpers.js";
import { freshHome, startGateway } from "./helpers.js";

const started: StartedGateway[] = [];
const fakes: FakeTelegram[] = [];
afterEach(async () => {
  for (const g of started.splice(0)) await g.gateway.shutdown();
  for (const f of fakes.splice(0)) await f.stop();
});

async function status(home: string, json = false): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(json ? ["status", "--json"] : ["status"], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: { PARLEY_HOME: home },
    cwd: home,
    stopSignal: () => new Promise(() => {}),
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** A pid that ran and is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.exit(0)"]);
  return child.pid ?? 999_999;
}

describe("parley status", () => {
  it("exits 3 when nothing runs on the data home, or only a dead process's lock is left", async () => {
    const home = freshHome();
    const none = await status(home);
    expect(none.code).toBe(3);
    expect(none.out).toBe(`parley is not running on ${home}`);
    expect(JSON.parse((await status(home, true)).out)).toEqual({ running: false, home });
    writeFileSync(join(home, "parley.lock"), `${deadPid()}\n`);
    expect((await status(home)).code).toBe(3);
  });

  it("exits 0 for a running, healthy gateway, and --json describes it", async () => {
    const g = await startGateway({ raw: {}, channels: [webchatChannel] });
    started.push(g);
    const text = await status(g.home);
    expect(text.code).toBe(0);
    expect(text.out).toContain("running, healthy");
    expect(text.out).toMatch(/✓ webchat: connected since /);
    expect(text.out).toContain("conversations: 0 working, 0 waiting for approval, 0 messages queued");
    expect(text.out).toContain("backlog: 0 messages not yet answered");
    const json = await status(g.home, true);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.out) as Extract<StatusReport, { answering: true }>;
    expect(report).toMatchObject({
      running: true,
      answering: true,
      healthy: true,
      pid: process.pid,
      notReady: [],
      store: { open: true },
      backlog: { messages: 0, oldestAgeSeconds: null },
      conversations: { working: 0, awaitingApproval: 0, queued: 0 },
    });
    expect(report.channels.map((c) => [c.name, c.state])).toEqual([["webchat", "connected"]]);
    expect(report.pool?.maxProcesses).toBeGreaterThanOrEqual(1);

    // Owner-only: the socket 0600 in a 0700 folder.
    const socket = statusSocketPath(g.home);
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(join(g.home, "run")).mode & 0o777).toBe(0o700);

    // The installed command (bin/parley.mjs over dist/) reaches the same gateway.
    const bin = spawn(process.execPath, [BIN, "status", "--json"], {
      env: { PATH: process.env.PATH ?? "", PARLEY_HOME: g.home },
    });
    let out = "";
    bin.stdout.on("data", (d) => {
      out += String(d);
    });
    const code = await new Promise<number | null>((resolve) => bin.on("exit", resolve));
    expect(code).toBe(0);
    expect((JSON.parse(out) as { healthy: boolean }).healthy).toBe(true);

    // After a shutdown: not running, and the socket is gone.
    await g.gateway.shutdown();
    expect((await status(g.home)).code).toBe(3);
    expect(existsSync(socket)).toBe(false);
  }, 60_000);

  it("exits 1 while a channel is down, naming it", async () => {
    const fake = await FakeTelegram.start({ lifetimeMs: 60_000 });
    fakes.push(fake);
    const g = await startGateway({
      raw: { telegram: { allowedUserIds: [4242], apiRoot: fake.apiRoot } },
      env: { TELEGRAM_BOT_TOKEN: fake.token },
      channels: [webchatChannel, telegramChannel],
    });
    started.push(g);
    await vi.waitFor(async () => expect((await status(g.home)).code).toBe(0), {
      timeout: 15_000,
      interval: 100,
    });
    await fake.pause();
    await vi.waitFor(async () => expect((await status(g.home)).code).toBe(1), {
      timeout: 20_000,
      interval: 200,
    });
    const text = await status(g.home);
    expect(text.out).toContain("running, DEGRADED");
    expect(text.out).toMatch(/✗ telegram: disconnected \(/);
    expect(text.out).toMatch(/✓ webchat: connected/);
    const report = JSON.parse((await status(g.home, true)).out) as Extract<StatusReport, { answering: true }>;
    expect(report.healthy).toBe(false);
    expect(report.notReady).toHaveLength(1);
    expect(report.notReady[0]).toMatch(/^telegram: disconnected/);
    await fake.resume();
    await vi.waitFor(async () => expect((await status(g.home)).code).toBe(0), {
      timeout: 30_000,
      interval: 200,
    });
  }, 90_000);

  it("exits 1 for a live process holding the lock that does not answer on the socket", async () => {
    const home = freshHome();
    // This test process is alive and holds no socket there.
    writeFileSync(join(home, "parley.lock"), `${process.pid}\n`);
    const text = await status(home);
    expect(text.code).toBe(1);
    expect(text.out).toContain(`parley is running on ${home} (pid ${process.pid}) but does not answer`);
    expect(JSON.parse((await status(home, true)).out)).toMatchObject({
      running: true,
      answering: false,
      pid: process.pid,
    });
  });

  it("is reachable as `npm start -- status` from a checkout", () => {
    expect(parleyArgs(["status"])).toEqual(["status"]);
    expect(parleyArgs(["status", "--json"])).toEqual(["status", "--json"]);
  });
});

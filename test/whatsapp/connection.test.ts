/**
 * The connection against the fake's sockets, on a manual clock: reconnects back off (a restart
 * request too) and only a socket that stayed up the minimum healthy time resets them; the final
 * endings stop it, are remembered in the data home for doctor, and only a removed device loses its
 * keys.
 */
import { existsSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { openAuthState } from "../../src/whatsapp/auth-state.js";
import type { FatalEnding } from "../../src/whatsapp/client.js";
import { defaultSocketOptions, WaConnection } from "../../src/whatsapp/client.js";
import { readEnded, writeEnded } from "../../src/whatsapp/endings.js";
import { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { ManualClock, settle } from "../helpers/manual-clock.js";
import { connected, fakeWhatsAppLab, linkedHome, selfChat } from "./harness.js";

let fake: FakeWhatsApp;
beforeEach(async () => {
  fake = await FakeWhatsApp.start({ lifetimeMs: 30_000 });
});
afterEach(async () => {
  await fake.stop();
});

async function connection(existing?: string) {
  const home = existing ?? (await linkedHome(fake));
  const clock = new ManualClock();
  const fatal: FatalEnding[] = [];
  const logger = new MemoryLogger();
  const conn = new WaConnection({
    createSocket: fake.createSocket,
    auth: await openAuthState(home),
    clock,
    logger,
    home,
    backoff: { initialMs: 1000, maxMs: 8000, minHealthyMs: 60_000 },
    // No jitter: 0.5 lands on the middle of ±20%.
    random: () => 0.5,
    onFatal: (ending) => fatal.push(ending),
  });
  conn.start();
  await settle();
  expect(conn.state).toBe("open");
  return { conn, clock, fatal, home, logger };
}

/** Drop the live socket; the delay the connection armed before its next attempt. */
async function drop(conn: WaConnection, clock: ManualClock, code: number): Promise<number | undefined> {
  fake.disconnect(code);
  expect(conn.state).toBe("waiting");
  const [delay] = clock.pendingDelays();
  await clock.advance(delay ?? 0);
  await settle();
  return delay;
}

describe("reconnecting", () => {
  it("backs off while sockets die young, up to the cap; a healthy socket starts it over", async () => {
    const { conn, clock } = await connection();
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 5; i++) delays.push(await drop(conn, clock, 428));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(conn.state).toBe("open");
    expect(conn.sockets).toBe(6);
    // Up a minute: the next drop is a fresh start, not attempt six.
    await clock.advance(60_000);
    expect(await drop(conn, clock, 408)).toBe(1000);
    // Up less than the minimum: the backoff goes on from there.
    await clock.advance(59_000);
    expect(await drop(conn, clock, 428)).toBe(2000);
    await conn.stop();
  });

  it("a restart request (515) backs off like any close: a loop of them is never a tight loop", async () => {
    const { conn, clock } = await connection();
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 3; i++) delays.push(await drop(conn, clock, 515));
    expect(delays).toEqual([1000, 2000, 4000]);
    expect(conn.state).toBe("open");
    await conn.stop();
  });

  it("device removed (a 401 device_removed conflict): stops for good, forgets the keys, remembers why", async () => {
    const { conn, clock, fatal, home } = await connection();
    expect(existsSync(join(home, "whatsapp", "creds.json"))).toBe(true);
    fake.removeDevice();
    await settle();
    expect(conn.state).toBe("stopped");
    expect(fatal).toEqual(["removed"]);
    expect(clock.pending).toBe(0);
    await clock.advance(10 * 60_000);
    expect(conn.sockets).toBe(1);
    await vi.waitFor(() => expect(existsSync(join(home, "whatsapp", "creds.json"))).toBe(false));
    await vi.waitFor(() => expect(readEnded(home)).toMatchObject({ ending: "removed", code: 401 }));
    await expect(conn.whenOpen(1000)).rejects.toThrow(/stopped/);
  });

  it("logged out (a 401 failure): stops for good, keeps the keys, remembers why", async () => {
    const { conn, clock, fatal, home, logger } = await connection();
    fake.disconnect(401, fake.live(), { reason: "401" });
    await settle();
    expect(conn.state).toBe("stopped");
    expect(fatal).toEqual(["logged_out"]);
    await clock.advance(10 * 60_000);
    expect(conn.sockets).toBe(1);
    expect(existsSync(join(home, "whatsapp", "creds.json"))).toBe(true);
    expect(readEnded(home)).toMatchObject({ ending: "logged_out", code: 401 });
    expect(
      logger.entries.some((e) => e.level === "error" && /logged this device out \(401\)/.test(e.message)),
    ).toBe(true);
  });

  it("restricted (403): stops for good and keeps the keys (a ban is not cured by re-linking)", async () => {
    const { conn, clock, fatal, home } = await connection();
    fake.restrict();
    await settle();
    expect(conn.state).toBe("stopped");
    expect(fatal).toEqual(["restricted"]);
    await clock.advance(10 * 60_000);
    expect(conn.sockets).toBe(1);
    expect(existsSync(join(home, "whatsapp", "creds.json"))).toBe(true);
    expect(readEnded(home)).toMatchObject({ ending: "restricted", code: 403 });
  });

  it("an outdated version (405 at connect) is final, said with the version, and never retried", async () => {
    await fake.stop();
    fake = await FakeWhatsApp.start({ lifetimeMs: 30_000, minVersion: [2, 3000, 1099999999] });
    const home = await linkedHome(fake);
    const clock = new ManualClock();
    const fatal: FatalEnding[] = [];
    const logger = new MemoryLogger();
    const conn = new WaConnection({
      createSocket: fake.createSocket,
      auth: await openAuthState(home),
      clock,
      logger,
      home,
      socketOptions: { ...defaultSocketOptions(), version: [2, 3000, 1] },
      onFatal: (ending) => fatal.push(ending),
    });
    conn.start();
    await settle();
    expect(conn.state).toBe("stopped");
    expect(fatal).toEqual(["outdated"]);
    expect(clock.pending).toBe(0);
    await clock.advance(60 * 60_000);
    expect(fake.socketCount).toBe(1);
    expect(readEnded(home)).toMatchObject({ ending: "outdated", code: 405, version: "2.3000.1" });
    expect(logger.entries.some((e) => /version 2\.3000\.1 as outdated \(405\)/.test(e.message))).toBe(true);
  });

  it("a connection that opens again forgets what ended the last one", async () => {
    const { conn, home } = await connection();
    await conn.stop();
    writeEnded(home, { ending: "replaced", code: 440, at: new Date(0).toISOString() });
    expect(readEnded(home)).toMatchObject({ ending: "replaced" });
    const again = await connection(home);
    expect(readEnded(home)).toBeNull();
    await again.conn.stop();
  });

  it("connection replaced: stops for good, keeps the keys, never fights the other client", async () => {
    const { conn, clock, fatal, home } = await connection();
    fake.replaceSession();
    await settle();
    expect(conn.state).toBe("stopped");
    expect(fatal).toEqual(["replaced"]);
    await clock.advance(10 * 60_000);
    expect(conn.sockets).toBe(1);
    expect(fake.socketCount).toBe(1);
    expect(existsSync(join(home, "whatsapp", "creds.json"))).toBe(true);
  });
});

describe("the channel on a final ending", () => {
  const lab = fakeWhatsAppLab();

  it("audits it, and answers nothing more", async () => {
    const c = await lab.channel({ overrides: { sendWaitMs: 50 } });
    await connected(c, lab.fake);
    lab.fake.disconnect(440);
    await lab.fake.waitFor(() => c.running.connection.state === "stopped", 5000, "the stop");
    expect(c.audit.find("whatsapp.connection", "failed").map((r) => r.fields.reason)).toEqual(["replaced"]);
    expect(c.logger.entries.some((e) => e.level === "error" && /another client/.test(e.message))).toBe(true);
    expect(() => selfChat(lab.fake, "anyone there?")).toThrow(/nobody is connected/);
  });
});

it("keys written owner-only, each key type baileys keeps in its own file", async () => {
  const home = mkdtempSync(join(tmpdir(), "parley-wa-keys-"));
  const auth = await openAuthState(home);
  await auth.state.keys.set({
    "lid-mapping": { "90000000001": "4917000000001", "90000000001_reverse": "90000000001" },
    "device-list": { "4917000000001": ["0", "12"] },
    tctoken: { "4917000000002@s.whatsapp.net": { token: Buffer.from("tok"), timestamp: "1" } },
  });
  const again = await openAuthState(home);
  expect(await again.state.keys.get("lid-mapping", ["90000000001"])).toEqual({
    "90000000001": "4917000000001",
  });
  expect(await again.state.keys.get("device-list", ["4917000000001"])).toEqual({
    "4917000000001": ["0", "12"],
  });
  const token = await again.state.keys.get("tctoken", ["4917000000002@s.whatsapp.net"]);
  expect(Buffer.from(token["4917000000002@s.whatsapp.net"]?.token ?? []).toString()).toBe("tok");
  const dir = join(home, "whatsapp");
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  const files = readdirSync(dir);
  expect(files.sort()).toEqual([
    "device-list-4917000000001.json",
    "lid-mapping-90000000001.json",
    "lid-mapping-90000000001_reverse.json",
    "tctoken-4917000000002@s%2ewhatsapp%2enet.json",
  ]);
  for (const f of files) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
  // An id can never name a path outside the folder.
  await auth.state.keys.set({ session: { "../../escape": new Uint8Array([1]) } });
  expect(readdirSync(home).sort()).toEqual(["whatsapp"]);
});

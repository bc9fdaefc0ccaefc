/**
 * `parley whatsapp link` and `unlink` against the fake: the QR code (or a pairing code) shown,
 * the scan, WhatsApp's restart after pairing, the keys written owner-only; unlinking logs the
 * device out and deletes the keys. Dispatch through the real command line is checked too.
 */
import { existsSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/gateway/cli.js";
import { acquireHomeLock } from "../../src/gateway/home-lock.js";
import type { ChannelCliContext } from "../../src/messaging/channel/contract.js";
import type { WhatsAppSettings } from "../../src/whatsapp/index.js";
import { whatsappSettingsSchema } from "../../src/whatsapp/index.js";
import { linkCommand, unlinkCommand } from "../../src/whatsapp/link.js";
import { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { linkedHome } from "./harness.js";

let fake: FakeWhatsApp;
beforeEach(async () => {
  fake = await FakeWhatsApp.start({ lifetimeMs: 30_000 });
});
afterEach(async () => {
  await fake.stop();
});

function cli(args: string[], home = mkdtempSync(join(tmpdir(), "parley-wa-link-"))) {
  const out: string[] = [];
  const err: string[] = [];
  const ctx: ChannelCliContext<WhatsAppSettings> = {
    settings: whatsappSettingsSchema.parse({ webSocketUrl: fake.webSocketUrl }),
    env: {},
    home,
    args,
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    stopSignal: () => new Promise(() => {}),
  };
  return { ctx, out, err, home };
}

describe("parley whatsapp link", () => {
  it("shows the QR code, and after the scan and WhatsApp's restart the keys are in the home", async () => {
    const { ctx, out, home } = cli([]);
    const linking = linkCommand(ctx, {
      createSocket: fake.createSocket,
      renderQr: (data) => `[QR of ${data}]`,
      timeoutMs: 5000,
    });
    await fake.waitFor(() => out.some((l) => l.includes("[QR of 2@fake-qr-")), 5000, "the QR code");
    expect(out[0]).toMatch(/^Scan this with WhatsApp → Settings → Linked devices → Link a device:/);
    fake.scan();
    expect(await linking).toBe(0);
    expect(out.at(-1)).toMatch(/^✓ Linked as \+49•+0001\. The keys are in .*whatsapp \(owner-only\)/);
    // The pairing's restart is followed at once by a new socket that opens with the new keys.
    expect(fake.socketCount).toBe(2);
    const dir = join(home, "whatsapp");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir)).toContain("creds.json");
    for (const f of readdirSync(dir)) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
  });

  it("without a QR renderer, prints the payload to draw", async () => {
    const { ctx, out } = cli([]);
    const linking = linkCommand(ctx, {
      createSocket: fake.createSocket,
      renderQr: () => null,
      timeoutMs: 5000,
    });
    await fake.waitFor(() => out.length > 0, 5000, "the QR text");
    expect(out[0]).toMatch(/qrencode/);
    expect(out[0]).toMatch(/\n2@fake-qr-\d+,/);
    fake.scan();
    expect(await linking).toBe(0);
  });

  it("--phone shows a pairing code instead, asked once for that number", async () => {
    const { ctx, out } = cli(["--phone", "+4917000000001"]);
    const linking = linkCommand(ctx, { createSocket: fake.createSocket, timeoutMs: 5000 });
    await fake.waitFor(() => out.some((l) => l.startsWith("Pairing code: PARL3YWA")), 5000, "the code");
    expect(out.some((l) => l.includes("Scan"))).toBe(false);
    expect(fake.records.filter((r) => r.kind === "pairing_code")).toEqual([
      { kind: "pairing_code", phone: "4917000000001" },
    ]);
    fake.scan();
    expect(await linking).toBe(0);
  });

  it("no scan in time: fails and leaves no keys", async () => {
    const { ctx, err, home } = cli([]);
    expect(
      await linkCommand(ctx, { createSocket: fake.createSocket, renderQr: () => null, timeoutMs: 200 }),
    ).toBe(1);
    expect(err.join("\n")).toMatch(/not linked/);
    expect(readdirSync(join(home, "whatsapp"))).toEqual([]);
  });

  it("a malformed --phone, or a stray word, is a usage error; an account already linked is said", async () => {
    expect(await linkCommand(cli(["--phone", "017012345"]).ctx, { createSocket: fake.createSocket })).toBe(2);
    expect(await linkCommand(cli(["now"]).ctx, { createSocket: fake.createSocket })).toBe(2);
    const home = await linkedHome(fake);
    const again = cli([], home);
    expect(await linkCommand(again.ctx, { createSocket: fake.createSocket })).toBe(0);
    expect(again.out[0]).toMatch(/^Already linked as \+49•+0001/);
    expect(fake.socketCount).toBe(0);
  });
});

describe("parley whatsapp unlink", () => {
  it("logs the device out and deletes its keys", async () => {
    const home = await linkedHome(fake);
    const { ctx, out } = cli([], home);
    expect(await unlinkCommand(ctx, { createSocket: fake.createSocket, timeoutMs: 5000 })).toBe(0);
    expect(fake.records.filter((r) => r.kind === "logout")).toHaveLength(1);
    expect(out.at(-1)).toMatch(/^✓ Unlinked \+49•+0001 and deleted its keys\./);
    expect(existsSync(join(home, "whatsapp", "creds.json"))).toBe(false);
  });

  it("deletes the keys even when WhatsApp cannot be reached, and says to remove the device on the phone", async () => {
    const home = await linkedHome(fake);
    const { ctx, out, err } = cli([], home);
    const unreachable = fake.createSocket;
    // A socket that never opens.
    const never: typeof unreachable = (auth) => {
      const sock = unreachable(auth);
      fake.forget(sock as never);
      (sock as unknown as { ended: boolean }).ended = true;
      return sock;
    };
    expect(await unlinkCommand(ctx, { createSocket: never, timeoutMs: 100 })).toBe(0);
    expect(err.join("\n")).toMatch(/could not reach WhatsApp/);
    expect(out.at(-1)).toMatch(/Also remove this device on your phone/);
    expect(existsSync(join(home, "whatsapp", "creds.json"))).toBe(false);
  });
});

describe("the command line", () => {
  it("`parley whatsapp <sub>` reaches the channel's own subcommands; a wrong one is a usage error", async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-wa-cli-"));
    const out: string[] = [];
    const io = {
      out: (l: string) => out.push(l),
      err: (l: string) => out.push(l),
      env: { PARLEY_HOME: home },
      cwd: home,
      stopSignal: () => new Promise<string>(() => {}),
    };
    expect(await runCli(["whatsapp", "unlink"], io)).toBe(0);
    expect(out).toContain("No WhatsApp account is linked here.");
    expect(await runCli(["whatsapp", "relink"], io)).toBe(2);
    // Never beside a running gateway (another live process holds the lock): it has the keys open.
    const lock = await acquireHomeLock(home, { pid: process.ppid });
    try {
      out.length = 0;
      expect(await runCli(["whatsapp", "unlink"], io)).toBe(1);
      expect(out.join("\n")).toMatch(/already running|another parley/i);
    } finally {
      await lock.release();
    }
  });
});

/**
 * `parley whatsapp link` and `unlink` against the fake: the QR code (or a pairing code) shown,
 * the scan, WhatsApp's restart after pairing, the keys written owner-only; unlinking logs the
 * device out and deletes the keys. Dispatch through the real command line is checked too.
 */
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/gateway/cli.js";
import { acquireHomeLock } from "../../src/gateway/home-lock.js";
import type { ChannelCliContext } from "../../src/messaging/channel/contract.js";
import { readEnded } from "../../src/whatsapp/endings.js";
import { readLinkedAccount } from "../../src/whatsapp/home.js";
import type { WhatsAppSettings } from "../../src/whatsapp/index.js";
import { whatsappSettingsSchema } from "../../src/whatsapp/index.js";
import { linkCommand, unlinkCommand } from "../../src/whatsapp/link.js";
import { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { CURRENT_VERSION, fetchedVersion, linkedHome } from "./harness.js";

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
      fetchVersion: fetchedVersion,
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
      fetchVersion: fetchedVersion,
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
    const linking = linkCommand(ctx, {
      createSocket: fake.createSocket,
      fetchVersion: fetchedVersion,
      timeoutMs: 5000,
    });
    await fake.waitFor(() => out.some((l) => l.startsWith("Pairing code: ")), 5000, "the code");
    expect(out.some((l) => l.includes("Scan"))).toBe(false);
    const asked = fake.records.flatMap((r) => (r.kind === "pairing_code" ? [r] : []));
    expect(asked.map((r) => r.phone)).toEqual(["4917000000001"]);
    expect(out.find((l) => l.startsWith("Pairing code: "))).toContain(asked[0]?.code);
    fake.enterCode(asked[0]?.code ?? "");
    expect(await linking).toBe(0);
  });

  it("--phone: when WhatsApp drops the code's socket (408), the dead code is replaced by a new one", async () => {
    const { ctx, out } = cli(["--phone", "+4917000000001"]);
    const linking = linkCommand(ctx, {
      createSocket: fake.createSocket,
      fetchVersion: fetchedVersion,
      timeoutMs: 10_000,
      backoffMs: 10,
    });
    await fake.waitFor(() => out.some((l) => l.startsWith("Pairing code: ")), 5000, "the first code");
    fake.disconnect(408);
    await fake.waitFor(
      () => fake.records.filter((r) => r.kind === "pairing_code").length === 2,
      5000,
      "a second code",
    );
    const codes = fake.records.flatMap((r) => (r.kind === "pairing_code" ? [r.code] : []));
    await fake.waitFor(
      () => out.filter((l) => l.startsWith("Pairing code: ")).length === 2,
      5000,
      "it shown",
    );
    expect(out.join("\n")).toMatch(/expired unused/);
    // The dead one links nothing; the live one does.
    expect(() => fake.enterCode(codes[0] ?? "")).toThrow(/links nothing/);
    fake.enterCode(codes[1] ?? "");
    expect(await linking).toBe(0);
  });

  it("a code that arrives after its socket closed is never printed", async () => {
    const { ctx, out } = cli(["--phone", "+4917000000001"]);
    // The first socket closes while its code is on the way.
    const slow: typeof fake.createSocket = (auth, options) => {
      const sock = fake.createSocket(auth, options);
      if (fake.socketCount === 1) {
        const ask = sock.requestPairingCode.bind(sock);
        sock.requestPairingCode = async (phone) => {
          const code = await ask(phone);
          fake.disconnect(408, sock as never);
          return code;
        };
      }
      return sock;
    };
    const linking = linkCommand(ctx, {
      createSocket: slow,
      fetchVersion: fetchedVersion,
      timeoutMs: 10_000,
      backoffMs: 10,
    });
    await fake.waitFor(() => out.some((l) => l.startsWith("Pairing code: ")), 5000, "a live code");
    const codes = fake.records.flatMap((r) => (r.kind === "pairing_code" ? [r.code] : []));
    expect(codes).toHaveLength(2);
    expect(out.join("\n")).not.toContain(codes[0]);
    expect(out.join("\n")).toContain(codes[1]);
    fake.enterCode(codes[1] ?? "");
    expect(await linking).toBe(0);
  });

  it("an interrupted --phone link (baileys wrote `me` already) is not a link, and the next one starts over", async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-wa-link-"));
    let stop: (reason: string) => void = () => {};
    const first = cli(["--phone", "+4917000000001"], home);
    first.ctx.stopSignal = () => new Promise((resolve) => (stop = resolve));
    const interrupted = linkCommand(first.ctx, {
      createSocket: fake.createSocket,
      fetchVersion: fetchedVersion,
      timeoutMs: 5000,
    });
    await fake.waitFor(() => first.out.some((l) => l.startsWith("Pairing code: ")), 5000, "the code");
    // Ctrl-C mid-pairing, with the creds as baileys left them (the link's cleanup never ran).
    writeFileSync(
      join(home, "whatsapp", "creds.json"),
      JSON.stringify({ me: { id: "4917000000001@s.whatsapp.net", name: "~" }, pairingCode: "ABCD1234" }),
    );
    stop("SIGINT");
    expect(await interrupted).toBe(1);
    writeFileSync(
      join(home, "whatsapp", "creds.json"),
      JSON.stringify({ me: { id: "4917000000001@s.whatsapp.net", name: "~" }, pairingCode: "ABCD1234" }),
    );
    expect(readLinkedAccount(home)).toBeNull();
    const again = cli(["--phone", "+4917000000001"], home);
    const linking = linkCommand(again.ctx, {
      createSocket: fake.createSocket,
      fetchVersion: fetchedVersion,
      timeoutMs: 5000,
    });
    await fake.waitFor(() => again.out.some((l) => l.startsWith("Pairing code: ")), 5000, "a fresh code");
    expect(again.out[0]).toMatch(/did not finish; starting over/);
    const codes = fake.records.flatMap((r) => (r.kind === "pairing_code" ? [r.code] : []));
    fake.enterCode(codes.at(-1) ?? "");
    expect(await linking).toBe(0);
    expect(readLinkedAccount(home)?.id).toMatch(/^4917000000001:12@/);
  });

  it("QR codes rotate, and when WhatsApp runs out of them (408) new ones follow until the scan", async () => {
    await fake.stop();
    fake = await FakeWhatsApp.start({ lifetimeMs: 30_000, qrFirstMs: 30, qrNextMs: 10, qrRefs: 3 });
    const { ctx, out } = cli([]);
    const linking = linkCommand(ctx, {
      createSocket: fake.createSocket,
      fetchVersion: fetchedVersion,
      renderQr: (d) => `[QR ${d}]`,
      timeoutMs: 10_000,
      backoffMs: 10,
    });
    await fake.waitFor(() => fake.socketCount >= 2 && out.length >= 4, 5000, "a second socket's code");
    expect(new Set(out.filter((l) => l.includes("[QR")).map((l) => l)).size).toBe(
      out.filter((l) => l.includes("[QR")).length,
    );
    fake.scan();
    expect(await linking).toBe(0);
  });

  it("a version WhatsApp refuses (405) ends the link at once, says so, and doctor's record keeps it", async () => {
    await fake.stop();
    fake = await FakeWhatsApp.start({ lifetimeMs: 30_000, minVersion: [2, 3000, 1099999999] });
    const { ctx, err, home } = cli([]);
    const stale = async () => ({ version: [2, 3000, 1] as [number, number, number], isLatest: true });
    expect(
      await linkCommand(ctx, {
        createSocket: fake.createSocket,
        fetchVersion: stale,
        timeoutMs: 5000,
        backoffMs: 10,
      }),
    ).toBe(1);
    expect(fake.socketCount).toBe(1);
    expect(err.join("\n")).toMatch(/refused the client version 2\.3000\.1 as outdated \(405\)/);
    expect(err.join("\n")).not.toMatch(/no scan in time/);
    expect(readEnded(home)).toMatchObject({ ending: "outdated", code: 405, version: "2.3000.1" });
  });

  it("asks WhatsApp Web for the version, and announces what it answered", async () => {
    const { ctx, out } = cli([]);
    const linking = linkCommand(ctx, {
      createSocket: fake.createSocket,
      fetchVersion: fetchedVersion,
      renderQr: () => null,
      timeoutMs: 5000,
    });
    await fake.waitFor(() => out.length > 0, 5000, "the QR");
    expect(fake.announced).toEqual([CURRENT_VERSION]);
    fake.scan();
    expect(await linking).toBe(0);
  });

  it("no scan in time: fails and leaves no keys", async () => {
    const { ctx, err, home } = cli([]);
    expect(
      await linkCommand(ctx, {
        createSocket: fake.createSocket,
        fetchVersion: fetchedVersion,
        renderQr: () => null,
        timeoutMs: 200,
      }),
    ).toBe(1);
    expect(err.join("\n")).toMatch(/not linked/);
    expect(readdirSync(join(home, "whatsapp"))).toEqual([]);
  });

  it("a malformed --phone, or a stray word, is a usage error; an account already linked is said", async () => {
    expect(
      await linkCommand(cli(["--phone", "017012345"]).ctx, {
        createSocket: fake.createSocket,
        fetchVersion: fetchedVersion,
      }),
    ).toBe(2);
    expect(
      await linkCommand(cli(["now"]).ctx, { createSocket: fake.createSocket, fetchVersion: fetchedVersion }),
    ).toBe(2);
    const home = await linkedHome(fake);
    const again = cli([], home);
    expect(
      await linkCommand(again.ctx, { createSocket: fake.createSocket, fetchVersion: fetchedVersion }),
    ).toBe(0);
    expect(again.out[0]).toMatch(/^Already linked as \+49•+0001/);
    expect(fake.socketCount).toBe(0);
  });
});

describe("parley whatsapp unlink", () => {
  it("logs the device out and deletes its keys", async () => {
    const home = await linkedHome(fake);
    const { ctx, out } = cli([], home);
    expect(
      await unlinkCommand(ctx, {
        createSocket: fake.createSocket,
        fetchVersion: fetchedVersion,
        timeoutMs: 5000,
      }),
    ).toBe(0);
    expect(fake.records.filter((r) => r.kind === "logout")).toHaveLength(1);
    expect(out.at(-1)).toMatch(/^✓ Unlinked \+49•+0001 and deleted its keys\./);
    expect(existsSync(join(home, "whatsapp", "creds.json"))).toBe(false);
  });

  it("deletes the keys even when WhatsApp cannot be reached, and says to remove the device on the phone", async () => {
    const home = await linkedHome(fake);
    const { ctx, out, err } = cli([], home);
    const unreachable = fake.createSocket;
    // A socket that never opens.
    const never: typeof unreachable = (auth, options) => {
      const sock = unreachable(auth, options);
      fake.forget(sock as never);
      (sock as unknown as { ended: boolean }).ended = true;
      return sock;
    };
    expect(
      await unlinkCommand(ctx, { createSocket: never, timeoutMs: 100, fetchVersion: fetchedVersion }),
    ).toBe(0);
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

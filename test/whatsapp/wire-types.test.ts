/**
 * The WaSocket port is honest: baileys' real socket type satisfies it (so the channel calls nothing
 * the real socket lacks, and the fake implements the same shape), and the real socket built from
 * parley's settings dials exactly `whatsapp.webSocketUrl`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { makeWASocket } from "@whiskeysockets/baileys";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { openAuthState } from "../../src/whatsapp/auth-state.js";
import { baileysSocketFactory, defaultSocketOptions } from "../../src/whatsapp/client.js";
import type { WaSocket } from "../../src/whatsapp/wire.js";
import { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import type { FakeSocket } from "../fakes/whatsapp/socket.js";

type RealSocket = ReturnType<typeof makeWASocket>;

describe("the WaSocket port", () => {
  it("is satisfied by makeWASocket's return type, and by the fake", () => {
    // Checked by `tsc` (npm run typecheck): a port member the real socket lacks fails the build.
    expectTypeOf<RealSocket>().toExtend<WaSocket>();
    expectTypeOf<FakeSocket>().toExtend<WaSocket>();
    // The check has teeth: a member baileys does not have would not be satisfied.
    expectTypeOf<RealSocket>().not.toExtend<WaSocket & { sendButtons(): void }>();
  });
});

describe("the real socket", () => {
  let fake: FakeWhatsApp | undefined;
  afterEach(async () => {
    await fake?.stop();
  });

  it("dials the configured socket URL and speaks baileys' own handshake there", async () => {
    fake = await FakeWhatsApp.start({ lifetimeMs: 20_000 });
    const home = mkdtempSync(join(tmpdir(), "parley-wa-real-"));
    const auth = await openAuthState(home);
    const create = baileysSocketFactory({ webSocketUrl: fake.webSocketUrl }, new MemoryLogger());
    const sock = create(auth.state, defaultSocketOptions());
    try {
      const world = fake;
      await world.waitFor(() => world.wsConnections[0]?.firstFrame != null, 10_000, "baileys' first frame");
      const conn = world.wsConnections[0];
      expect(conn?.path).toBe("/ws/chat");
      // The Noise prologue WhatsApp Web opens with: "WA", then the protocol version.
      expect(conn?.firstFrame?.subarray(0, 2).toString("latin1")).toBe("WA");
    } finally {
      await Promise.resolve(sock.end(undefined)).catch(() => undefined);
    }
  }, 20_000);
});

/**
 * `whatsapp.proxyUrl` carries both of WhatsApp's connections: the real baileys socket tunnels
 * through it to `whatsapp.webSocketUrl`, and parley's own media downloads do too.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { openAuthState } from "../../src/whatsapp/auth-state.js";
import { baileysSocketFactory, defaultSocketOptions } from "../../src/whatsapp/client.js";
import { LoopbackProxy } from "../fakes/whatsapp/proxy.js";
import { connected, done, fakeWhatsAppLab, PNG, selfChat, text } from "./harness.js";

const lab = fakeWhatsAppLab();
let proxy: LoopbackProxy | undefined;
afterEach(async () => {
  await proxy?.stop();
  proxy = undefined;
});

const fakeHost = () => new URL(lab.fake.origin).host;

describe("whatsapp.proxyUrl", () => {
  it("the real socket reaches the socket URL through the proxy, credentials included", async () => {
    const p = await LoopbackProxy.start();
    proxy = p;
    const auth = await openAuthState(mkdtempSync(join(tmpdir(), "parley-wa-proxy-")));
    const create = baileysSocketFactory(
      { webSocketUrl: lab.fake.webSocketUrl, proxyUrl: p.url },
      new MemoryLogger(),
    );
    const sock = create(auth.state, defaultSocketOptions());
    try {
      await lab.fake.waitFor(() => lab.fake.wsConnections[0]?.firstFrame != null, 10_000, "the handshake");
      expect(p.tunnels).toEqual([{ target: fakeHost(), authorized: true }]);
    } finally {
      await Promise.resolve(sock.end(undefined)).catch(() => undefined);
    }
  }, 20_000);

  it("a file the operator sends is downloaded through the proxy", async () => {
    const p = await LoopbackProxy.start();
    proxy = p;
    const c = await lab.channel({
      whatsapp: { proxyUrl: p.url },
      turns: () => [[text("got the picture"), done]],
      promptCapabilities: { image: true },
    });
    await connected(c, lab.fake);
    const message = await lab.fake.mediaMessage({ kind: "image", bytes: PNG, mimetype: "image/png" });
    selfChat(lab.fake, { message });
    await lab.fake.waitFor(() => lab.fake.visible().some((v) => v.includes("got the picture")), 5000);
    expect(lab.fake.downloads).toHaveLength(1);
    expect(p.tunnels).toEqual([{ target: fakeHost(), authorized: true }]);
  });
});

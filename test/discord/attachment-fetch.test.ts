/**
 * The inbound file fetcher on its own: the allowed-origin rule (HTTPS, a Discord CDN host, the
 * default port; plus exactly the configured apiBase origin), and the download against the loopback
 * fake CDN: exact bytes, no Authorization header, redirects answered but never followed, a foreign
 * host never contacted, a stalled download ended by the (injected) clock, a backstop on bytes READ,
 * and an early stop that hangs up instead of draining.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  AttachmentUrlRefused,
  admitAttachmentUrl,
  discordAttachment,
} from "../../src/discord/attachments.js";
import { FakeDiscord } from "../fakes/discord/server.js";
import { ManualClock, settle } from "../helpers/manual-clock.js";

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8]);

describe("admitAttachmentUrl", () => {
  it.each([
    "https://cdn.discordapp.com/attachments/1/2/a.png?ex=1&is=2&hm=3",
    "https://media.discordapp.net/attachments/1/2/a.png",
    "https://CDN.DiscordApp.com/attachments/1/2/a.png",
    "https://cdn.discordapp.com:443/attachments/1/2/a.png",
  ])("admits %s", (url) => {
    expect(admitAttachmentUrl(url).hostname).toMatch(/^(cdn|media)\.discordapp\.(com|net)$/);
  });

  it.each([
    ["http://cdn.discordapp.com/a.png", /only HTTPS/],
    ["https://cdn.discordapp.com.evil.example/a.png", /not Discord's file server/],
    ["https://evilcdn.discordapp.com/a.png", /not Discord's file server/],
    ["https://cdn.discordapp.com./a.png", /not Discord's file server/],
    ["https://discord.com/api/v10/users/@me", /not Discord's file server/],
    ["https://cdn.discordapp.com:8443/a.png", /non-default port/],
    ["https://user:pw@cdn.discordapp.com/a.png", /credentials/],
    ["", /no valid URL/],
    ["attachments/1/2/a.png", /no valid URL/],
    ["file:///etc/passwd", /only HTTPS/],
  ])("refuses %s", (url, reason) => {
    expect(() => admitAttachmentUrl(url)).toThrow(AttachmentUrlRefused);
    expect(() => admitAttachmentUrl(url)).toThrow(reason);
  });

  it("admits the configured apiBase's exact origin, and nothing near it", () => {
    const base = "http://127.0.0.1:4567/api";
    expect(admitAttachmentUrl("http://127.0.0.1:4567/attachments/1/a.png", base).port).toBe("4567");
    expect(() => admitAttachmentUrl("http://127.0.0.1:4568/attachments/1/a.png", base)).toThrow(/HTTPS/);
    expect(() => admitAttachmentUrl("https://127.0.0.1:4567/a.png", base)).toThrow(/file server/);
    expect(() => admitAttachmentUrl("http://localhost:4567/a.png", base)).toThrow(AttachmentUrlRefused);
    // Without a configured base the loopback is just a foreign host.
    expect(() => admitAttachmentUrl("http://127.0.0.1:4567/attachments/1/a.png")).toThrow(
      AttachmentUrlRefused,
    );
  });
});

/** A server that must never be contacted: it records every request it gets. */
async function foreignServer(): Promise<{ url: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200, { "content-type": "image/png" }).end(PNG);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

async function drain(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of source) parts.push(chunk);
  return Buffer.concat(parts);
}

describe("discordAttachment: the download", () => {
  let fake: FakeDiscord;
  let foreign: Awaited<ReturnType<typeof foreignServer>>;
  const signal = () => new AbortController().signal;

  beforeEach(async () => {
    fake = await new FakeDiscord().start();
    foreign = await foreignServer();
  });
  afterEach(async () => {
    await fake.close();
    await new Promise<void>((resolve) => foreign.server.close(() => resolve()));
  });

  const source = (d: { filename: string; url: string; size?: number }, opts = {}) =>
    discordAttachment(
      { name: d.filename, ref: d.url, ...(d.size !== undefined ? { size: d.size } : {}) },
      { extraOrigin: fake.apiBase, ...opts },
    );

  it("reads the exact bytes, lazily, and sends no Authorization header", async () => {
    const d = fake.attachment({ filename: "a.png", bytes: PNG, contentType: "image/png" });
    const att = source(d);
    expect(att).toMatchObject({ name: "a.png", size: PNG.length });
    expect(fake.cdnRequests).toHaveLength(0);
    expect(await drain(att.read(signal()))).toEqual(Buffer.from(PNG));
    expect(fake.cdnRequestsFor(d.id)).toHaveLength(1);
    expect(fake.cdnRequests[0]?.headers.authorization).toBeUndefined();
    expect(fake.cdnRequests[0]?.headers.cookie).toBeUndefined();
  });

  it("answers a redirect with a refusal and never contacts its target", async () => {
    const d = fake.attachment({ filename: "a.png", redirectTo: `${foreign.url}/a.png` });
    await expect(drain(source(d).read(signal()))).rejects.toThrow(/redirect/);
    expect(fake.cdnRequestsFor(d.id)).toHaveLength(1);
    expect(foreign.hits).toEqual([]);
  });

  it("refuses a foreign host before any connection", async () => {
    await expect(
      drain(source({ filename: "a.png", url: `${foreign.url}/attachments/1/a.png` }).read(signal())),
    ).rejects.toThrow(/HTTPS|file server/);
    await expect(
      drain(
        source({ filename: "a.png", url: "https://cdn.discordapp.com.evil.example/a.png" }).read(signal()),
      ),
    ).rejects.toThrow(/not Discord's file server/);
    expect(foreign.hits).toEqual([]);
  });

  it("a non-2xx answer is a failure naming the status", async () => {
    const url = `${fake.apiBase.replace(/\/api$/, "")}/attachments/999/missing.png`;
    await expect(drain(source({ filename: "missing.png", url }).read(signal()))).rejects.toThrow(/HTTP 404/);
  });

  it("a stalled download ends when the injected clock passes the timeout", async () => {
    const clock = new ManualClock();
    const d = fake.attachment({ filename: "slow.png", stall: true });
    const reading = drain(source(d, { timers: clock, timeoutMs: 5_000 }).read(signal()));
    const outcome = reading.then(
      () => "resolved",
      (e: Error) => e.message,
    );
    await expect.poll(() => fake.cdnRequestsFor(d.id).length).toBe(1);
    await clock.advance(4_999);
    await settle();
    expect(await Promise.race([outcome, Promise.resolve("pending")])).toBe("pending");
    await clock.advance(1);
    expect(await outcome).toBe("the download took longer than 5 s");
    await expect.poll(() => fake.cdnRequestsFor(d.id)[0]?.closedEarly).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it("the backstop counts bytes read, not the claimed length, and hangs up", async () => {
    const d = fake.attachment({
      filename: "big.png",
      declaredSize: 10,
      stream: { head: PNG, total: 8 * 1024 * 1024 },
    });
    await expect(drain(source(d, { maxBytes: 256 * 1024 }).read(signal()))).rejects.toThrow(
      /larger than any allowed size/,
    );
    const [req] = fake.cdnRequestsFor(d.id);
    await expect.poll(() => req?.closedEarly).toBe(true);
    expect(req?.served).toBeLessThan(8 * 1024 * 1024);
  });

  it("a reader that stops early (the ingest's cap) releases the connection", async () => {
    const d = fake.attachment({ filename: "big.png", stream: { head: PNG, total: 16 * 1024 * 1024 } });
    const it = source(d).read(signal())[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    await it.return?.();
    const [req] = fake.cdnRequestsFor(d.id);
    await expect.poll(() => req?.closedEarly).toBe(true);
    expect(req?.served).toBeLessThan(16 * 1024 * 1024);
  });

  it("an aborted turn stops the download with the turn's reason", async () => {
    const d = fake.attachment({ filename: "slow.png", stall: true });
    const turn = new AbortController();
    const reading = drain(source(d).read(turn.signal));
    await expect.poll(() => fake.cdnRequestsFor(d.id).length).toBe(1);
    turn.abort(new Error("stopped by the user"));
    await expect(reading).rejects.toThrow("stopped by the user");
  });
});

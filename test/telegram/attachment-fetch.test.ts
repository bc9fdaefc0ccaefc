/**
 * The Telegram file source on its own, against the loopback fake through grammY's real client:
 * nothing requested until read; getFile, then exactly `/file/bot<token>/<file_path>` on the
 * apiRoot's origin, exact bytes, no Authorization header; a declared or reported size over the
 * Bot API's 20 MiB refused before the request it would cost; redirects answered but never
 * followed; a non-2xx answer named; a file_path that would leave the file prefix refused; a stalled
 * download ended by the injected clock; a byte backstop on what is READ; an early stop that hangs
 * up; the turn's abort reason; and no error that ever carries the token.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TelegramFileOptions } from "../../src/telegram/attachments.js";
import { fileDownloadUrl, telegramAttachment, withoutToken } from "../../src/telegram/attachments.js";
import type { TelegramOps } from "../../src/telegram/wire.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { ManualClock, opsFor, settle } from "./helpers.js";

const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 2, 3, 4, 5]);
const MiB = 1024 * 1024;

async function foreignServer(): Promise<{ url: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200).end(JPEG);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

async function drain(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of source) parts.push(chunk);
  return Buffer.concat(parts);
}

/** The rejection's message (or "resolved"), so a leak check can read it. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );

let fake: FakeTelegram;
let foreign: Awaited<ReturnType<typeof foreignServer>>;
let ops: TelegramOps;
const signal = () => new AbortController().signal;

beforeEach(async () => {
  fake = await FakeTelegram.start({ lifetimeMs: 30_000 });
  foreign = await foreignServer();
  ops = opsFor(fake);
});
afterEach(async () => {
  // The bot token never travels in a header to the file server, in any test.
  for (const r of fake.fileRequests) expect(r.headers.authorization).toBeUndefined();
  expect(fake.overflowed).toBe(false);
  await fake.stop();
  await new Promise<void>((resolve) => foreign.server.close(() => resolve()));
});

const options = (extra: Partial<TelegramFileOptions> = {}): TelegramFileOptions => ({
  token: fake.token,
  apiRoot: fake.apiRoot,
  ...extra,
});
const source = (
  file: { file_id: string; file_size?: number },
  extra: Partial<TelegramFileOptions> = {},
  name = "a.jpg",
) =>
  telegramAttachment(
    { name, ref: file.file_id, ...(file.file_size !== undefined ? { size: file.file_size } : {}) },
    ops,
    options(extra),
  );

describe("telegramAttachment: lookup and download", () => {
  it("reads the exact bytes, lazily: getFile, then the token's file path on the apiRoot", async () => {
    const file = fake.hostFile({ bytes: JPEG, folder: "photos" });
    const att = source(file);
    expect(att).toMatchObject({ name: "a.jpg", size: JPEG.length });
    expect(fake.callsOf("getFile")).toHaveLength(0);
    expect(await drain(att.read(signal()))).toEqual(Buffer.from(JPEG));
    expect(fake.callsOf("getFile").map((c) => c.params)).toEqual([{ file_id: file.file_id }]);
    expect(fake.fileRequestsFor(file.file_id)).toHaveLength(1);
    expect(fake.fileRequests[0]?.filePath).toMatch(/^photos\/file_\d+\.bin$/);
    expect(fake.fileRequests[0]?.headers.cookie).toBeUndefined();
  });

  it("a declared size over the 20 MiB download limit is refused without any request", async () => {
    const file = fake.hostFile({ bytes: JPEG, fileSize: 21 * MiB });
    expect(await failure(drain(source(file).read(signal())))).toBe(
      "Telegram lets bots download files of at most 20 MiB",
    );
    expect(fake.callsOf("getFile")).toHaveLength(0);
    expect(fake.fileRequests).toHaveLength(0);
  });

  it("a file the message under-declared is refused by getFile, and no download follows", async () => {
    const file = fake.hostFile({ bytes: JPEG, fileSize: 21 * MiB });
    // The message claimed 10 bytes; Telegram's own lookup knows better and offers no link.
    const att = telegramAttachment({ name: "big.bin", ref: file.file_id, size: 10 }, ops, options());
    expect(await failure(drain(att.read(signal())))).toBe(
      "Telegram refused the file (Bad Request: file is too big)",
    );
    expect(fake.callsOf("getFile")).toHaveLength(1);
    expect(fake.fileRequests).toHaveLength(0);
  });

  it("an unknown file_id is Telegram's refusal, named", async () => {
    const att = telegramAttachment({ name: "x.pdf", ref: "NOPE" }, ops, options());
    expect(await failure(drain(att.read(signal())))).toBe(
      "Telegram refused the file (Bad Request: invalid file_id)",
    );
    expect(fake.fileRequests).toHaveLength(0);
  });

  it("getFile without a file_path is refused without a download", async () => {
    const file = fake.hostFile({ bytes: JPEG, filePath: null });
    expect(await failure(drain(source(file).read(signal())))).toBe(
      "Telegram offered no download for this file",
    );
    expect(fake.fileRequests).toHaveLength(0);
  });

  it("answers a redirect with a refusal and never contacts its target", async () => {
    const file = fake.hostFile({ redirectTo: `${foreign.url}/stolen.jpg` });
    expect(await failure(drain(source(file).read(signal())))).toBe(
      "Telegram's file server answered with a redirect, which is not followed",
    );
    expect(fake.fileRequestsFor(file.file_id)).toHaveLength(1);
    expect(foreign.hits).toEqual([]);
  });

  it("a non-2xx answer is a failure naming the status", async () => {
    const file = fake.hostFile({ status: 502 });
    expect(await failure(drain(source(file).read(signal())))).toBe(
      "Telegram's file server answered HTTP 502",
    );
  });

  it.each([
    ["../../bot-elsewhere/getMe", /not a plain relative path/],
    ["documents/../../x", /not a plain relative path/],
    ["/var/lib/telegram-bot-api/123/documents/file_1.pdf", /path on its own disk/],
    ["documents//file.pdf", /not a plain relative path/],
  ])("a file_path %s is refused without a download", async (filePath, reason) => {
    const file = fake.hostFile({ bytes: JPEG, filePath });
    expect(await failure(drain(source(file).read(signal())))).toMatch(reason);
    expect(fake.fileRequests).toHaveLength(0);
  });

  it("a stalled download ends when the injected clock passes the timeout", async () => {
    const clock = new ManualClock();
    const file = fake.hostFile({ stall: true });
    const outcome = failure(drain(source(file, { timers: clock, timeoutMs: 5_000 }).read(signal())));
    await expect.poll(() => fake.fileRequestsFor(file.file_id).length).toBe(1);
    await clock.advance(4_999);
    await settle();
    expect(await Promise.race([outcome, Promise.resolve("pending")])).toBe("pending");
    await clock.advance(1);
    expect(await outcome).toBe("the download took longer than 5 s");
    await expect.poll(() => fake.fileRequestsFor(file.file_id)[0]?.closedEarly).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it("the backstop counts bytes read, not the claimed size, and hangs up", async () => {
    const file = fake.hostFile({ stream: { head: JPEG, total: 8 * MiB }, fileSize: 10 });
    expect(await failure(drain(source(file, { maxBytes: 256 * 1024 }).read(signal())))).toBe(
      "the file is larger than any allowed size",
    );
    const [req] = fake.fileRequestsFor(file.file_id);
    await expect.poll(() => req?.closedEarly).toBe(true);
    expect(req?.served).toBeLessThan(8 * MiB);
  });

  it("a reader that stops early (the ingest's cap) releases the connection", async () => {
    const file = fake.hostFile({ stream: { head: JPEG, total: 16 * MiB } });
    const it = source(file).read(signal())[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    await it.return?.();
    const [req] = fake.fileRequestsFor(file.file_id);
    await expect.poll(() => req?.closedEarly).toBe(true);
    expect(req?.served).toBeLessThan(16 * MiB);
  });

  it("an aborted turn stops the download with the turn's reason", async () => {
    const file = fake.hostFile({ stall: true });
    const turn = new AbortController();
    const reading = drain(source(file).read(turn.signal));
    await expect.poll(() => fake.fileRequestsFor(file.file_id).length).toBe(1);
    const reason = new Error("stopped by the user");
    turn.abort(reason);
    await expect(reading).rejects.toBe(reason);
  });

  it("without download settings every file is refused, without a request", async () => {
    const file = fake.hostFile({ bytes: JPEG });
    const att = telegramAttachment({ name: "a.jpg", ref: file.file_id }, ops, undefined);
    expect(await failure(drain(att.read(signal())))).toMatch(/not set up to download/);
    expect(fake.calls.filter((c) => c.method === "getFile")).toHaveLength(0);
  });
});

describe("the token stays out of every error", () => {
  it("a transport error that quotes the URL reaches the ingest without the token", async () => {
    const file = fake.hostFile({ bytes: JPEG });
    // An HTTP client that, like some do, names the URL it failed on (and chains a cause that does too).
    const leaky: typeof fetch = async (input) => {
      throw new Error(`request to ${String(input)} failed`, {
        cause: new Error(`connect ECONNREFUSED ${String(input)}`),
      });
    };
    const message = await failure(drain(source(file, { fetch: leaky }).read(signal())));
    expect(message).toMatch(
      /^request to http:\/\/127\.0\.0\.1:\d+\/file\/bot<token>\/documents\/file_\d+\.bin failed$/,
    );
    expect(message).not.toContain(fake.token);
    expect(message).not.toContain(encodeURIComponent(fake.token));
  });

  it("withoutToken keeps an error that names no token (an abort reason keeps its identity)", () => {
    const reason = new Error("stopped by the user");
    expect(withoutToken(reason, "123:abc")).toBe(reason);
    const viaCause = withoutToken(
      new Error("fetch failed", { cause: new Error("GET /file/bot123%3Aabc/x") }),
      "123:abc",
    );
    expect(viaCause).toBeInstanceOf(Error);
    expect((viaCause as Error).message).toBe("fetch failed");
    expect((viaCause as Error).cause).toBeUndefined();
  });
});

describe("fileDownloadUrl", () => {
  it("is the apiRoot's origin and path, then /file/bot<token>/, then the encoded segments", () => {
    expect(fileDownloadUrl(undefined, "1:A", "photos/file_1.jpg").href).toBe(
      "https://api.telegram.org/file/bot1:A/photos/file_1.jpg",
    );
    expect(fileDownloadUrl("http://127.0.0.1:8081/tg/", "1:A", "voice/a b#c?.oga").href).toBe(
      "http://127.0.0.1:8081/tg/file/bot1:A/voice/a%20b%23c%3F.oga",
    );
  });

  it.each(["..", "a/../..", "a/./b", "", "a\\..\\b", "C:\\files\\x"])("refuses %j", (p) => {
    expect(() => fileDownloadUrl(undefined, "1:A", p)).toThrow(/plain relative path|own disk/);
  });
});

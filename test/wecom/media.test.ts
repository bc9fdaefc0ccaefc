/**
 * Inbound media: both key encodings, the hand-checked PKCS#7 pad (a bad one is an audited refusal,
 * never a crash), the cap on bytes READ (a file at exactly 20 MB still decrypts), expired URLs,
 * hosts that were not admitted (never fetched), all through the shared ingest and the fake's HTTP.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundAttachment } from "../../src/messaging/channel/transport.js";
import type { IngestResult } from "../../src/messaging/files/ingest.js";
import { withIngestedAttachments } from "../../src/messaging/files/ingest.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { contentOf, mediaSource, WECOM_INGEST_LIMITS } from "../../src/wecom/attachments.js";
import { WECOM_MAX_PLAINTEXT_BYTES } from "../../src/wecom/limits.js";
import { decodeMediaKey, decryptMedia, MediaError } from "../../src/wecom/media.js";
import { OriginPolicy, parseOrigin } from "../../src/wecom/origins.js";
import { encodeMediaKey, encryptMedia, newMediaKey } from "../fakes/wecom/media.js";
import { FakeWeCom } from "../fakes/wecom/server.js";

let fake: FakeWeCom;
let now = 1_000_000;
beforeEach(async () => {
  now = 1_000_000;
  fake = await FakeWeCom.start({ now: () => now });
});
afterEach(async () => {
  await fake.stop();
});

async function* chunks(buf: Buffer, size = 1000): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of source) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

function ingest(refs: InboundAttachment[], audit: MemoryAuditSink, origins = [fake.origin]) {
  const tmpRoot = mkdtempSync(join(tmpdir(), "parley-wecom-media-"));
  const sources = refs.map((r) =>
    mediaSource(r, { origins: new OriginPolicy(origins), audit, timers: { setTimeout, clearTimeout } }),
  );
  return {
    tmpRoot,
    run: () =>
      withIngestedAttachments(sources, WECOM_INGEST_LIMITS, async (r: IngestResult) => r, { tmpRoot }),
  };
}

const image = (media: { url: string; aeskey: string }) =>
  contentOf({ msgtype: "image", image: media }).attachments;

describe("the key", () => {
  it("decodes the SDK's base64 key, and the tolerated hex form, to the same 32 bytes", () => {
    const key = newMediaKey();
    expect(decodeMediaKey(encodeMediaKey(key))).toEqual(key);
    // Tolerated input, not a documented form: base64 of the key's 64 ASCII hex digits.
    expect(decodeMediaKey(Buffer.from(key.toString("hex"), "ascii").toString("base64"))).toEqual(key);
    // Unpadded base64 decodes as the SDK's Buffer.from(aeskey, "base64") would.
    expect(decodeMediaKey(encodeMediaKey(key).replace(/=+$/, ""))).toEqual(key);
  });

  it("refuses anything else: wrong lengths, and 64 bytes that are not strictly hex", () => {
    expect(() => decodeMediaKey(Buffer.alloc(16).toString("base64"))).toThrow(MediaError);
    expect(() => decodeMediaKey(Buffer.from("g".repeat(64)).toString("base64"))).toThrow(/32-byte/);
    expect(() => decodeMediaKey(Buffer.from(`${"a".repeat(63)} `).toString("base64"))).toThrow(MediaError);
    expect(() => decodeMediaKey("not base64 at all!")).toThrow(/not base64/);
  });
});

describe("decryption", () => {
  it("round-trips every length around the 32-byte block, streamed in odd chunk sizes", async () => {
    const key = newMediaKey();
    for (const n of [0, 1, 15, 16, 31, 32, 33, 63, 64, 1000]) {
      const plain = Buffer.from(Array.from({ length: n }, (_, i) => i % 251));
      const cipher = encryptMedia(plain, key);
      expect(cipher.length % 32).toBe(0);
      expect(cipher.length).toBeGreaterThan(n);
      expect(await collect(decryptMedia(chunks(cipher, 7), key))).toEqual(plain);
    }
  });

  it("a bad pad, a ragged length or an empty body is a MediaError, never a crash or garbage", async () => {
    const key = newMediaKey();
    for (const n of [0, 5, 31, 32, 40]) {
      const bad = encryptMedia(Buffer.alloc(n, 7), key, { badPad: true });
      await expect(collect(decryptMedia(chunks(bad), key))).rejects.toMatchObject({ reason: "bad_padding" });
    }
    const good = encryptMedia(Buffer.alloc(40, 1), key);
    await expect(collect(decryptMedia(chunks(good.subarray(0, 48)), key))).rejects.toMatchObject({
      reason: "bad_length",
    });
    await expect(collect(decryptMedia(chunks(Buffer.alloc(0)), key))).rejects.toMatchObject({
      reason: "bad_length",
    });
    // The wrong key: the pad check catches it (with overwhelming probability) instead of garbage.
    await expect(collect(decryptMedia(chunks(good), newMediaKey()))).rejects.toMatchObject({
      reason: "bad_padding",
    });
  });
});

describe("through the ingest, from the fake's media server", () => {
  it("an image and a file are read, decrypted, classified and deleted", async () => {
    // A file callback carries url and aeskey only (aibot-node-sdk src/types/message.ts FileContent): no name.
    const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(200, 3)]);
    const refs = [
      ...image(fake.hostMedia(png)),
      ...contentOf({
        msgtype: "file",
        file: fake.hostMedia(Buffer.from("hello, world\n")),
      }).attachments,
    ];
    expect(refs.map((r) => r.name)).toEqual(["image", "file"]);
    const audit = new MemoryAuditSink();
    const { run, tmpRoot } = ingest(refs, audit);
    const result = await run();
    expect(result.refusals).toEqual([]);
    expect(result.files.map((f) => [f.kind, f.size])).toEqual([
      ["image", png.length],
      ["text", 13],
    ]);
    expect(result.files[1]?.text).toBe("hello, world\n");
    expect(readdirSync(tmpRoot)).toEqual([]);
  });

  it("a bad pad is an audited refusal the user is told about; the rest of the message still arrives", async () => {
    const refs = [
      ...image(fake.hostMedia(Buffer.alloc(100, 1), { badPad: true })),
      ...contentOf({ msgtype: "file", file: fake.hostMedia(Buffer.from("ok\n")) }).attachments,
    ];
    const audit = new MemoryAuditSink();
    const result = await ingest(refs, audit).run();
    expect(result.refusals.map((r) => [r.index, r.reason])).toEqual([[0, "read_failed"]]);
    expect(result.refusals[0]?.message).toContain("padding is invalid");
    expect(result.files).toHaveLength(1);
    expect(audit.find("wecom.media", "refused").map((r) => r.fields.reason)).toEqual(["bad_padding"]);
  });

  it("a file at exactly 20 MB decrypts: the cap counts its 32 bytes of padding", async () => {
    const plain = Buffer.alloc(WECOM_MAX_PLAINTEXT_BYTES, 0);
    Buffer.from("%PDF-1.7\n").copy(plain);
    const audit = new MemoryAuditSink();
    const result = await ingest(
      contentOf({ msgtype: "file", file: fake.hostMedia(plain) }).attachments,
      audit,
    ).run();
    expect(result.refusals).toEqual([]);
    expect(result.files.map((f) => [f.kind, f.size])).toEqual([["document", WECOM_MAX_PLAINTEXT_BYTES]]);
  }, 60_000);

  it("a body longer than any cap (whatever it claims) is cut off at the bytes read", async () => {
    const media = fake.hostMedia(Buffer.alloc(64, 1), { streamTotal: 40 * 1024 * 1024 });
    const audit = new MemoryAuditSink();
    const result = await ingest(image(media), audit).run();
    // Whichever bound trips first (the ingest's on plaintext, the download's on ciphertext), it is
    // a count of bytes read: nothing claimed a length here at all.
    expect(result.refusals).toHaveLength(1);
    expect(result.refusals[0]?.message).toMatch(/larger than/);
  }, 60_000);

  it("an expired URL is refused by the server and reported, never retried as something else", async () => {
    const media = fake.hostMedia(Buffer.alloc(64, 1), { ttlMs: 5 * 60_000 });
    now += 6 * 60_000;
    const result = await ingest(image(media), new MemoryAuditSink()).run();
    expect(result.refusals[0]?.message).toContain("HTTP 403");
    // The refusal line quotes no URL (it is signed) and no key.
    expect(result.refusals[0]?.message).not.toContain("sign=");
    expect(fake.mediaRequests).toHaveLength(1);
  });

  it("a URL on a host nobody admitted is never fetched, and the refusal is audited", async () => {
    const media = fake.hostMedia(Buffer.alloc(64, 1));
    const audit = new MemoryAuditSink();
    const result = await ingest(image(media), audit, [
      "https://ww-aibot-img-1258476243.cos.ap-guangzhou.myqcloud.com",
    ]).run();
    expect(result.refusals.map((r) => r.reason)).toEqual(["read_failed"]);
    expect(fake.mediaRequests).toEqual([]);
    expect(audit.find("wecom.media", "refused")[0]?.fields.reason).toBe("media_host");
  });
});

describe("origins", () => {
  it("admits https anywhere, http only on loopback, and never a URL with credentials", () => {
    expect(parseOrigin("qyapi.weixin.qq.com")).toBe("https://qyapi.weixin.qq.com");
    expect(parseOrigin("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
    expect(parseOrigin("http://media.example.com")).toBeNull();
    expect(parseOrigin("https://media.example.com/path")).toBeNull();
    const policy = new OriginPolicy(["qyapi.weixin.qq.com"]);
    expect(policy.admit("https://qyapi.weixin.qq.com/cgi-bin/aibot/response?x=1")).not.toBeNull();
    expect(policy.admit("https://user:pw@qyapi.weixin.qq.com/x")).toBeNull();
    expect(policy.admit("http://qyapi.weixin.qq.com/x")).toBeNull();
    expect(policy.admit("https://qyapi.weixin.qq.com.evil.example/x")).toBeNull();
  });
});

/**
 * Inbound media: the key's two encodings (told apart by decoded length and a strict hex check), the
 * AES-128-ECB object from the fake's CDN with its reference percent-encoded and no token sent there,
 * the cap on bytes read, and through the whole channel: an uncaptioned image is answered, a voice
 * note's transcript is the text (no download), a quoted message reaches the agent as a quote.
 */
import { createDecipheriv } from "node:crypto";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { InboundAttachment } from "../../src/messaging/channel/transport.js";
import type { IngestResult } from "../../src/messaging/files/ingest.js";
import { withIngestedAttachments } from "../../src/messaging/files/ingest.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { mediaSource, WEIXIN_INGEST_LIMITS } from "../../src/weixin/attachments.js";
import { readContent } from "../../src/weixin/content.js";
import { decodeMediaKey, decryptMedia, MediaError } from "../../src/weixin/media.js";
import { encodeKey, encryptEcb, newKey } from "../fakes/weixin/crypto.js";
import { done, fakeIlinkLab, OWNER, text } from "./channel-harness.js";

const lab = fakeIlinkLab();

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of source) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}
async function* chunks(buf: Buffer, size = 7): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

const imageItem = (m: { param: string; aesKey: string }) => ({
  type: 2,
  image_item: { media: { encrypt_query_param: m.param, aes_key: m.aesKey, encrypt_type: 1 } },
});
const fileItem = (m: { param: string; aesKey: string }, name: string) => ({
  type: 4,
  file_item: { media: { encrypt_query_param: m.param, aes_key: m.aesKey }, file_name: name },
});

function padPasses(cipher: Buffer, key: Buffer): boolean {
  try {
    const d = createDecipheriv("aes-128-ecb", key, null);
    d.update(cipher);
    d.final();
    return true;
  } catch {
    return false;
  }
}

function ingest(refs: InboundAttachment[], audit: MemoryAuditSink, maxBytes?: number) {
  const tmpRoot = mkdtempSync(join(tmpdir(), "parley-weixin-media-"));
  const sources = refs.map((r) =>
    mediaSource(r, {
      cdnUrl: lab.fake.cdnUrl,
      audit,
      timers: { setTimeout, clearTimeout },
      ...(maxBytes ? { maxBytes } : {}),
    }),
  );
  return {
    tmpRoot,
    run: () =>
      withIngestedAttachments(sources, WEIXIN_INGEST_LIMITS, async (r: IngestResult) => r, { tmpRoot }),
  };
}

describe("the key", () => {
  it("decodes both encodings to the same 16 bytes; an image's bare hex key is read too", () => {
    const key = newKey();
    expect(decodeMediaKey(encodeKey(key, "raw"))).toEqual(key);
    expect(decodeMediaKey(encodeKey(key, "hex"))).toEqual(key);
    const [ref] = readContent({
      item_list: [
        {
          type: 2,
          image_item: {
            aeskey: key.toString("hex"),
            media: { encrypt_query_param: "p", aes_key: "ignored" },
          },
        },
      ],
    }).attachments;
    expect(decodeMediaKey(JSON.parse(ref?.ref ?? "{}").key)).toEqual(key);
  });

  it("refuses wrong lengths and 32 bytes that are not strictly hex", () => {
    expect(() => decodeMediaKey(Buffer.alloc(24).toString("base64"))).toThrow(MediaError);
    expect(() => decodeMediaKey(Buffer.from("g".repeat(32)).toString("base64"))).toThrow(/16-byte/);
    expect(() => decodeMediaKey("not base64 at all!")).toThrow(/not base64/);
  });

  it("decrypts every length around the block in odd chunks; a wrong key is a MediaError, never garbage", async () => {
    const key = newKey();
    for (const n of [0, 1, 15, 16, 17, 31, 32, 33, 1000]) {
      const plain = Buffer.alloc(n, n % 251);
      expect(await collect(decryptMedia(chunks(encryptEcb(plain, key)), key))).toEqual(plain);
    }
    const good = encryptEcb(Buffer.alloc(40, 9), key);
    await expect(collect(decryptMedia(chunks(good.subarray(0, 20)), key))).rejects.toMatchObject({
      reason: "bad_length",
    });
    await expect(collect(decryptMedia(chunks(Buffer.alloc(0)), key))).rejects.toMatchObject({
      reason: "bad_length",
    });
    let wrongKeyFailures = 0;
    for (let i = 0; i < 20; i++)
      await collect(decryptMedia(chunks(good), newKey())).catch((e: MediaError) => {
        if (e.reason === "bad_padding") wrongKeyFailures += 1;
      });
    // PKCS#7 catches a wrong key nearly always (a 1-in-256-ish false pass per try at worst).
    expect(wrongKeyFailures).toBeGreaterThanOrEqual(17);
  });
});

describe("from the fake CDN, through the shared ingest", () => {
  it("an image (raw key) and a file (hex key) decrypt; the reference is percent-encoded; no token is sent", async () => {
    const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(200, 3)]);
    const refs = readContent({
      from_user_id: OWNER,
      item_list: [
        imageItem(lab.fake.putMedia(png, "raw")),
        fileItem(lab.fake.putMedia(Buffer.from("hello, world\n"), "hex"), "notes.txt"),
      ],
    }).attachments;
    expect(refs.map((r) => r.name)).toEqual(["image", "notes.txt"]);
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
    expect(lab.fake.cdnRequests.map((r) => r.path)).toEqual([
      "/c2c/download?encrypted_query_param=enc%2F1%2Bx%3Dy%26z",
      "/c2c/download?encrypted_query_param=enc%2F2%2Bx%3Dy%26z",
    ]);
    expect(lab.fake.cdnRequests.some((r) => r.authorization)).toBe(false);
  });

  it("an over-cap object stops at the cap (bytes read), an audited refusal", async () => {
    const refs = readContent({
      from_user_id: OWNER,
      item_list: [fileItem(lab.fake.putMedia(Buffer.alloc(2 * 1024 * 1024, 7), "hex"), "big.bin")],
    }).attachments;
    const audit = new MemoryAuditSink();
    const result = await ingest(refs, audit, 64 * 1024).run();
    expect(result.files).toEqual([]);
    expect(result.refusals).toHaveLength(1);
    expect(result.refusals[0]?.message).toMatch(/larger than/);
  });

  it("a wrong key is an audited refusal, never garbage", async () => {
    const hosted = lab.fake.putMedia(Buffer.alloc(100, 1), "raw");
    // A wrong key whose decryption is known to end in an invalid pad (a random one passes ~1 in 256).
    const cipher = Buffer.from(
      await (
        await fetch(`${lab.fake.cdnUrl}/download?encrypted_query_param=${encodeURIComponent(hosted.param)}`)
      ).arrayBuffer(),
    );
    let wrong = newKey();
    while (padPasses(cipher, wrong)) wrong = newKey();
    const [ref] = readContent({
      from_user_id: OWNER,
      item_list: [fileItem({ param: hosted.param, aesKey: encodeKey(wrong, "hex") }, "data.bin")],
    }).attachments;
    const audit = new MemoryAuditSink();
    const source = mediaSource(ref as InboundAttachment, {
      cdnUrl: lab.fake.cdnUrl,
      audit,
      timers: { setTimeout, clearTimeout },
    });
    // Read to the end (the ingest may stop earlier, at a type it does not recognise).
    await expect(collect(source.read(new AbortController().signal))).rejects.toThrow(/padding/);
    expect(audit.records.filter((r) => r.operation === "weixin.media").map((r) => r.fields.reason)).toEqual([
      "bad_padding",
    ]);
  });
});

describe("through the whole channel", () => {
  it("an uncaptioned image is answered (a media-only message is a message)", async () => {
    const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(64, 3)]);
    const c = await lab.channel({ turns: () => [[text("a nice picture"), done]] });
    lab.fake.push(OWNER, "", { items: [imageItem(lab.fake.putMedia(png, "raw"))] });
    await lab.fake.waitFor(
      () => lab.fake.visible().some((v) => v.includes("a nice picture")),
      5000,
      "the answer",
    );
    expect(lab.fake.cdnRequests).toHaveLength(1);
    const prompt = JSON.stringify([...c.providers.values()][0]?.prompts[0]);
    expect(prompt).toContain("image");
  });

  it("a voice note with a transcript is that text (no download); a quote reaches the agent as a quote", async () => {
    const c = await lab.channel({
      turns: () => [
        [text("heard"), done],
        [text("quoted"), done],
      ],
    });
    lab.fake.push(OWNER, "", {
      items: [
        {
          type: 3,
          voice_item: { text: "remind me at five", media: { encrypt_query_param: "v", aes_key: "x" } },
        },
      ],
    });
    await lab.fake.waitFor(
      () => lab.fake.visible().some((v) => v.includes("heard")),
      5000,
      "the first answer",
    );
    lab.fake.push(OWNER, "what about this?", {
      refMsg: { message_item: { type: 1, text_item: { text: "the old plan" } } },
    });
    await lab.fake.waitFor(
      () => lab.fake.visible().some((v) => v.includes("quoted")),
      5000,
      "the second answer",
    );
    const prompts = [...c.providers.values()][0]?.prompts.map((p) => JSON.stringify(p));
    expect(prompts?.[0]).toContain("remind me at five");
    expect(prompts?.[1]).toContain("> the old plan");
    expect(prompts?.[1]).toContain("what about this?");
    expect(lab.fake.cdnRequests).toHaveLength(0);
  });
});

import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import {
  type Attachment,
  bytesAttachment,
  classifyBytes,
  type IngestResult,
  withIngestedAttachments,
} from "../../../src/messaging/files/ingest.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const PDF = Buffer.from("%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n%%EOF\n");

let tmpRoot: string;
let logger: MemoryLogger;

beforeEach(async () => {
  tmpRoot = await mkdtemp(path.join(tmpdir(), "parley-ingest-test-"));
  logger = new MemoryLogger();
});

afterEach(async () => {
  await rm(tmpRoot, { recursive: true, force: true });
});

const leftovers = () => readdir(tmpRoot);

/** A source that yields `chunk`-sized pieces forever and counts what was pulled from it. */
function endless(name: string, chunk: number, declared?: number): Attachment & { pulled: () => number } {
  let pulled = 0;
  return {
    name,
    size: declared,
    pulled: () => pulled,
    async *read() {
      const first = Buffer.concat([PNG, Buffer.alloc(chunk - PNG.length)]);
      pulled += first.length;
      yield first;
      for (;;) {
        pulled += chunk;
        yield new Uint8Array(chunk);
      }
    },
  };
}

describe("withIngestedAttachments: temp-file ownership", () => {
  it("writes files under a private dir and deletes them after fn resolves", async () => {
    let seen: IngestResult | undefined;
    const out = await withIngestedAttachments(
      [bytesAttachment("photo.png", PNG, "image/png")],
      {},
      async (ingested) => {
        seen = ingested;
        const [file] = ingested.files;
        expect(path.dirname(file!.path).startsWith(tmpRoot)).toBe(true);
        expect((await readFile(file!.path)).equals(PNG)).toBe(true);
        return "turn done";
      },
      { tmpRoot, logger },
    );
    expect(out).toBe("turn done");
    expect(seen!.files[0]!.kind).toBe("image");
    expect(existsSync(seen!.files[0]!.path)).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it("deletes them when fn throws, and rethrows fn's own error", async () => {
    let tempPath = "";
    await expect(
      withIngestedAttachments(
        [bytesAttachment("doc.pdf", PDF)],
        {},
        async (ingested) => {
          tempPath = ingested.files[0]!.path;
          throw new Error("turn failed");
        },
        { tmpRoot, logger },
      ),
    ).rejects.toThrow("turn failed");
    expect(tempPath).not.toBe("");
    expect(existsSync(tempPath)).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it("deletes them when the turn is aborted while fn is still running", async () => {
    const controller = new AbortController();
    let tempPath = "";
    const run = withIngestedAttachments(
      [bytesAttachment("photo.png", PNG)],
      {},
      (ingested, signal) => {
        tempPath = ingested.files[0]!.path;
        setTimeout(() => controller.abort(new Error("user pressed stop")), 10);
        return new Promise<never>((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason)),
        );
      },
      { tmpRoot, logger, signal: controller.signal },
    );
    await expect(run).rejects.toThrow("user pressed stop");
    expect(existsSync(tempPath)).toBe(false);
    expect(await leftovers()).toEqual([]);
    expect(logger.entries).toEqual([]);
  });

  it("stops awaiting an fn that ignores the abort, and logs its late failure", async () => {
    const controller = new AbortController();
    let fail: (e: Error) => void = () => {};
    const run = withIngestedAttachments(
      [bytesAttachment("photo.png", PNG)],
      {},
      () => {
        setTimeout(() => controller.abort(new Error("shutdown")), 10);
        return new Promise<never>((_, reject) => {
          fail = reject;
        });
      },
      { tmpRoot, logger, signal: controller.signal },
    );
    await expect(run).rejects.toThrow("shutdown");
    expect(await leftovers()).toEqual([]);
    fail(new Error("late crash"));
    await new Promise((r) => setTimeout(r, 0));
    expect(logger.entries.map((e) => e.message)).toEqual(["ingest callback failed after abort"]);
  });

  it("an abort during ingest stops reading and leaves nothing behind", async () => {
    const controller = new AbortController();
    const source = endless("stream.png", 1024);
    const slow: Attachment = {
      name: source.name,
      async *read(signal) {
        let n = 0;
        for await (const chunk of source.read(signal)) {
          if (++n === 5) controller.abort(new Error("cancelled mid-download"));
          yield chunk;
        }
      },
    };
    let called = false;
    await expect(
      withIngestedAttachments(
        [slow],
        {},
        async () => {
          called = true;
        },
        { tmpRoot, logger, signal: controller.signal },
      ),
    ).rejects.toThrow("cancelled mid-download");
    expect(called).toBe(false);
    expect(source.pulled()).toBeLessThan(10 * 1024);
    expect(await leftovers()).toEqual([]);
  });

  it("an already-aborted signal ingests nothing", async () => {
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    await expect(
      withIngestedAttachments([bytesAttachment("a.png", PNG)], {}, async () => 1, {
        tmpRoot,
        signal: controller.signal,
      }),
    ).rejects.toThrow("gone");
    expect(await leftovers()).toEqual([]);
  });
});

describe("caps are enforced on bytes read", () => {
  it("refuses a source that lies about its size, after reading at most cap + one chunk", async () => {
    const liar = endless("small.png", 4096, 10);
    const ingested = await withIngestedAttachments(
      [liar],
      { maxImageBytes: 64 * 1024 },
      async (r) => {
        // The partial temp file is already gone while the turn runs.
        const [dir] = await readdir(tmpRoot);
        expect(await readdir(path.join(tmpRoot, dir!))).toEqual([]);
        return r;
      },
      { tmpRoot, logger },
    );
    expect(ingested.files).toEqual([]);
    expect(ingested.refusals).toEqual([
      { index: 0, name: "small.png", reason: "too_large", message: expect.stringContaining("64 KiB") },
    ]);
    expect(liar.pulled()).toBeLessThanOrEqual(64 * 1024 + 4096);
    expect(await leftovers()).toEqual([]);
  });

  it("accepts a file exactly at the cap and refuses one byte over", async () => {
    const exact = Buffer.concat([PNG, Buffer.alloc(1000 - PNG.length)]);
    const run = (cap: number) =>
      withIngestedAttachments([bytesAttachment("a.png", exact)], { maxImageBytes: cap }, async (r) => r, {
        tmpRoot,
      });
    expect((await run(1000)).files[0]!.size).toBe(1000);
    expect((await run(999)).refusals.map((r) => r.reason)).toEqual(["too_large"]);
  });

  it("refuses a declared size beyond every cap without reading at all", async () => {
    let reads = 0;
    const huge: Attachment = {
      name: "movie.mp4",
      size: 10 * 1024 ** 3,
      // biome-ignore lint/correctness/useYield: the point is that this is never iterated
      async *read() {
        reads++;
      },
    };
    const result = await withIngestedAttachments([huge], {}, async (r) => r, { tmpRoot });
    expect(result.refusals.map((r) => r.reason)).toEqual(["too_large"]);
    expect(reads).toBe(0);
  });

  it("applies the per-kind cap of the SNIFFED kind", async () => {
    const result = await withIngestedAttachments(
      [bytesAttachment("notes.txt", PDF, "text/plain")],
      { maxTextBytes: 10, maxDocumentBytes: 1024 },
      async (r) => r,
      { tmpRoot },
    );
    expect(result.files.map((f) => [f.kind, f.mime])).toEqual([["document", "application/pdf"]]);
  });

  it("refuses attachments past maxAttachments, per item", async () => {
    const atts = [1, 2, 3].map((i) => bytesAttachment(`p${i}.png`, PNG));
    const result = await withIngestedAttachments(atts, { maxAttachments: 2 }, async (r) => r, { tmpRoot });
    expect(result.files.map((f) => f.index)).toEqual([0, 1]);
    expect(result.refusals).toEqual([
      { index: 2, name: "p3.png", reason: "too_many_attachments", message: expect.any(String) },
    ]);
  });
});

describe("classification by signature", () => {
  it("signature beats the declared mime and the name", async () => {
    const result = await withIngestedAttachments(
      [bytesAttachment("photo.png", PDF, "image/png"), bytesAttachment("readme.txt", PNG, "text/plain")],
      {},
      async (r) => r,
      { tmpRoot },
    );
    expect(result.refusals).toEqual([]);
    const [pdf, png] = result.files;
    expect([pdf!.kind, pdf!.mime, pdf!.declaredMime]).toEqual(["document", "application/pdf", "image/png"]);
    expect(path.extname(pdf!.path)).toBe(".pdf");
    expect([png!.kind, png!.mime]).toEqual(["image", "image/png"]);
    expect(path.extname(png!.path)).toBe(".png");
  });

  it("classifies common signatures", () => {
    const b = (s: string) => Buffer.from(s, "latin1");
    expect(classifyBytes(b("OggS\0\x02"))).toEqual({ kind: "audio", mime: "audio/ogg" });
    expect(classifyBytes(b("ID3\x04\0"))).toEqual({ kind: "audio", mime: "audio/mpeg" });
    expect(classifyBytes(b("RIFF\0\0\0\0WAVEfmt "))).toEqual({ kind: "audio", mime: "audio/wav" });
    expect(classifyBytes(b("\0\0\0\x20ftypisom\0\0\x02\0"))).toEqual({ kind: "video", mime: "video/mp4" });
    expect(classifyBytes(b("\0\0\0\x20ftypM4A \0\0\0\0"))).toEqual({ kind: "audio", mime: "audio/mp4" });
    expect(classifyBytes(b("\0\0\0\x18ftypheic\0\0\0\0"))).toBeNull();
    expect(classifyBytes(b("PK\x03\x04\x14\0"), "report.docx")?.mime).toMatch(/wordprocessingml/);
    expect(classifyBytes(b("PK\x03\x04\x14\0"), "x.png")).toEqual({
      kind: "document",
      mime: "application/zip",
    });
    expect(classifyBytes(b("\x7fELF\x02\x01\x01\0\0\0"))).toBeNull();
    expect(classifyBytes(b("name,qty\na,1\n"), "t.csv", "text/csv")).toEqual({
      kind: "text",
      mime: "text/csv",
    });
    expect(classifyBytes(b("plain"), "t", "image/png")).toEqual({ kind: "text", mime: "text/plain" });
  });
});

describe("text injection", () => {
  it("injects decoded text up to maxTextInject characters", async () => {
    const body = `${"é".repeat(40)}😀tail`;
    const result = await withIngestedAttachments(
      [bytesAttachment("notes.md", Buffer.from(body), "text/markdown")],
      { maxTextInject: 41 },
      async (r) => r,
      { tmpRoot },
    );
    const [file] = result.files;
    expect(file!.kind).toBe("text");
    expect(file!.mime).toBe("text/markdown");
    expect(path.extname(file!.path)).toBe(".md");
    // The cut falls inside the emoji's surrogate pair, so it backs off one unit.
    expect(file!.text).toBe("é".repeat(40));
    expect(file!.textTruncated).toBe(true);
  });

  it("refuses binary without a signature, invalid UTF-8, and empty files", async () => {
    const invalidLater = Buffer.concat([Buffer.from("a".repeat(100)), Buffer.from([0xc3, 0x28])]);
    const result = await withIngestedAttachments(
      [
        bytesAttachment("blob.bin", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2])),
        bytesAttachment("late.txt", invalidLater),
        bytesAttachment("empty.txt", new Uint8Array(0)),
      ],
      {},
      async (r) => r,
      { tmpRoot },
    );
    expect(result.files).toEqual([]);
    expect(result.refusals.map((r) => [r.name, r.reason])).toEqual([
      ["blob.bin", "unrecognized_type"],
      ["late.txt", "unrecognized_type"],
      ["empty.txt", "empty"],
    ]);
  });

  it("reports a source that fails as that item's refusal and keeps going", async () => {
    const broken: Attachment = {
      name: "gone.png",
      // biome-ignore lint/correctness/useYield: the source fails before its first chunk
      async *read() {
        throw new Error("HTTP 410");
      },
    };
    const result = await withIngestedAttachments(
      [broken, bytesAttachment("ok.png", PNG)],
      {},
      async (r) => r,
      { tmpRoot, logger },
    );
    expect(result.refusals).toEqual([
      { index: 0, name: "gone.png", reason: "read_failed", message: expect.stringContaining("HTTP 410") },
    ]);
    expect(result.files.map((f) => f.name)).toEqual(["ok.png"]);
    expect(logger.entries.map((e) => e.level)).toEqual(["warn"]);
  });

  it("a source error that quotes a token-bearing URL is redacted in the refusal and the log", async () => {
    const TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0";
    const leaky: Attachment = {
      name: "doc.pdf",
      // biome-ignore lint/correctness/useYield: the source fails before its first chunk
      async *read() {
        throw new Error(`fetch failed for https://api.telegram.org/file/bot${TOKEN}/doc.pdf`);
      },
    };
    const result = await withIngestedAttachments([leaky], {}, async (r) => r, { tmpRoot, logger });
    expect(result.refusals[0]?.message).toMatch(
      /^the file could not be fetched \(fetch failed for \[REDACTED/,
    );
    expect(JSON.stringify(result.refusals)).not.toContain(TOKEN);
    expect(JSON.stringify(logger.entries)).not.toContain(TOKEN);
  });

  it("sanitizes the sender's name in the temp path", async () => {
    const result = await withIngestedAttachments(
      [bytesAttachment("../../etc/pass wd.png", PNG)],
      {},
      async (r) => r,
      { tmpRoot },
    );
    expect(path.basename(result.files[0]!.path)).toBe("01-pass_wd.png");
    expect(result.files[0]!.name).toBe("../../etc/pass wd.png");
  });
});

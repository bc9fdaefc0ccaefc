import { execFileSync } from "node:child_process";
import { link, mkdir, mkdtemp, rename, rm, symlink, truncate, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  extractLocalRefs,
  hideLocalRefs,
  isSensitivePath,
  iterLocalRefs,
  openRefStart,
  protectedRefSpans,
  uploadFilename,
} from "../../../src/messaging/files/outbound-files.js";

// A real 1x1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const pngOfSize = (n: number) => Buffer.concat([PNG, Buffer.alloc(n - PNG.length)]);

let base: string;
let root: string;
let outside: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), "parley-outbound-"));
  root = path.join(base, "root");
  outside = path.join(base, "outside");
  await mkdir(root);
  await mkdir(outside);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const img = (dest: string, alt = "pic") => `![${alt}](${dest})`;

describe("extractLocalRefs: accepted files", () => {
  it("uploads a real PNG from bytes read once, and cuts its markup", async () => {
    await writeFile(path.join(root, "chart.png"), PNG);
    const text = `Here:\n\n${img(path.join(root, "chart.png"), "Sales chart")}\n\nDone.`;
    const result = await extractLocalRefs(text, { root });
    expect(result.rejections).toEqual([]);
    expect(result.files).toHaveLength(1);
    const [file] = result.files;
    expect(Buffer.from(file!.bytes).equals(PNG)).toBe(true);
    expect(file!.mime).toBe("image/png");
    expect(file!.alt).toBe("Sales chart");
    expect(file!.filename).toBe("chart.png");
    expect(file!.path).toBe(path.join(root, "chart.png"));
    expect(result.rewrittenText).toBe("Here:\n\nDone.");
  });

  it("resolves relative paths and file: URLs against the root", async () => {
    await mkdir(path.join(root, "out"));
    await writeFile(path.join(root, "out", "a.png"), PNG);
    const url = pathToFileURL(path.join(root, "out", "a.png")).href;
    const result = await extractLocalRefs(`${img("out/a.png")} and ${img(url)}`, { root });
    expect(result.rejections).toEqual([]);
    expect(result.files.map((f) => f.path)).toEqual([
      path.join(root, "out", "a.png"),
      path.join(root, "out", "a.png"),
    ]);
    expect(result.rewrittenText).toBe(" and ");
  });

  it("an image-only reply rewrites to empty text", async () => {
    await writeFile(path.join(root, "only.png"), PNG);
    const result = await extractLocalRefs(`${img(path.join(root, "only.png"))}\n`, { root });
    expect(result.files).toHaveLength(1);
    expect(result.rewrittenText).toBe("");
  });
});

describe("extractLocalRefs: the security floor", () => {
  async function expectRefused(dest: string, reason: string, opts: Parameters<typeof extractLocalRefs>[1]) {
    const text = `before ${img(dest)} after`;
    const result = await extractLocalRefs(text, opts);
    expect(result.files).toEqual([]);
    expect(result.rejections.map((r) => r.reason)).toEqual([reason]);
    expect(result.rejections[0]!.message).toMatch(/^not sent: /);
    // Every refusal keeps its markup visible.
    expect(result.rewrittenText).toBe(text);
    return result;
  }

  it("refuses everything without an approved root, or with a relative one", async () => {
    await writeFile(path.join(root, "a.png"), PNG);
    await expectRefused(path.join(root, "a.png"), "no_root", { root: undefined });
    await expectRefused(path.join(root, "a.png"), "no_root", { root: "" });
    await expectRefused("a.png", "no_root", { root: "relative/dir" });
    await expectRefused("a.png", "no_root", { root: path.join(base, "missing") });
  });

  it("refuses a symlink, even one pointing inside the root", async () => {
    await writeFile(path.join(root, "real.png"), PNG);
    await symlink(path.join(root, "real.png"), path.join(root, "link.png"));
    await expectRefused(path.join(root, "link.png"), "symlink", { root });
  });

  it("refuses a hardlinked file", async () => {
    await writeFile(path.join(root, "a.png"), PNG);
    await link(path.join(root, "a.png"), path.join(root, "b.png"));
    await expectRefused(path.join(root, "b.png"), "hardlink", { root });
  });

  it("refuses a FIFO without opening it (and without hanging)", { timeout: 5000 }, async () => {
    execFileSync("mkfifo", [path.join(root, "pipe.png")]);
    await expectRefused(path.join(root, "pipe.png"), "not_regular_file", { root });
  });

  it("refuses a FIFO swapped in after the check: open cannot block, fstat refuses it", {
    timeout: 5000,
  }, async () => {
    const target = path.join(root, "swap.png");
    await writeFile(target, PNG);
    await expectRefused(target, "not_regular_file", {
      root,
      onBeforeOpen: async (p) => {
        await unlink(p);
        execFileSync("mkfifo", [p]);
      },
    });
  });

  it("refuses a directory", async () => {
    await mkdir(path.join(root, "dir.png"));
    await expectRefused(path.join(root, "dir.png"), "not_regular_file", { root });
  });

  it("refuses a 2 GiB sparse file by size, without reading it", async () => {
    const big = path.join(root, "huge.png");
    await writeFile(big, PNG);
    await truncate(big, 2 * 1024 ** 3);
    const memBefore = process.memoryUsage().arrayBuffers;
    const result = await expectRefused(big, "too_large", {
      root,
      limits: { maxFileBytes: 10 * 1024 * 1024 },
    });
    expect(process.memoryUsage().arrayBuffers - memBefore).toBeLessThan(64 * 1024 * 1024);
    expect(result.rejections[0]!.message).toContain("10 MiB");
    // The aggregate bound refuses it too when no per-file ceiling is set.
    await expectRefused(big, "too_large", { root });
  });

  it("bounds the read by the cap: exactly at the cap is read, one byte over is refused", async () => {
    await writeFile(path.join(root, "exact.png"), pngOfSize(1000));
    const ok = await extractLocalRefs(img(path.join(root, "exact.png")), {
      root,
      limits: { maxFileBytes: 1000 },
    });
    expect(ok.files[0]!.bytes.length).toBe(1000);
    await expectRefused(path.join(root, "exact.png"), "too_large", { root, limits: { maxFileBytes: 999 } });
  });

  it("charges the aggregate budget across files and refuses the one that does not fit", async () => {
    await writeFile(path.join(root, "a.png"), pngOfSize(600));
    await writeFile(path.join(root, "b.png"), pngOfSize(600));
    const text = `${img(path.join(root, "a.png"))} ${img(path.join(root, "b.png"))}`;
    const result = await extractLocalRefs(text, { root, limits: { maxTotalBytes: 1000 } });
    expect(result.files.map((f) => f.bytes.length)).toEqual([600]);
    expect(result.rejections.map((r) => r.reason)).toEqual(["over_total_budget"]);
    expect(result.rewrittenText).toBe(` ${img(path.join(root, "b.png"))}`);
  });

  it("refuses paths escaping the root via .., relative or absolute", async () => {
    await writeFile(path.join(outside, "p.png"), PNG);
    await expectRefused(`${root}/../outside/p.png`, "outside_root", { root });
    await expectRefused("../outside/p.png", "outside_root", { root });
    await expectRefused(path.join(outside, "p.png"), "outside_root", { root });
  });

  it("refuses an in-root directory symlink that leads outside (realpath of the opened descriptor)", async () => {
    await writeFile(path.join(outside, "p.png"), PNG);
    await symlink(outside, path.join(root, "via"));
    await expectRefused(path.join(root, "via", "p.png"), "outside_root", { root });
  });

  it("refuses sensitive paths by name even when the bytes are a real PNG", async () => {
    await mkdir(path.join(root, ".ssh"));
    for (const rel of [".env", ".env.local", "id_rsa", ".ssh/config.png", "server.pem", ".git-credentials"]) {
      await writeFile(path.join(root, rel), PNG);
      await expectRefused(path.join(root, rel), "sensitive_path", { root });
    }
  });

  it("defeats a parent directory swapped for a symlink between check and open", async () => {
    await mkdir(path.join(root, "sub"));
    await writeFile(path.join(root, "sub", "pic.png"), PNG);
    await mkdir(path.join(outside, "sub"));
    await writeFile(path.join(outside, "sub", "pic.png"), PNG);
    const seen: string[] = [];
    await expectRefused(path.join(root, "sub", "pic.png"), "outside_root", {
      root,
      onBeforeOpen: async (p) => {
        seen.push(p);
        await rename(path.join(root, "sub"), path.join(root, "sub-old"));
        await symlink(path.join(outside, "sub"), path.join(root, "sub"));
      },
    });
    expect(seen).toEqual([path.join(root, "sub", "pic.png")]);
  });

  it("sends only real rasters: a script named .png is refused", async () => {
    await writeFile(path.join(root, "evil.png"), "#!/bin/sh\necho hi\n");
    await expectRefused(path.join(root, "evil.png"), "not_raster", { root });
  });

  it("reports a missing file", async () => {
    await expectRefused(path.join(root, "nope.png"), "not_found", { root });
  });

  it("maxFiles counts references examined, and summarises the rest in one rejection", async () => {
    await writeFile(path.join(root, "ok.png"), PNG);
    const refs = ["m1.png", "m2.png", "m3.png", "ok.png", "m5.png"].map((n) => img(path.join(root, n)));
    const text = refs.join("\n");
    const result = await extractLocalRefs(text, { root, limits: { maxFiles: 3 } });
    expect(result.files).toEqual([]);
    expect(result.rejections.map((r) => r.reason)).toEqual([
      "not_found",
      "not_found",
      "not_found",
      "too_many_refs",
    ]);
    expect(result.rejections[3]!.message).toContain("2 more");
    expect(result.rewrittenText).toBe(text);
  });
});

describe("references in code are literal", () => {
  it("skips inline code and fenced code, in the scan and in extraction", async () => {
    await writeFile(path.join(root, "a.png"), PNG);
    const ref = img(path.join(root, "a.png"));
    const text = `Use \`${ref}\` or:\n\n\`\`\`md\n${ref}\n\`\`\`\n\n\`\`${ref}\`\`\n`;
    expect(iterLocalRefs(text)).toEqual([]);
    expect(protectedRefSpans(text)).toEqual([]);
    const result = await extractLocalRefs(text, { root });
    expect(result).toEqual({ rewrittenText: text, files: [], rejections: [] });
  });

  it("an unclosed backtick is literal, so the reference still counts", () => {
    const text = `a \` ${img("/x/a.png")}`;
    expect(iterLocalRefs(text)).toHaveLength(1);
  });

  it("code inside the alt text is fine; a code span over the destination wins", () => {
    expect(iterLocalRefs("![`a`](/x/a.png)").map((r) => r.alt)).toEqual(["`a`"]);
    expect(iterLocalRefs("![a`](/x/a.png)`")).toEqual([]);
  });

  it("an unclosed fence runs to the end of the text", () => {
    expect(iterLocalRefs(`\`\`\`\n${img("/x/a.png")}\n`)).toEqual([]);
  });
});

describe("the text-only scan", () => {
  it("finds local refs with alt, titles, angle destinations, and unescapes", () => {
    const text = '![a \\[b\\]](/x/a.png "title") ![c](<./my pic.png>) ![d](/x/(1).png)';
    expect(iterLocalRefs(text).map((r) => [r.alt, r.dest])).toEqual([
      ["a [b]", "/x/a.png"],
      ["c", "./my pic.png"],
      ["d", "/x/(1).png"],
    ]);
    const [first] = iterLocalRefs(text);
    expect(text.slice(first!.start, first!.end)).toBe('![a \\[b\\]](/x/a.png "title")');
  });

  it("ignores remote, data:, escaped and malformed markup", () => {
    const text = [
      img("https://example.com/a.png"),
      img("data:image/png;base64,AAAA"),
      img("//cdn.example.com/a.png"),
      `\\${img("/x/a.png")}`,
      "[not an image](/x/a.png)",
      "![broken](/x/a.png",
      "",
      "next paragraph",
    ].join("\n");
    expect(iterLocalRefs(text)).toEqual([]);
  });

  it("an unterminated opener owns the rest of the text", () => {
    const text = `see ${img("/x/done.png")} then ![chart](/tmp/ch`;
    const open = text.indexOf("![chart]");
    expect(openRefStart(text)).toBe(open);
    expect(protectedRefSpans(text)).toEqual([
      [4, 4 + img("/x/done.png").length],
      [open, text.length],
    ]);
    expect(hideLocalRefs(text)).toBe("see  then ");
    expect(openRefStart("a trailing ![alt")).toBe(11);
    expect(openRefStart("a trailing !")).toBe(11);
    expect(openRefStart("complete text.")).toBeNull();
  });

  it("a blank line ends an unterminated opener, so it cannot hold a whole reply", () => {
    expect(openRefStart("![never closed\n\nthe rest of the answer")).toBeNull();
  });

  it("hides complete local refs but leaves remote ones", () => {
    expect(hideLocalRefs(`a ${img("/x/a.png")} b ${img("https://e.com/a.png")}`)).toBe(
      `a  b ${img("https://e.com/a.png")}`,
    );
  });

  it("finds nothing in adversarial markup, without backtracking (bench/linearity times it)", () => {
    expect(iterLocalRefs("![".repeat(50_000))).toEqual([]);
    expect(iterLocalRefs(`![a](${"(".repeat(100_000)}`)).toEqual([]);
    expect(iterLocalRefs("![](".repeat(50_000)).length).toBeLessThanOrEqual(50_000);
  });
});

describe("uploadFilename", () => {
  it("keeps a sanitized basename and takes the extension from the sniffed type", () => {
    expect(uploadFilename({ path: "/w/my chart!.gif", mime: "image/png" }, 0)).toBe("my_chart_.png");
    expect(uploadFilename({ path: "/w/../../.hidden.png", mime: "image/jpeg" }, 0)).toBe("hidden.jpg");
    expect(uploadFilename({ path: "/w/.png", mime: "image/webp" }, 1)).toBe("image-2.webp");
    expect(uploadFilename({ path: `/w/${"x".repeat(200)}.png`, mime: "image/png" }, 0)).toBe(
      `${"x".repeat(64)}.png`,
    );
  });
});

describe("isSensitivePath", () => {
  it("matches credential-shaped paths and not ordinary images", () => {
    for (const p of [
      "/h/.ssh/id_ed25519",
      "/w/.env",
      "/w/prod.env",
      "/h/.aws/credentials",
      "/h/.config/gcloud/x.png",
      "/h/.kube/config",
      "/h/.bash_history",
      "/h/.npmrc",
      "/h/.netrc",
      "/w/tls.key",
    ]) {
      expect(isSensitivePath(p), p).toBe(true);
    }
    expect(isSensitivePath("/w/out/chart.png")).toBe(false);
    expect(isSensitivePath("/w/environment.png")).toBe(false);
  });
});

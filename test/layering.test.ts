/**
 * The one-way dependency: src/messaging imports nothing from a channel folder, src/gateway,
 * src/webchat or src/providers, at any nesting depth (static, dynamic or re-export), and no
 * platform SDK. A deferred import is still an edge, so dynamic import() is scanned too.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const messagingDir = join(root, "src", "messaging");

const PLATFORM_SDKS = [
  "grammy",
  "discord.js",
  "@discordjs/",
  "@slack/",
  "botbuilder",
  "baileys",
  "@whiskeysockets/",
  "@larksuiteoapi/",
  "@agentclientprotocol/",
  "ws",
];

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Every module specifier in a source file: import/export ... from, bare import, dynamic import(). */
function specifiersOf(source: string): string[] {
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\sfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["'`]([^"'`]+)["'`]\s*\)/g,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) out.push(m[1] as string);
  return out;
}

function violations(file: string): string[] {
  const source = readFileSync(file, "utf8");
  const bad: string[] = [];
  for (const spec of specifiersOf(source)) {
    if (spec.startsWith(".")) {
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(messagingDir)) bad.push(`${relative(root, file)} -> ${relative(root, target)}`);
    } else if (
      PLATFORM_SDKS.some((sdk) => spec === sdk || spec.startsWith(sdk.endsWith("/") ? sdk : `${sdk}/`))
    ) {
      bad.push(`${relative(root, file)} -> ${spec}`);
    }
  }
  return bad;
}

describe("layering", () => {
  it("the scanner sees every import form", () => {
    const sample = `import a from "../gateway/x.js";\nexport { b } from "../telegram/y.js";\nimport "../webchat/z.js";\nconst m = await import("../discord/w.js");\nimport type {\n  T,\n} from "../providers/p.js";`;
    expect(specifiersOf(sample)).toEqual([
      "../gateway/x.js",
      "../telegram/y.js",
      "../providers/p.js",
      "../webchat/z.js",
      "../discord/w.js",
    ]);
  });

  it("src/messaging imports nothing outside itself and no platform SDK", () => {
    const files = walk(messagingDir);
    expect(files.length).toBeGreaterThan(5);
    expect(files.flatMap(violations)).toEqual([]);
  });
});

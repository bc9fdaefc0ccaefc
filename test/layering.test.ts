/**
 * The shape that lets seven more channels be added without copying: one-way imports, enforced.
 * - src/messaging imports nothing outside itself and no platform SDK.
 * - a channel folder imports only src/messaging/** and itself (plus its SDK): never the gateway,
 *   a provider, a store adapter or another channel.
 * - only the gateway's registry imports a channel.
 * - every channel folder has the same file roles and export names (the kit's shape).
 * - one clip: no other file cuts text with an ellipsis by hand (a surrogate pair was split that way).
 * A deferred import is still an edge, so dynamic import() is scanned too.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");
const messagingDir = join(src, "messaging");
/** Folders under src/ that are not channels. */
const NOT_CHANNELS = new Set(["messaging", "gateway", "providers", "store", "mcp"]);
const CHANNELS = readdirSync(src).filter((d) => statSync(join(src, d)).isDirectory() && !NOT_CHANNELS.has(d));

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

/** Relative imports of `file`, resolved to absolute paths. */
function localTargets(file: string): string[] {
  return specifiersOf(readFileSync(file, "utf8"))
    .filter((s) => s.startsWith("."))
    .map((s) => resolve(dirname(file), s));
}

const inside = (path: string, dir: string) => path === dir || path.startsWith(dir + sep);
const rel = (p: string) => relative(root, p);

function messagingViolations(file: string): string[] {
  const bad: string[] = [];
  for (const spec of specifiersOf(readFileSync(file, "utf8"))) {
    if (spec.startsWith(".")) {
      const target = resolve(dirname(file), spec);
      if (!inside(target, messagingDir)) bad.push(`${rel(file)} -> ${rel(target)}`);
    } else if (
      PLATFORM_SDKS.some((sdk) => spec === sdk || spec.startsWith(sdk.endsWith("/") ? sdk : `${sdk}/`))
    ) {
      bad.push(`${rel(file)} -> ${spec}`);
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
    expect(files.flatMap(messagingViolations)).toEqual([]);
  });

  it("a channel imports only src/messaging and its own folder: no gateway, provider, store or other channel", () => {
    expect(CHANNELS.length).toBeGreaterThanOrEqual(3);
    const bad: string[] = [];
    for (const channel of CHANNELS) {
      const own = join(src, channel);
      for (const file of walk(own))
        for (const target of localTargets(file))
          if (!inside(target, own) && !inside(target, messagingDir))
            bad.push(`${rel(file)} -> ${rel(target)}`);
    }
    expect(bad).toEqual([]);
  });

  it("only the gateway's registry imports a channel", () => {
    const registry = join(src, "gateway", "registry.ts");
    const bad: string[] = [];
    for (const file of walk(src)) {
      if (file === registry || CHANNELS.some((c) => inside(file, join(src, c)))) continue;
      for (const target of localTargets(file))
        if (CHANNELS.some((c) => inside(target, join(src, c)))) bad.push(`${rel(file)} -> ${rel(target)}`);
    }
    expect(bad).toEqual([]);
  });
});

/** A channel's class-name stem: `telegram` -> `Telegram`; the web chat, WhatsApp and WeCom write theirs as the brand does. */
const PASCAL: Readonly<Record<string, string>> = {
  webchat: "WebChat",
  whatsapp: "WhatsApp",
  wecom: "WeCom",
  imessage: "IMessage",
};
const pascal = (channel: string) => PASCAL[channel] ?? channel.charAt(0).toUpperCase() + channel.slice(1);

describe("every channel has the kit's shape", () => {
  it.each(CHANNELS)("%s: the same file roles and export names", (channel) => {
    const dir = join(src, channel);
    const read = (file: string) => readFileSync(join(dir, file), "utf8");
    const P = pascal(channel);
    const expectations: [string, RegExp][] = [
      ["index.ts", new RegExp(`export const ${channel}Channel = defineChannel<`)],
      ["client.ts", /export /],
      ["transport.ts", new RegExp(`export class ${P}Transport extends MessagingTransport<`)],
      // The kit's Renderer, its live one (a platform that edits) or its buffered one (one that does not).
      ["renderer.ts", new RegExp(`export class ${P}Renderer extends (?:Buffered|Live)?Renderer\\b`)],
      ["surface.ts", new RegExp(`export class ${P}Surface implements ChannelSurface<`)],
      ["intake.ts", /ConversationHub</],
      ["commands.ts", new RegExp(`export const ${channel.toUpperCase()}_COMMANDS = commandTable\\(`)],
      ["start.ts", /export async function start\(\s*ctx: ChannelContext</],
    ];
    for (const [file, shape] of expectations) expect(read(file), `${channel}/${file}`).toMatch(shape);
    // The entry loads the channel lazily: its SDK is imported only when it is configured.
    expect(read("index.ts")).toMatch(/load: \(\) => import\("\.\/start\.js"\)/);
    for (const sdk of PLATFORM_SDKS)
      expect(
        specifiersOf(read("index.ts")).some((s) => s === sdk || s.startsWith(sdk)),
        `${channel}/index.ts imports ${sdk}`,
      ).toBe(false);
  });
});

describe("one clip (a ratchet)", () => {
  const clipFile = join(messagingDir, "text", "clip.ts");

  it("no file but text/clip.ts cuts text and adds an ellipsis by hand", () => {
    const handCut = /\.slice\(0,[^)]*\)(?:\.join\(""\))?[^`\n]{0,20}}…`/;
    const bad = walk(src).filter((f) => f !== clipFile && handCut.test(readFileSync(f, "utf8")));
    expect(bad.map(rel)).toEqual([]);
  });

  it("no file but text/clip.ts defines its own clip or one-line helper", () => {
    const own = /function (?:clip|clipLabel|oneLine|truncate)\s*\(/;
    const bad = walk(src).filter((f) => f !== clipFile && own.test(readFileSync(f, "utf8")));
    expect(bad.map(rel)).toEqual([]);
  });
});

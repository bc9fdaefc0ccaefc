/**
 * One COMMAND_SPEC drives the ! / / parser, the help card and the slash registration; slash
 * replies are ephemeral; a bare directive gets its usage and an unknown !token the usage card.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { applicationCommandPayload, DISCORD_COMMANDS, discordCommands } from "../../src/discord/commands.js";
import { parseCustomId } from "../../src/discord/widgets.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, MALLORY, startStack, untilFooter } from "./helpers.js";

const kit = discordCommands();
const name = (text: string) => {
  const p = kit.parse(text);
  return p?.kind === "command" ? p.spec.name : p?.kind;
};

describe("the command table", () => {
  it("parses ! and / forms, aliases included, and leaves paths alone", () => {
    expect(name("!new")).toBe("new");
    expect(name("/cancel")).toBe("stop");
    expect(kit.parse("!QUEUE  later please")).toMatchObject({ spec: { name: "queue" }, arg: "later please" });
    expect(kit.parse("/etc/hosts")).toBeNull();
    expect(kit.parse("hello !new")).toBeNull();
  });

  it("an unknown !token shaped like a command is flagged; an unknown /path is text", () => {
    expect(kit.parse("!sesions")).toEqual({ kind: "unknown", name: "sesions" });
    for (const text of ["!!!", "!?", "!5", "!a", "/sesions"]) expect(kit.parse(text), text).toBeNull();
  });

  it("the help card and the registration come from the same rows; queue/steer stay off the menu", () => {
    const help = kit.help();
    for (const s of DISCORD_COMMANDS) expect(help).toContain(`!${s.name}`);
    const { rows, skipped } = applicationCommandPayload();
    expect(skipped).toEqual([]);
    expect(rows.map((r) => r.name)).toEqual(DISCORD_COMMANDS.filter((s) => !s.override).map((s) => s.name));
    for (const r of rows) expect(r).toMatchObject({ type: 1, contexts: [0, 1] });
  });

  it("a row breaking Discord's rules is skipped instead of sinking the whole array", () => {
    const { rows, skipped } = applicationCommandPayload([
      { name: "ok", help: "fine" },
      { name: "Bad Name", help: "spaces and capitals" },
      { name: "long", help: "x".repeat(101) },
      { name: "ok", help: "duplicate" },
    ]);
    expect(rows.map((r) => r.name)).toEqual(["ok"]);
    expect(skipped).toEqual(["Bad Name", "long", "ok"]);
  });
});

describe("custom ids", () => {
  it("approval ids parse right to left; anything else is not a press", () => {
    expect(parseCustomId("a:req:with:colons:NONCE:1")).toEqual({
      kind: "approval",
      requestId: "req:with:colons",
      nonce: "NONCE",
      approve: true,
    });
    expect(parseCustomId("opt:3")).toEqual({ kind: "option", index: 3 });
    expect(parseCustomId("m:0")).toEqual({ kind: "model", index: 0 });
    expect(parseCustomId("s:AbCdEfGh_-123456789012:4")).toEqual({
      kind: "session",
      handle: "AbCdEfGh_-123456789012",
      index: 4,
    });
    for (const bad of [
      "a:r1:2",
      "a::x:1",
      "opt:-1",
      "opt:01",
      "x:1",
      "a:r1:n:yes",
      "s:short:0",
      "s:AbCdEfGh12:x",
    ])
      expect(parseCustomId(bad), bad).toBeNull();
  });
});

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const lastText = (s: Stack) => s.fake.channelMessages(DM).at(-1)?.content ?? "";

describe("discord: commands over the wire", () => {
  it("text commands reply in the channel; a bare directive and a typo get usage, not the model", async () => {
    stack = await startStack({});
    const say = async (content: string, expected: RegExp) => {
      const before = stack?.fake.channelMessages(DM).length ?? 0;
      stack?.fake.userMessage({ channelId: DM, userId: ALICE, content });
      await vi.waitFor(() => expect(stack?.fake.channelMessages(DM).length).toBeGreaterThan(before), {
        timeout: 5000,
      });
      expect(lastText(stack as Stack)).toMatch(expected);
    };
    await say("!help", /^\*\*Commands\*\*/);
    await say("!queue", /^Usage: `!queue <message>`$/);
    await say("!sesions", /^I don't know that command\./);
    await say(
      "!status",
      /^\*\*Status\*\*\n- Conversation: direct, generation 0\n- Turn: idle\n- Queued: 0\n- Auto-approve: off$/,
    );
    await say("/stop", /^Nothing is running\.$/);
    await say("!new", /^🆕 Fresh conversation started\.$/);
    expect(stack.provider.prompts).toEqual([]);
  });

  it("a slash command is answered with an ephemeral type-4 callback; a stranger's is refused", async () => {
    stack = await startStack({});
    stack.fake.interaction({ type: 2, channelId: DM, userId: ALICE, data: { name: "status" } });
    stack.fake.interaction({ type: 2, channelId: DM, userId: MALLORY, data: { name: "help" } });
    await vi.waitFor(() => expect(stack?.fake.callsTo("POST", /\/callback$/)).toHaveLength(2), {
      timeout: 5000,
    });
    const bodies = stack.fake
      .callsTo("POST", /\/callback$/)
      .map(
        (c) =>
          c.body as { type: number; data: { content: string; flags: number; allowed_mentions: unknown } },
      );
    for (const b of bodies)
      expect(b).toMatchObject({ type: 4, data: { flags: 64, allowed_mentions: { parse: [] } } });
    expect(bodies.map((b) => b.data.content).sort()).toEqual([
      "**Status**\n- Conversation: direct, generation 0\n- Turn: idle\n- Queued: 0\n- Auto-approve: off",
      "You are not allowed to use this bot.",
    ]);
    expect(stack.audit.find("inbound", "denied")).toHaveLength(1);
  });

  it("!queue forces the queue path: the payload is content, even when it looks like a command", async () => {
    stack = await startStack({
      turns: [
        [
          { type: "text", text: "Queued text arrived." },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "!queue !new" });
    await untilFooter(stack.fake, DM);
    expect(stack.provider.prompts).toEqual(["!new"]);
  });
});

/**
 * One COMMAND_SPEC drives the ! / / parser, the help card and the slash registration; slash
 * replies are ephemeral; a bare directive gets its usage and an unknown !token the usage card.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  applicationCommandPayload,
  COMMAND_SPEC,
  helpText,
  isBareOverride,
  isUnknownCommand,
  parseCommand,
} from "../../src/discord/commands.js";
import { parseCustomId } from "../../src/discord/widgets.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, MALLORY, startStack, untilFooter } from "./helpers.js";

describe("COMMAND_SPEC", () => {
  it("parses ! and / forms, aliases included, and leaves paths and unknown names alone", () => {
    expect(parseCommand("!new")?.spec.name).toBe("new");
    expect(parseCommand("/cancel")?.spec.name).toBe("stop");
    expect(parseCommand("!QUEUE  later please")).toMatchObject({
      spec: { name: "queue" },
      arg: "later please",
    });
    expect(parseCommand("/etc/hosts")).toBeNull();
    expect(parseCommand("!sesions")).toBeNull();
    expect(parseCommand("hello !new")).toBeNull();
  });

  it("bare directives and unknown !tokens are recognized by shape", () => {
    expect(isBareOverride("!queue")?.name).toBe("queue");
    expect(isBareOverride("/steer ")?.name).toBe("steer");
    expect(isBareOverride("!queue now")).toBeNull();
    expect(isUnknownCommand("!sesions")).toBe(true);
    for (const text of ["!!!", "!?", "!5", "!a", "/sesions", "!new"])
      expect(isUnknownCommand(text), text).toBe(false);
  });

  it("the help card and the registration come from the same rows; queue/steer stay off the menu", () => {
    const help = helpText();
    for (const s of COMMAND_SPEC) expect(help).toContain(`!${s.name}`);
    const { rows, skipped } = applicationCommandPayload();
    expect(skipped).toEqual([]);
    expect(rows.map((r) => r.name)).toEqual(COMMAND_SPEC.filter((s) => !s.override).map((s) => s.name));
    for (const r of rows) expect(r).toMatchObject({ type: 1, contexts: [0, 1] });
    expect(help).not.toMatch(/yolo|dashboard/);
  });

  it("a row breaking Discord's rules is skipped instead of sinking the whole array", () => {
    const { rows, skipped } = applicationCommandPayload([
      { name: "ok", aliases: [], args: "", help: "fine" },
      { name: "Bad Name", aliases: [], args: "", help: "spaces and capitals" },
      { name: "long", aliases: [], args: "", help: "x".repeat(101) },
      { name: "ok", aliases: [], args: "", help: "duplicate" },
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
    await say("!status", /^💤 Idle\.$/);
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
      "You are not allowed to use this bot.",
      "💤 Idle.",
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

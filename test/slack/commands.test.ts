/**
 * One command table, three doors: the registered slash command (answered to its sender alone),
 * `!sub` typed in a DM or a thread, and the app manifest generated from the same table. A stranger's
 * slash command is refused and audited; `/stop` ends the running turn and its open prompt says so;
 * `!new` starts a new generation in the same thread.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { SLACK_COMMANDS } from "../../src/slack/commands.js";
import { BOT_EVENTS, REQUIRED_SCOPES, slackManifest } from "../../src/slack/manifest.js";
import { buttonsOf } from "../fakes/slack/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { Stack } from "./helpers.js";
import {
  ALICE,
  BOB,
  DM,
  done,
  MALLORY,
  settled,
  shown,
  startStack,
  text,
  until,
  untilFooter,
} from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe.each(["socket", "http"] as const)("the slash command (%s)", (mode) => {
  it("answers its sender alone, in the conversation's thread; a stranger is refused and audited", async () => {
    stack = await startStack({ mode, turns: [[text("first"), done]] });
    const f = stack.fake;
    const { ts: thread } = f.userMessage({ channel: DM, user: ALICE, text: "one" });
    await untilFooter(f, DM);
    await settled(stack);
    await f.delivery.acked(f.slash({ channel: DM, user: ALICE, text: "status" }));
    await until(() => f.messages.some((m) => m.ephemeralFor === ALICE), "the status");
    const status = f.messages.find((m) => m.ephemeralFor === ALICE);
    expect(status?.threadTs).toBe(thread);
    expect(f.visible(status as NonNullable<typeof status>)).toMatch(
      /^Status\n• Conversation: direct, generation 0/,
    );
    // Nobody else sees it.
    expect(f.thread(DM, thread, BOB).some((m) => m.ephemeralFor)).toBe(false);

    await f.delivery.acked(f.slash({ channel: "D0000000666", user: MALLORY, text: "status" }));
    await until(() => f.messages.some((m) => m.ephemeralFor === MALLORY), "the refusal");
    expect(f.visible(f.messages.find((m) => m.ephemeralFor === MALLORY) as never)).toBe(
      "You are not allowed to use this bot.",
    );
    expect(stack.audit.find("inbound", "denied").map((r) => r.fields.user)).toEqual([MALLORY]);
    // A sub-command that carries a message is a message, not a slash command.
    await f.delivery.acked(f.slash({ channel: DM, user: ALICE, text: "queue do this later" }));
    await until(() => f.messages.filter((m) => m.ephemeralFor === ALICE).length === 2, "the queue refusal");
    expect(f.visible(f.messages.filter((m) => m.ephemeralFor === ALICE)[1] as never)).toContain(
      "Send that as a message",
    );
    await settled(stack);
    expect(stack.startedKeys).toHaveLength(1);
  });

  it("/stop ends the running turn, and its open prompt says it was never answered", async () => {
    stack = await startStack({
      mode,
      turns: [{ steps: [text("working\n\n"), permissionRequest({ title: "slow tool" })] }],
    });
    const f = stack.fake;
    const { ts: thread } = f.userMessage({ channel: DM, user: ALICE, text: "go" });
    await until(() => shown(f, DM, thread).some((t) => t.includes("slow tool")), "the prompt");
    f.slash({ channel: DM, user: ALICE, text: "stop" });
    await until(() => shown(f, DM, thread).some((t) => t.includes("Stopped")), "the stop");
    await settled(stack);
    const prompt = f.botMessages(DM).find((m) => f.visible(m).includes("slow tool"));
    expect(prompt && buttonsOf(prompt)).toEqual([]);
    expect(prompt && f.visible(prompt)).toContain("The turn ended before this was answered");
    // The stop answered the agent's request for it: denied, so the tool never ran.
    expect(stack.provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
  });
});

describe("!sub in a thread", () => {
  it("an unknown !word gets the help card; !new starts the next generation in the same thread", async () => {
    stack = await startStack({
      turns: [
        [text("first"), done],
        [text("second"), done],
      ],
    });
    const f = stack.fake;
    const { ts: thread } = f.userMessage({ channel: DM, user: ALICE, text: "one" });
    await untilFooter(f, DM);
    await settled(stack);
    f.userMessage({ channel: DM, user: ALICE, text: "!stauts", threadTs: thread });
    await until(() => shown(f, DM, thread).some((t) => t.startsWith("I don't know that command.")), "help");
    const help = shown(f, DM, thread).find((t) => t.startsWith("I don't know that command.")) ?? "";
    for (const c of SLACK_COMMANDS) expect(help).toContain(`!${c.name}`);
    f.userMessage({ channel: DM, user: ALICE, text: "!new", threadTs: thread });
    await until(() => shown(f, DM, thread).some((t) => t.includes("Fresh conversation")), "the fresh start");
    f.userMessage({ channel: DM, user: ALICE, text: "two", threadTs: thread });
    await untilFooter(f, DM, 2);
    expect(stack.startedKeys).toEqual([
      `slack:default:direct:${ALICE}:${thread}`,
      `slack:default:direct:${ALICE}:${thread}:gen1`,
    ]);
    // The typed commands reached no agent.
    const asked = stack.provider.prompts.map((p) => JSON.stringify(p));
    expect(asked).toHaveLength(2);
    expect(asked.some((p) => p.includes("!"))).toBe(false);
  });
});

describe("!title and !history", () => {
  it("!title names the thread; !history shows what was said in it", async () => {
    stack = await startStack({ turns: [[text("Paris is the capital."), done]] });
    const f = stack.fake;
    const { ts: thread } = f.userMessage({ channel: DM, user: ALICE, text: "capital of France?" });
    await untilFooter(f, DM);
    await settled(stack);
    f.userMessage({ channel: DM, user: ALICE, text: "!title Geography", threadTs: thread });
    await until(() => f.titles.get(thread) === "Geography", "the thread title");
    f.userMessage({ channel: DM, user: ALICE, text: "!history", threadTs: thread });
    await until(
      () =>
        shown(f, DM, thread).some(
          (t) => t.includes("Paris is the capital.") && t !== shown(f, DM, thread)[0],
        ),
      "the history",
    );
    const history = shown(f, DM, thread).at(-1) ?? "";
    expect(history).toContain("capital of France?");
    expect(history).toContain("Paris is the capital.");
    expect(stack.provider.prompts).toHaveLength(1);
  });
});

describe("the app manifest", () => {
  it("is generated from the command table, the scopes parley needs and the events it reads", () => {
    const socket = slackManifest({ mode: "socket", slashCommand: "/parley" }) as {
      features: { slash_commands: { command: string; usage_hint: string; url?: string }[] };
      oauth_config: { scopes: { bot: string[] } };
      settings: {
        socket_mode_enabled: boolean;
        event_subscriptions: { bot_events: string[]; request_url?: string };
      };
    };
    const [slash] = socket.features.slash_commands;
    expect(slash?.command).toBe("/parley");
    expect(slash?.usage_hint.split(" | ")).toEqual(
      SLACK_COMMANDS.filter((c) => !c.override).map((c) => c.name),
    );
    expect(slash?.url).toBeUndefined();
    expect(socket.oauth_config.scopes.bot).toEqual([...REQUIRED_SCOPES]);
    expect(socket.settings.event_subscriptions.bot_events).toEqual([...BOT_EVENTS]);
    expect(socket.settings.socket_mode_enabled).toBe(true);
    const http = slackManifest({
      mode: "http",
      slashCommand: "/agent",
      requestUrl: "https://bot.example.com/slack/events",
    }) as typeof socket;
    expect(http.settings.socket_mode_enabled).toBe(false);
    expect(http.features.slash_commands[0]?.url).toBe("https://bot.example.com/slack/events");
    expect(http.settings.event_subscriptions.request_url).toBe("https://bot.example.com/slack/events");
  });
});

describe("docs/channels/slack.md", () => {
  const doc = readFileSync(new URL("../../docs/channels/slack.md", import.meta.url), "utf8");
  /** The JSON block under a heading. */
  const block = (heading: string): unknown => {
    const at = doc.indexOf(`### ${heading}`);
    const body = /```json\n([\s\S]*?)\n```/.exec(doc.slice(at));
    if (at < 0 || !body?.[1]) throw new Error(`no manifest under ${heading}`);
    return JSON.parse(body[1]);
  };

  it("carries the generated manifest for each mode, and names every scope, event, token and command", () => {
    expect(block("Socket Mode manifest")).toEqual(slackManifest({ mode: "socket", slashCommand: "/parley" }));
    expect(block("HTTP manifest")).toEqual(slackManifest({ mode: "http", slashCommand: "/parley" }));
    for (const scope of REQUIRED_SCOPES) expect(doc).toContain(`\`${scope}\``);
    for (const event of BOT_EVENTS) expect(doc).toContain(`\`${event}\``);
    for (const env of ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL"])
      expect(doc).toContain(env);
    for (const c of SLACK_COMMANDS) expect(doc).toContain(`\`!${c.name}`);
  });
});

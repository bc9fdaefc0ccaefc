/**
 * Who is answered, and where: the allow-list (deny by default, in the form the list names), the
 * personal-scope gate (a group chat or a channel would show tool output to people the list never
 * admitted), install events under the same gates, the replay drop, shedding past
 * teams.maxInflightTurns (never /stop), and a quote-reply read as the user's own words.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeTeams } from "../fakes/teams/server.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { Stack } from "./helpers.js";
import { done, seen, startStack, text, visible } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const idle = (s: Stack, key: string) => vi.waitFor(() => expect(s.sessions.isBusy(key)).toBe(false));

describe("teams: gates", () => {
  it("a stranger, a group chat and a channel message get no reply and an audit row each", async () => {
    stack = await startStack({ turns: [[text("never"), done]] });
    const { driver, alice, mallory, fake, audit } = stack;
    expect((await driver.post(driver.message(mallory, "let me in"))).status).toBe(200);
    expect((await driver.post(driver.message(alice, "hi all", { kind: "groupChat" }))).status).toBe(403);
    expect((await driver.post(driver.message(alice, "hi channel", { kind: "channel" }))).status).toBe(403);
    const denied = audit.find("inbound", "denied").map((r) => r.fields);
    expect(denied).toEqual([
      expect.objectContaining({ channel: "teams", user: mallory.upn }),
      expect.objectContaining({ reason: "not_personal", conversation_type: "groupChat" }),
      expect.objectContaining({ reason: "not_personal", conversation_type: "channel" }),
    ]);
    expect(stack.startedKeys).toEqual([]);
    expect(fake.allShown()).toEqual([]);
    // Nothing was remembered for them either: no route, no proactive target.
    expect(await stack.parley.routes.list("teams")).toEqual([]);
  });

  it("an install by an allowed user stores the route and greets; a stranger's stores nothing", async () => {
    stack = await startStack();
    const { driver, alice, mallory, fake, parley } = stack;
    for (const activity of driver.install(mallory)) expect((await driver.post(activity)).status).toBe(200);
    expect(await parley.routes.list("teams")).toEqual([]);
    expect(stack.audit.find("inbound", "denied").map((r) => r.fields.user)).toEqual([
      mallory.upn,
      mallory.upn,
    ]);
    for (const activity of driver.install(alice, "groupChat")) await driver.post(activity);
    expect(await parley.routes.list("teams")).toEqual([]);
    for (const activity of driver.install(alice)) expect((await driver.post(activity)).status).toBe(200);
    const route = await parley.routes.get("teams", fake.personalConversation(alice));
    expect(route).toMatchObject({
      owner: alice.upn,
      address: { serviceUrl: fake.serviceUrl, userAccountId: alice.accountId },
    });
    // One greeting for the two events Teams sends on install.
    await seen(fake, "lists what else I do", fake.personalConversation(alice));
    expect(visible(fake, fake.personalConversation(alice))).toHaveLength(1);
    expect(stack.running.transport.configuredTargets()).toEqual([
      { targetId: `dm:${alice.upn}`, label: `Teams chat with ${alice.upn}`, available: true },
    ]);
  });

  it("the same activity delivered twice runs once", async () => {
    stack = await startStack({
      turns: [
        [text("once"), done],
        [text("twice"), done],
      ],
    });
    const { driver, alice, fake } = stack;
    const activity = driver.message(alice, "hello");
    expect((await driver.post(activity)).status).toBe(200);
    await seen(fake, "once");
    expect((await driver.post(activity)).status).toBe(200);
    expect(stack.audit.find("inbound", "dropped").map((r) => r.fields.reason)).toEqual(["replayed_activity"]);
    await idle(stack, stack.startedKeys[0] ?? "");
    expect(visible(fake).filter((v) => v.includes("twice"))).toEqual([]);
    expect(stack.provider.prompts).toHaveLength(1);
  });

  it("the allow-list may name an AAD object id: no member lookup is needed, and the id keys the session", async () => {
    const fake = await new FakeTeams().start();
    const alice = fake.addUser("Alice");
    try {
      stack = await startStack({
        fake,
        teams: { allowedUsers: [alice.aadObjectId] },
        turns: [[text("by object id"), done]],
      });
      const { driver } = stack;
      await driver.post(driver.message(alice, "hello"));
      await seen(fake, "by object id");
      expect(fake.callsTo("GET", /\/members\//)).toEqual([]);
      expect(stack.startedKeys).toEqual([`teams:default:direct:${alice.aadObjectId}`]);
    } finally {
      await stack?.close();
      stack = undefined;
      await fake.close();
    }
  });

  it("a UPN on the list is learned from the Connector once and keys every message", async () => {
    stack = await startStack({
      turns: [
        [text("one"), done],
        [text("two"), done],
      ],
    });
    const { driver, alice, fake } = stack;
    await driver.post(driver.message(alice, "first"));
    await seen(fake, "one");
    await idle(stack, stack.startedKeys[0] ?? "");
    await driver.post(driver.message(alice, "second"));
    await seen(fake, "two");
    expect(fake.callsTo("GET", /\/members\//)).toHaveLength(1);
    expect(new Set(stack.startedKeys)).toEqual(new Set([`teams:default:direct:${alice.upn}`]));
  });

  it("past maxInflightTurns a message is shed with a notice; /stop still gets through", async () => {
    const timers = new ManualClock();
    stack = await startStack({
      teams: { maxInflightTurns: 1 },
      turns: [[{ delayMs: 60_000 }, text("late"), done]],
      provider: { timers },
    });
    const { driver, alice, fake, provider } = stack;
    await driver.post(driver.message(alice, "long job"));
    await vi.waitFor(() => expect(provider.hasActiveTurn()).toBe(true));
    await driver.post(driver.message(alice, "another"));
    await seen(fake, "please send that again in a minute");
    expect(stack.audit.find("teams_intake", "refused").map((r) => r.fields.reason)).toEqual(["shed"]);
    await driver.post(driver.message(alice, "/stop"));
    await seen(fake, "🛑 Stopped");
    // The notice can land a moment before the agent has wound the cancelled turn down.
    await vi.waitFor(() => expect(provider.hasActiveTurn()).toBe(false));
  });

  it("a quote-reply is read as the user's own words: a quoted /help is a command, the quoted preview is not sent on", async () => {
    stack = await startStack({ turns: [[text("answer"), done]] });
    const { driver, alice, fake } = stack;
    await driver.post(driver.quoteReply(alice, "An earlier answer about builds.", "/help"));
    await seen(fake, "**Commands**");
    await driver.post(driver.quoteReply(alice, "An earlier answer about builds.", "and the tests?"));
    await seen(fake, "answer");
    expect(stack.provider.prompts.at(-1)).toContain("and the tests?");
    expect(stack.provider.prompts.at(-1)).not.toContain("An earlier answer");
  });
});

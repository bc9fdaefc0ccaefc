/**
 * `!sessions` over the wire: the owner lists web chat sessions in a DM, a press attaches the DM to
 * one, and from then on messages run on that session (its web chat origin left alone). A destroyed
 * binding is REPORTED once instead of silently falling back; `!unlink` detaches; a prompt raised by
 * a resumed turn is answered from the DM; listings are owner-only. In an allow-listed thread the list
 * exists only as the ephemeral answer to the owner's `/sessions`: a press edits that private message,
 * and the thread is told publicly (without the title) that it now continues another session.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  SESSIONS_OWNER_ONLY,
  SESSIONS_THREAD_USE_SLASH,
  THREAD_RESUMED_NOTICE,
} from "../../src/discord/session-picker.js";
import { PICK_REFUSAL_TEXT } from "../../src/messaging/channel/picker.js";
import type { SessionRow } from "../../src/messaging/session/session-store.js";
import { emptyRow, MemorySessionStore } from "../../src/messaging/session/session-store.js";
import type { ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { permissionRequest } from "../helpers/events.js";
import type { Stack } from "./helpers.js";
import { ALICE, buttons, DM, GUILD, startStack, untilFooter } from "./helpers.js";

const BOB = "200000000000000002";
const THREAD = "500000000000000001";
const W1 = "webchat:default:direct:aaa111";
const W2 = "webchat:default:direct:bbb222";
const NATIVE = `discord:default:direct:${ALICE}`;
const WEB_ORIGIN = { channelType: "webchat", conversationId: "aaa111" };

function seeded(): MemorySessionStore {
  const rows: SessionRow[] = [
    {
      ...emptyRow(W1),
      title: "Plan the trip",
      titleKind: "manual",
      lastActiveMs: 200,
      originLink: WEB_ORIGIN,
    },
    { ...emptyRow(W2), lastActiveMs: 100 },
  ];
  return new MemorySessionStore({ rows });
}

const answer = (text: string): ScriptStep[] => [
  { type: "text", text },
  { type: "complete", stopReason: "end_turn" },
];

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const messages = (s: Stack, channel = DM) => s.fake.channelMessages(channel);
const last = (s: Stack, channel = DM) => messages(s, channel).at(-1)?.content ?? "";

async function say(s: Stack, content: string, channel = DM): Promise<void> {
  const before = messages(s, channel).length;
  s.fake.userMessage({
    channelId: channel,
    userId: ALICE,
    content,
    ...(channel === DM ? {} : { guildId: GUILD }),
  });
  await vi.waitFor(() => expect(messages(s, channel).length).toBeGreaterThan(before), { timeout: 5000 });
}

function followups(s: Stack): string[] {
  return s.fake.callsTo("POST", /^\/webhooks\//).map((c) => (c.body as { content: string }).content);
}

/** `!sessions`, then a press on entry `index`; resolves once the list shows the outcome. */
async function pick(s: Stack, index: number): Promise<string> {
  await say(s, "!sessions");
  const list = messages(s).at(-1);
  const id = buttons(list)[index]?.custom_id ?? "";
  s.fake.press({ messageId: list?.id ?? "", customId: id, userId: ALICE });
  await vi.waitFor(() => expect(buttons(messages(s).find((m) => m.id === list?.id))).toEqual([]), {
    timeout: 5000,
  });
  return messages(s).find((m) => m.id === list?.id)?.content ?? "";
}

async function startWith(
  store: MemorySessionStore,
  turns: (ScriptedTurn | ScriptStep[])[] = [],
  discord = {},
) {
  return startStack({ store, turns, discord });
}

describe("discord: !sessions", () => {
  it("lists web chat sessions (most recent first) and a pick routes the next message to it", async () => {
    const store = seeded();
    stack = await startWith(store, [answer("Back on the trip.")]);
    await say(stack, "!sessions");
    const list = messages(stack).at(-1);
    expect(list?.content).toBe("Pick a web chat session to continue in this DM:");
    expect(buttons(list).map((b) => b.label)).toEqual(["Plan the trip", "Untitled chat (…bbb222)"]);
    expect(buttons(list)[0]?.custom_id).toMatch(/^s:[A-Za-z0-9_-]{22}:0$/);

    const outcome = await pick(stack, 0);
    expect(outcome).toMatch(/^✅ This chat now continues “Plan the trip”\./);
    expect(store.getMirrorLink(W1)).toEqual({ channelType: "discord", conversationId: DM });
    // The resume record is durable: in the store, for the next start.
    expect(stack.parley.resume.forChannel("discord").get(DM)).toMatchObject({
      key: W1,
      title: "Plan the trip",
      retired: false,
    });

    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "where were we?" });
    await untilFooter(stack.fake, DM);
    expect(stack.startedKeys).toEqual([W1]);
    expect(stack.provider.prompts).toEqual(["where were we?"]);
    expect(last(stack)).toContain("Back on the trip.");
    // The web chat tab stays the session's origin: the resumed turn did not re-point it here.
    expect(store.get(W1)?.originLink).toEqual(WEB_ORIGIN);
  });

  it("a destroyed binding is reported once, not silently replaced by the DM's own session", async () => {
    const store = seeded();
    stack = await startWith(store, [answer("native answer")]);
    await pick(stack, 0);
    store.clearMirrorLink(W1); // reset elsewhere: the only evidence is the expectation record
    await say(stack, "still there?");
    expect(last(stack)).toMatch(/^⚠️ This chat was continuing “Plan the trip”, but that link is gone/);
    expect(stack.provider.prompts).toEqual([]);
    expect(stack.audit.find("session_resume.route", "refused")).toHaveLength(1);
    // The notice was delivered, so the record retired: the next message runs natively.
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "hello again" });
    await untilFooter(stack.fake, DM);
    expect(stack.startedKeys).toEqual([NATIVE]);
    expect(stack.provider.prompts).toEqual(["hello again"]);
  });

  it("!unlink detaches; !status acts on the resumed session while it is attached", async () => {
    const store = seeded();
    stack = await startWith(store, [answer("native again")]);
    await pick(stack, 0);
    await say(stack, "!status");
    // The resumed session's own row: its title, not this DM's.
    expect(last(stack)).toContain("- Title: Plan the trip\n- Turn: idle");
    await say(stack, "!unlink");
    expect(last(stack)).toMatch(/^✅ Detached from “Plan the trip”\./);
    expect(store.getMirrorLink(W1)).toBeNull();
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "mine now" });
    await untilFooter(stack.fake, DM);
    expect(stack.startedKeys).toEqual([NATIVE]);
  });

  it("a prompt raised by a resumed turn is approved from the DM", async () => {
    const store = seeded();
    stack = await startWith(store, [
      {
        steps: [{ type: "text", text: "Cleaning." }, permissionRequest()],
        onPermission: { approve: answer("Removed."), deny: answer("Left it.") },
      },
    ]);
    await pick(stack, 0);
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "clean up" });
    let prompt: ReturnType<typeof messages>[number] | undefined;
    await vi.waitFor(
      () => {
        prompt = messages(stack as Stack).find((m) => m.content.startsWith("🔐") && buttons(m).length === 2);
        if (!prompt) throw new Error("no prompt yet");
      },
      { timeout: 5000 },
    );
    const approve = buttons(prompt).find((b) => b.custom_id.endsWith(":1"))?.custom_id ?? "";
    stack.fake.press({ messageId: prompt?.id ?? "", customId: approve, userId: ALICE });
    await untilFooter(stack.fake, DM);
    expect(stack.provider.answers.map((a) => a.verdict)).toEqual(["approve"]);
    expect(last(stack)).toContain("Removed.");
  });

  it("a press on a list that does not exist is refused visibly", async () => {
    stack = await startWith(seeded());
    await say(stack, "!help");
    stack.fake.press({
      messageId: messages(stack).at(-1)?.id ?? "",
      customId: "s:AAAAAAAAAAAAAAAAAAAAAA:0",
      userId: ALICE,
    });
    await vi.waitFor(() => expect(followups(stack as Stack)).toEqual([PICK_REFUSAL_TEXT.unknown]), {
      timeout: 5000,
    });
    expect(stack.audit.find("session_resume.pick", "refused")).toHaveLength(1);
  });

  it("listing is owner-only (exactly one allow-listed id); `!sessions` in a thread points at /sessions", async () => {
    stack = await startWith(seeded(), [], { allowedUserIds: [ALICE, BOB] });
    await say(stack, "!sessions");
    expect(last(stack)).toBe(SESSIONS_OWNER_ONLY);
    expect(stack.audit.find("session_resume.list", "refused")[0]?.fields).toMatchObject({
      reason: "no_unambiguous_owner",
    });
    await stack.close();
    stack = await startWith(seeded(), [], { allowedThreadIds: [THREAD] });
    stack.fake.addChannel({ id: THREAD, type: 11, guild_id: GUILD, parent_id: "500000000000000009" });
    await say(stack, "!sessions", THREAD);
    expect(last(stack, THREAD)).toBe(SESSIONS_THREAD_USE_SLASH);
    expect(stack.audit.find("session_resume.list", "refused")[0]?.fields).toMatchObject({
      reason: "shared_audience",
    });
  });

  it("every channel has the durable store now: with no web chat session on record, the owner is told so", async () => {
    stack = await startStack({});
    await say(stack, "!sessions");
    expect(last(stack)).toMatch(/^There are no web chat sessions to continue/);
  });
});

describe("discord: /sessions in a thread", () => {
  const THREAD_LOCATION = { channelType: "discord", conversationId: THREAD, threadId: THREAD };

  async function inThread(
    store: MemorySessionStore,
    turns: (ScriptedTurn | ScriptStep[])[] = [],
    allowedUserIds = [ALICE],
  ): Promise<Stack> {
    const s = await startWith(store, turns, { allowedThreadIds: [THREAD], allowedUserIds });
    s.fake.addChannel({ id: THREAD, type: 11, guild_id: GUILD, parent_id: "500000000000000009" });
    return s;
  }

  /** `/sessions` in the thread; resolves with the private reply's body once it was sent. */
  async function slashSessions(s: Stack, userId = ALICE) {
    const before = s.fake.callsTo("POST", /\/callback$/).length;
    s.fake.interaction({ type: 2, channelId: THREAD, userId, data: { name: "sessions" }, guildId: GUILD });
    await vi.waitFor(() => expect(s.fake.callsTo("POST", /\/callback$/).length).toBeGreaterThan(before), {
      timeout: 5000,
    });
    return s.fake.callsTo("POST", /\/callback$/).at(-1)?.body as {
      type: number;
      data: { content: string; flags: number; components?: unknown[] };
    };
  }

  /** A press on entry `index` of the private list; resolves once the thread was told. */
  async function pickInThread(s: Stack, index: number): Promise<string> {
    await slashSessions(s);
    const list = s.fake.ephemeralMessages(THREAD).at(-1);
    const press = s.fake.press({
      messageId: list?.id ?? "",
      customId: buttons(list)[index]?.custom_id ?? "",
      userId: ALICE,
      guildId: GUILD,
    });
    await vi.waitFor(() => expect(buttons(s.fake.ephemeralMessages(THREAD).at(-1))).toEqual([]), {
      timeout: 5000,
    });
    await vi.waitFor(() => expect(last(s, THREAD)).toBe(THREAD_RESUMED_NOTICE), { timeout: 5000 });
    return press;
  }

  /** Every request body except the private replies, edits and follow-ups (what others could see). */
  function publicBodies(s: Stack): string {
    return JSON.stringify(
      s.fake.calls
        .filter((c) => !/\/callback$|\/messages\/@original$/.test(c.path))
        .filter((c) => (c.body as { flags?: number } | undefined)?.flags !== 64)
        .map((c) => c.body),
    );
  }

  it("the owner's /sessions answers privately; a press attaches the thread and says so without the title", async () => {
    const store = seeded();
    stack = await inThread(store, [answer("Back on the trip.")]);
    const reply = await slashSessions(stack);
    expect(reply).toMatchObject({ type: 4, data: { flags: 64 } });
    const list = stack.fake.ephemeralMessages(THREAD)[0];
    expect(list?.content).toBe("Pick a web chat session to continue in this thread:");
    expect(buttons(list).map((b) => b.label)).toEqual(["Plan the trip", "Untitled chat (…bbb222)"]);
    expect(buttons(list)[0]?.custom_id).toMatch(/^s:[A-Za-z0-9_-]{22}:0$/);
    // Nothing public: not in the thread, not in any request but the private reply.
    expect(messages(stack, THREAD)).toEqual([]);
    expect(publicBodies(stack)).not.toContain("Plan the trip");

    const press = stack.fake.press({
      messageId: list?.id ?? "",
      customId: buttons(list)[0]?.custom_id ?? "",
      userId: ALICE,
      guildId: GUILD,
    });
    await vi.waitFor(() => expect(buttons(stack?.fake.ephemeralMessages(THREAD)[0])).toEqual([]), {
      timeout: 5000,
    });
    expect(stack.fake.ephemeralMessages(THREAD)[0]?.content).toMatch(
      /^✅ This chat now continues “Plan the trip”\./,
    );
    // Edited through the PRESS's token: an ephemeral message has no channel route.
    expect(
      stack.fake.callsTo("PATCH", new RegExp(`^/webhooks/\\d+/itoken-${press}/messages/@original$`)),
    ).toHaveLength(1);
    expect(stack.fake.callsTo("PATCH", /^\/channels\//)).toEqual([]);
    await vi.waitFor(() => expect(last(stack as Stack, THREAD)).toBe(THREAD_RESUMED_NOTICE), {
      timeout: 5000,
    });
    expect(messages(stack, THREAD)).toHaveLength(1);
    expect(store.getMirrorLink(W1)).toEqual(THREAD_LOCATION);
    expect(publicBodies(stack)).not.toContain("Plan the trip");

    stack.fake.userMessage({ channelId: THREAD, userId: ALICE, content: "where were we?", guildId: GUILD });
    await untilFooter(stack.fake, THREAD);
    expect(stack.startedKeys).toEqual([W1]);
    expect(stack.provider.prompts).toEqual(["where were we?"]);
    expect(last(stack, THREAD)).toContain("Back on the trip.");
    // The web chat tab stays the session's origin.
    expect(store.get(W1)?.originLink).toEqual(WEB_ORIGIN);
  });

  it("!unlink in the thread detaches without naming the session; the next message runs natively", async () => {
    const store = seeded();
    stack = await inThread(store, [answer("thread's own")]);
    await pickInThread(stack, 0);
    await say(stack, "!unlink", THREAD);
    expect(last(stack, THREAD)).toMatch(/^✅ Detached from a web chat session\./);
    expect(store.getMirrorLink(W1)).toBeNull();
    expect(publicBodies(stack)).not.toContain("Plan the trip");
    stack.fake.userMessage({ channelId: THREAD, userId: ALICE, content: "mine now", guildId: GUILD });
    await untilFooter(stack.fake, THREAD);
    expect(stack.startedKeys).toHaveLength(1);
    expect(stack.startedKeys[0]).not.toBe(W1);
    expect(stack.startedKeys[0]).toContain(THREAD);
  });

  it("!new in the thread detaches too, and a lost link is reported there without the title", async () => {
    const store = seeded();
    stack = await inThread(store);
    await pickInThread(stack, 0);
    await say(stack, "!new", THREAD);
    expect(last(stack, THREAD)).toMatch(/^✅ Detached from a web chat session\.[\s\S]*🆕 Fresh conversation/);
    expect(store.getMirrorLink(W1)).toBeNull();

    await pickInThread(stack, 0);
    store.clearMirrorLink(W1); // reset elsewhere
    await say(stack, "still there?", THREAD);
    expect(last(stack, THREAD)).toMatch(
      /^⚠️ This chat was continuing a web chat session, but that link is gone/,
    );
    expect(stack.provider.prompts).toEqual([]);
    expect(publicBodies(stack)).not.toContain("Plan the trip");
  });

  it("a non-owner's /sessions (two allowed users) is refused privately, with no list", async () => {
    stack = await inThread(seeded(), [], [ALICE, BOB]);
    const reply = await slashSessions(stack, BOB);
    expect(reply).toMatchObject({ type: 4, data: { content: SESSIONS_OWNER_ONLY, flags: 64 } });
    expect(reply.data.components).toBeUndefined();
    expect(stack.audit.find("session_resume.list", "refused")[0]?.fields).toMatchObject({
      who: BOB,
      reason: "no_unambiguous_owner",
    });
    expect(messages(stack, THREAD)).toEqual([]);
    expect(publicBodies(stack)).not.toContain("Plan the trip");
  });

  it("`!sessions` typed in a thread is refused, pointing at /sessions, and audited", async () => {
    stack = await inThread(seeded());
    await say(stack, "!sessions", THREAD);
    expect(last(stack, THREAD)).toBe(SESSIONS_THREAD_USE_SLASH);
    expect(SESSIONS_THREAD_USE_SLASH).toContain("in a thread, use the `/sessions` command");
    expect(stack.audit.find("session_resume.list", "refused")[0]?.fields).toMatchObject({
      reason: "shared_audience",
    });
    expect(stack.fake.ephemeralMessages(THREAD)).toEqual([]);
    expect(publicBodies(stack)).not.toContain("Plan the trip");
  });

  it("a refused press on the private list is answered by an ephemeral follow-up, nothing public", async () => {
    stack = await inThread(seeded());
    await pickInThread(stack, 0);
    const list = stack.fake.ephemeralMessages(THREAD)[0];
    stack.fake.press({
      messageId: list?.id ?? "",
      customId: "s:AAAAAAAAAAAAAAAAAAAAAA:1",
      userId: ALICE,
      guildId: GUILD,
    });
    await vi.waitFor(() => expect(followups(stack as Stack)).toEqual([PICK_REFUSAL_TEXT.unknown]), {
      timeout: 5000,
    });
    expect(stack.fake.ephemeralMessages(THREAD).map((m) => m.content)).toContain(PICK_REFUSAL_TEXT.unknown);
    expect(messages(stack, THREAD).map((m) => m.content)).toEqual([THREAD_RESUMED_NOTICE]);
  });
});

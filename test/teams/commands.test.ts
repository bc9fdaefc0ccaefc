/**
 * Teams' commands over the wire: /help from the one table, /sessions (the web chat resume card)
 * only when the allow-list names exactly one person, a press attaching this chat to the picked
 * session, an approval raised in that session answered by its press, and the mid-turn machinery:
 * a queue receipt edited in place, a steer folded into the running turn, /stop.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RECEIPT_EXPIRED } from "../../src/messaging/approval/approvals.js";
import type { SessionRow } from "../../src/messaging/session/session-store.js";
import { emptyRow, MemorySessionStore } from "../../src/messaging/session/session-store.js";
import { SESSIONS_ONE_PERSON_ONLY } from "../../src/teams/session-picker.js";
import type { Json, ShownMessage } from "../fakes/teams/server.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { Stack } from "./helpers.js";
import { cardTexts, done, seen, startStack, text, visible } from "./helpers.js";

const W1 = "webchat:default:direct:aaa111";

function seeded(): MemorySessionStore {
  const rows: SessionRow[] = [
    {
      ...emptyRow(W1),
      title: "Plan the trip",
      titleKind: "manual",
      lastActiveMs: 200,
      originLink: { channelType: "webchat", conversationId: "aaa111" },
    },
  ];
  return new MemorySessionStore({ rows });
}

/** The data of a card's button titled `title`. */
function actionData(m: ShownMessage, title: string): Json {
  const content = (m.attachments[0]?.content ?? {}) as { actions?: { title: string; data: Json }[] };
  const found = (content.actions ?? []).find((a) => a.title === title);
  if (!found) throw new Error(`no button ${title}`);
  return found.data;
}

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe("teams: commands", () => {
  it("/help lists the table with / and says how approvals are answered", async () => {
    stack = await startStack();
    await stack.driver.post(stack.driver.message(stack.alice, "/help"));
    await seen(stack.fake, "**Commands**");
    const help = visible(stack.fake).join("\n");
    for (const name of [
      "/new",
      "/compact",
      "/stop",
      "/yolo",
      "/link",
      "/unlink",
      "/sessions",
      "/status",
      "/model",
      "/queue",
      "/steer",
    ])
      expect(help).toContain(`\`${name}`);
    expect(help).toContain("`/cancel`");
    expect(help).toContain("press a button on its card");
  });

  it("/sessions is refused while the allow-list names more than one person", async () => {
    stack = await startStack({ both: true, store: seeded() });
    await stack.driver.post(stack.driver.message(stack.alice, "/sessions"));
    await seen(stack.fake, SESSIONS_ONE_PERSON_ONLY);
    expect(stack.audit.find("session_resume.list", "refused")[0]?.fields).toMatchObject({
      reason: "not_sole_identity",
    });
    expect(visible(stack.fake).join("\n")).not.toContain("Plan the trip");
  });

  it("/sessions with one person listed offers the web chat sessions; a press continues one here", async () => {
    stack = await startStack({ store: seeded(), turns: [[text("continuing the trip"), done]] });
    const { driver, alice, fake } = stack;
    await driver.post(driver.message(alice, "/sessions"));
    const list = await vi.waitFor(() => {
      const found = fake.allShown().find((m) => cardTexts(m).buttons.length > 0);
      if (!found) throw new Error("no list yet");
      return found;
    });
    expect(cardTexts(list).buttons).toEqual(["Plan the trip"]);
    const data = ((list.attachments[0]?.content ?? {}) as { actions: { data: Record<string, unknown> }[] })
      .actions[0]?.data;
    await driver.post(driver.submit(alice, list.id, data ?? {}));
    await vi.waitFor(() => expect(cardTexts(list).buttons).toEqual([]));
    await driver.post(driver.message(alice, "where were we?"));
    await seen(fake, "continuing the trip");
    expect(stack.startedKeys).toEqual([W1]);
  });

  it("an approval card raised in a continued session is answered by its press (tried on both keys)", async () => {
    const toolTurn = {
      steps: [text("Let me clean up."), permissionRequest({ requestId: "r1", title: "rm -rf build" })],
      onPermission: { approve: [text("Removed."), done], deny: [text("Kept everything."), done] },
    };
    stack = await startStack({ store: seeded(), turns: [toolTurn] });
    const { driver, alice, fake, provider } = stack;
    await driver.post(driver.message(alice, "/sessions"));
    const list = await vi.waitFor(() => {
      const found = fake.allShown().find((m) => cardTexts(m).buttons.includes("Plan the trip"));
      if (!found) throw new Error("no list yet");
      return found;
    });
    await driver.post(driver.submit(alice, list.id, actionData(list, "Plan the trip")));
    await vi.waitFor(() => expect(cardTexts(list).buttons).toEqual([]));
    await driver.post(driver.message(alice, "clean up"));
    // The turn runs under the web chat session's key, so its prompt is registered there, not
    // under this chat's own key: a press looked up on the own key alone would be stale.
    const prompt = await vi.waitFor(() => {
      const found = fake.allShown().find((m) => cardTexts(m).text.includes("Permission needed"));
      if (!found) throw new Error("no approval card yet");
      return found;
    });
    expect(stack.startedKeys).toEqual([W1]);
    await driver.post(driver.submit(alice, prompt.id, actionData(prompt, "Approve")));
    await seen(fake, "Removed.");
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    expect(visible(fake).join("\n")).not.toContain(RECEIPT_EXPIRED);
  });
});

describe("teams: mid-turn", () => {
  it("queue: one receipt, edited in place, and the held burst answered as one turn", async () => {
    const timers = new ManualClock();
    stack = await startStack({
      teams: { queueMode: "queue" },
      provider: { timers },
      turns: [
        [{ delayMs: 60_000 }, text("first done"), done],
        [text("burst answered"), done],
      ],
    });
    const { driver, alice, fake, provider } = stack;
    await driver.post(driver.message(alice, "long job"));
    await vi.waitFor(() => expect(provider.hasActiveTurn()).toBe(true));
    await driver.post(driver.message(alice, "what time is it"));
    await seen(fake, "⏳ Queued (1)");
    await driver.post(driver.message(alice, "and the weather?"));
    await seen(fake, "⏳ Queued (2)");
    const receipts = fake.allShown().filter((m) => m.text.includes("Queued"));
    expect(receipts).toHaveLength(1);
    await timers.advance(60_000);
    await seen(fake, "burst answered");
    expect(receipts[0]?.text).toBe('▶️ Now answering (2): "what time is it" · "and the weather?"');
    expect(provider.prompts).toHaveLength(2);
  });

  it("steer: a message sent mid-turn is folded into the running turn, quoted above the continuation", async () => {
    const timers = new ManualClock();
    stack = await startStack({
      provider: { supportsSteer: true, timers },
      turns: [[text("Listing files.\n\n"), { delayMs: 60_000 }, text("Weather is sunny."), done]],
    });
    const { driver, alice, fake, provider } = stack;
    await driver.post(driver.message(alice, "list the files"));
    await seen(fake, "Listing files.");
    await driver.post(driver.message(alice, "also the weather"));
    await vi.waitFor(() => expect(provider.steers).toEqual(["also the weather"]));
    await timers.advance(60_000);
    await seen(fake, /↪️ also the weather[\s\S]*Weather is sunny\./);
  });
});

/**
 * ConversationHistory over the real transcript store: each turn's lines, written once even when the
 * turn runs a second time after a crash; nothing at all for a temporary or incognito session; and
 * the five-message replay a fresh agent session gets, without the turn it is about to answer.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { ConversationHistory, REPLAY_MESSAGES } from "../../../src/messaging/session/history.js";
import { MemorySessionStore } from "../../../src/messaging/session/session-store.js";
import { open, useTempHome } from "../../store/helpers.js";

const home = useTempHome();
const KEY = "telegram:default:direct:42";

async function setup() {
  const store = await open(home.dir);
  const flags = new MemorySessionStore();
  let now = 1_000;
  const history = new ConversationHistory({
    transcripts: store.transcripts,
    flags,
    now: () => (now += 1),
    logger: new MemoryLogger(),
  });
  const turn = async (turnId: string, user: string, answer: string, tools: string[] = []) => {
    const record = history.begin({ sessionKey: KEY, turnId, users: [{ text: user, attachments: [] }] });
    for (const t of tools) record.toolCall(t);
    await record.end(answer);
  };
  return { store, flags, history, turn };
}

describe("ConversationHistory", () => {
  it("a message answered in a burst a kill cut short, then alone after the restart, is recorded once", async () => {
    const { store, history } = await setup();
    // The burst turn (named after its first message) was killed before its answer.
    history.begin({
      sessionKey: KEY,
      turnId: "intake:1@5",
      users: [
        { text: "first", attachments: [], ownTurnId: "intake:1@5" },
        { text: "second", attachments: [], ownTurnId: "intake:2@5" },
      ],
    });
    // After the restart each message runs on its own turn.
    for (const [turnId, text] of [
      ["intake:1@5", "first"],
      ["intake:2@5", "second"],
    ] as const) {
      const record = history.begin({
        sessionKey: KEY,
        turnId,
        users: [{ text, attachments: [], ownTurnId: turnId }],
      });
      await record.end(`answer to ${text}`);
    }
    const lines = await history.recent(KEY, 50);
    expect(lines.map((l) => l.entry)).toEqual([
      { kind: "user", text: "first", attachments: [] },
      { kind: "user", text: "second", attachments: [] },
      { kind: "agent", text: "answer to first" },
      { kind: "agent", text: "answer to second" },
    ]);
    await store.close();
  });

  it("with a commit, the answer's line goes to it after the earlier lines; a commit that writes nothing leaves it to the history", async () => {
    const { store, history } = await setup();
    const handed: (string | undefined)[] = [];
    const first = history.begin({
      sessionKey: KEY,
      turnId: "intake:3@5",
      users: [{ text: "q1", attachments: [] }],
    });
    await first.end("a1", async (line) => {
      handed.push(line?.entryKey);
      // The user line is already written when the commit runs.
      expect((await history.recent(KEY, 10)).map((l) => l.entry.kind)).toEqual(["user"]);
      return true;
    });
    const second = history.begin({
      sessionKey: KEY,
      turnId: "intake:4@5",
      users: [{ text: "q2", attachments: [] }],
    });
    await second.end("a2", async () => false);
    const third = history.begin({
      sessionKey: KEY,
      turnId: "intake:5@5",
      users: [{ text: "q3", attachments: [] }],
    });
    await third.end("a3", async () => {
      throw new Error("database gone");
    });
    expect(handed).toEqual(["intake:3@5:agent"]);
    // The committed line is the commit's to write (this one wrote nothing); the others were appended.
    expect((await history.recent(KEY, 10)).map((l) => l.entry)).toEqual([
      { kind: "user", text: "q1", attachments: [] },
      { kind: "user", text: "q2", attachments: [] },
      { kind: "agent", text: "a2" },
      { kind: "user", text: "q3", attachments: [] },
      { kind: "agent", text: "a3" },
    ]);
    await store.close();
  });

  it("records a turn's messages, tools, approvals and answer; a second run of the same turn adds nothing", async () => {
    const { store, history } = await setup();
    const run = async (answer: string) => {
      const record = history.begin({
        sessionKey: KEY,
        turnId: "intake:9",
        users: [
          { text: "look at this", attachments: ["shot.png"] },
          { text: "and this", attachments: [] },
        ],
      });
      record.toolCall("Read shot.png");
      record.approval("Write notes.md", "approved always");
      await record.end(answer);
    };
    await run("It is a cat.");
    await run("It is a cat, again.");
    const lines = await history.recent(KEY, 50);
    expect(lines.map((l) => [l.turnId, l.entry])).toEqual([
      ["intake:9", { kind: "user", text: "look at this", attachments: ["shot.png"] }],
      ["intake:9", { kind: "user", text: "and this", attachments: [] }],
      ["intake:9", { kind: "tool", title: "Read shot.png", status: "called" }],
      ["intake:9", { kind: "approval", title: "Write notes.md", outcome: "approved always" }],
      ["intake:9", { kind: "agent", text: "It is a cat." }],
    ]);
    await store.close();
  });

  it("a temporary or incognito session keeps nothing, from the very next line on", async () => {
    const { store, flags, history, turn } = await setup();
    await turn("t1", "kept", "kept too");
    flags.setFlag(KEY, "incognito", true);
    expect(history.restricted(KEY)).toBe(true);
    await turn("t2", "secret plan", "noted");
    expect((await history.recent(KEY, 50)).map((l) => l.turnId)).toEqual(["t1", "t1"]);
    expect((await history.replayFor(KEY))?.text).not.toContain("secret plan");
    await store.close();
  });

  it("the replay is the last five messages before the turn it is about to answer, oldest first", async () => {
    const { store, history, turn } = await setup();
    expect(await history.replayFor(KEY)).toBeUndefined();
    for (let i = 1; i <= 4; i += 1) await turn(`t${i}`, `question ${i}`, `answer ${i}`, ["Read a file"]);
    // The turn now running has written its own line: the agent gets that as the prompt, not twice.
    const running = history.begin({
      sessionKey: KEY,
      turnId: "t5",
      users: [{ text: "question 5", attachments: [] }],
    });
    const replay = (await history.replayFor(KEY))?.text ?? "";
    expect((await history.replayFor(KEY))?.messages).toBe(5);
    expect(REPLAY_MESSAGES).toBe(5);
    expect(replay.split("\n\n")).toEqual([
      "[Context: this conversation's earlier agent session could not be restored. Its last 5 message(s), oldest first:]",
      "Assistant: answer 2",
      "User: question 3",
      "Assistant: answer 3",
      "User: question 4",
      "Assistant: answer 4",
      "[End of context. The user's new message follows.]",
    ]);
    await running.end("answer 5");
    await store.close();
  });
});

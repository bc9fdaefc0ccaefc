/**
 * Accept-before-ack as every channel gets it from the kit, shown on the web chat (its hub, surface
 * and transport in process, over the real store): a message is journaled before the page is told
 * "accepted"; the page's resend is dropped; commands, turns and what /stop drops are completed; a
 * restart answers what it finds unfinished (in the same bubble the first run used), or, when that
 * is too old or was cut short too often, tells the sender instead.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { storePath } from "../../src/store/index.js";
import type { Connection } from "../../src/webchat/client.js";
import type { WebChatSettings } from "../../src/webchat/index.js";
import { webchatChannel } from "../../src/webchat/index.js";
import type { Bubble, ServerFrame } from "../../src/webchat/protocol.js";
import { assembleWebChat } from "../../src/webchat/start.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";

const CONV = "c1";
const text = (t: string): ScriptStep => ({ type: "text", text: t });
const done: ScriptStep = { type: "complete", stopReason: "end_turn" };
/** A turn that never ends on its own: the process is stopped (or dies) under it. */
const forever = (first: string): ScriptStep[] => [text(first), { delayMs: 600_000 }, done];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(
  home: string,
  turns: (ScriptedTurn | ScriptStep[])[],
  o: { now?: () => number; queueMode?: "steer" | "queue" } = {},
) {
  const parley: ParleyStore = await openTestStore(home, o.now ? { now: o.now } : {});
  const audit = new MemoryAuditSink();
  const provider = new ScriptedProvider(turns);
  const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
  const ctx = testChannelContext<WebChatSettings>(webchatChannel, {
    parley,
    sessions,
    audit,
    logger: new MemoryLogger(),
    section: { port: 0 },
    ...(o.queueMode ? { queueMode: o.queueMode } : {}),
  });
  const { transport, hub, frames } = assembleWebChat(ctx);
  transport.admit("owner", () => {});
  transport.open(CONV);
  const frames_: ServerFrame[] = [];
  const conn: Connection = { conversationId: CONV, principal: "owner", send: (f) => frames_.push(f) };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await hub.shutdown();
    await sessions.closeAll();
    await parley.close();
  };
  cleanups.push(stop);
  await hub.resume();
  return {
    home,
    parley,
    audit,
    provider,
    hub,
    transport,
    frames: frames_,
    send: (body: string, id?: string) =>
      frames.handleFrame(conn, { type: "message", text: body, ...(id ? { id } : {}) }),
    bubbles: (role?: Bubble["role"]) => transport.bubbles(CONV).filter((b) => !role || b.role === role),
    accepted: () => frames_.flatMap((f) => (f.type === "accepted" ? [f.id] : [])),
    stop,
  };
}

const home = () => mkdtempSync(join(tmpdir(), "parley-webchat-durable-"));
const settled = (c: { parley: ParleyStore }) =>
  vi.waitFor(async () => expect(await c.parley.intake.countUnfinished()).toBe(0), { timeout: 5000 });

describe("accept-before-ack", () => {
  it("a message is journaled before the page hears 'accepted'; a resend of it is dropped and answered once", async () => {
    const c = await start(home(), [[text("hello"), done]]);
    c.send("hi", "x1");
    await vi.waitFor(() => expect(c.accepted()).toEqual(["x1"]));
    expect((await c.parley.intake.accept(probe("webchat", `${CONV}:x1`))).kind).toBe("duplicate");
    await vi.waitFor(() => expect(c.bubbles("assistant").at(-1)?.final).toBe(true));
    c.send("hi", "x1");
    await vi.waitFor(() => expect(c.accepted()).toEqual(["x1", "x1"]));
    await settled(c);
    expect(c.provider.prompts).toEqual(["hi"]);
    expect(c.bubbles("user")).toHaveLength(1);
    expect(c.bubbles("assistant").map((b) => b.text)).toEqual(["hello"]);
    expect(c.audit.find("intake", "dropped").map((r) => r.fields.reason)).toEqual(["redelivered"]);
  });

  it("a stranger is refused before the journal: their message id never occupies the dedupe window", async () => {
    const c = await start(home(), [[text("for the owner"), done]]);
    const denied = await c.transport.receive({
      principal: "mallory",
      conversationId: CONV,
      text: "hi",
      author: "user",
    });
    expect(denied.status).toBe("denied");
    expect(await c.parley.intake.countUnfinished()).toBe(0);
    c.send("hi", "x1");
    await vi.waitFor(() => expect(c.bubbles("assistant").at(-1)?.text).toBe("for the owner"));
    await settled(c);
  });

  it("commands and what /stop drops are completed, so a restart does not run them again", async () => {
    const c = await start(home(), [forever("working on it\n"), [text("never")]], { queueMode: "queue" });
    c.send("first", "a");
    await vi.waitFor(() => expect(c.bubbles("assistant").at(-1)?.text).toMatch(/^working/));
    c.send("second", "b");
    await vi.waitFor(() => expect(c.hub.router.receiptQueue(c.hub.keyOf(CONV)).size).toBe(1));
    c.send("/stop", "c");
    await vi.waitFor(() =>
      expect(c.bubbles("system").some((b) => b.text.includes("Dropped 1 queued"))).toBe(true),
    );
    await settled(c);
    // The stopped turn ran (the user saw it stop); the queued message never did; the command ran.
    expect(outcomesOf(c)).toEqual(["answered", "refused", "answered"]);
  });
});

describe("a restart", () => {
  it("answers the message a stop cut short, in the bubble its first run had opened", async () => {
    const dir = home();
    const a = await start(dir, [forever("half an ans")]);
    a.send("question", "q1");
    await vi.waitFor(() => expect(a.bubbles("assistant").at(-1)?.text).toMatch(/^half an/));
    const firstId = a.bubbles("assistant").at(-1)?.id;
    await a.stop();
    expect(await unfinishedTexts(dir)).toEqual(["question"]);

    const b = await start(dir, [[text("the whole answer"), done]]);
    await vi.waitFor(() => expect(b.bubbles("assistant").at(-1)?.text).toBe("the whole answer"));
    await settled(b);
    expect(b.provider.prompts).toEqual(["question"]);
    // Same turn, same part: the same bubble id (a page that still shows the first one replaces it).
    expect(b.bubbles("assistant").map((x) => x.id)).toEqual([firstId]);
    // The history has the question once and the answer once.
    const lines = await b.parley.transcripts.recent(b.hub.keyOf(CONV), 10);
    expect(lines.map((l) => l.entry)).toEqual([
      { kind: "user", text: "question", attachments: [] },
      { kind: "agent", text: "the whole answer" },
    ]);
  });

  it("answers a message whose process died (nothing shut down) exactly once", async () => {
    const dir = home();
    const a = await start(dir, [forever("thinking…")]);
    a.send("are you there", "q1");
    await vi.waitFor(() => expect(a.bubbles("assistant").at(-1)?.text).toMatch(/^thinking/));
    // No stop: the first process is simply gone as far as the second one knows.
    const b = await start(dir, [[text("yes"), done]]);
    await vi.waitFor(() => expect(b.bubbles("assistant").at(-1)?.text).toBe("yes"));
    await settled(b);
    expect(b.provider.prompts).toEqual(["are you there"]);
  });

  it("tells the sender instead of answering a message found too old to run", async () => {
    const dir = home();
    const a = await start(dir, [forever("…")]);
    a.send("deploy it", "q1");
    await vi.waitFor(() => expect(a.bubbles("assistant")).toHaveLength(1));
    await a.stop();
    const later = () => Date.now() + 16 * 60_000;
    const b = await start(dir, [[text("deployed"), done]], { now: later });
    await vi.waitFor(() =>
      expect(b.bubbles("system").at(-1)?.text).toBe(
        "⚠️ parley restarted while working on your message “deploy it”, and it is now too old to run. Send it again to run it.",
      ),
    );
    expect(b.provider.prompts).toEqual([]);
    expect(outcomesOf(b)).toEqual(["stale"]);
  });

  it("gives up on a message whose runs were cut short too often (it may be what kills the gateway)", async () => {
    const dir = home();
    const a = await start(dir, [forever("…")]);
    a.send("the poison", "q1");
    await vi.waitFor(() => expect(a.bubbles("assistant")).toHaveLength(1));
    await a.stop();
    // Two more starts died on it before this one.
    const p = await openTestStore(dir);
    const [row] = await p.intake.unfinished();
    await p.intake.claim(row?.id ?? 0);
    await p.intake.claim(row?.id ?? 0);
    await p.close();
    const b = await start(dir, [[text("boom"), done]]);
    await vi.waitFor(() =>
      expect(b.bubbles("system").at(-1)?.text).toBe(
        "⚠️ parley stopped 3 times while working on your message “the poison”, so it was not run again. Send it again to retry.",
      ),
    );
    expect(b.provider.prompts).toEqual([]);
    expect(outcomesOf(b)).toEqual(["failed"]);
  });
});

describe("/history", () => {
  it("lists the conversation's messages, its tools and its answers, newest last", async () => {
    const c = await start(home(), [
      [text("first answer"), done],
      [
        { type: "tool_call", toolCallId: "t1", title: "Read notes.md", kind: "read" },
        text("second answer"),
        done,
      ],
    ]);
    c.send("one", "a");
    await vi.waitFor(() => expect(c.bubbles("assistant").at(-1)?.text).toBe("first answer"));
    c.send("two", "b");
    await vi.waitFor(() => expect(c.bubbles("assistant").at(-1)?.text).toBe("second answer"));
    await settled(c);
    c.send("/history 3", "c");
    await vi.waitFor(() =>
      expect(c.bubbles("system").at(-1)?.text).toBe(
        ["**Last 3 lines**", "- 👤 two", "- 🔧 Read notes.md", "- 🤖 second answer"].join("\n"),
      ),
    );
    c.send("/history nope", "d");
    await vi.waitFor(() => expect(c.bubbles("system").at(-1)?.text).toBe("Usage: `/history [n]`"));
  });
});

function probe(channel: string, platformMessageId: string) {
  return { channel, platformMessageId, conversationKey: "probe", payload: null, receivedAtMs: 0 };
}

/** Every journaled message's outcome, oldest first (a read-only look beside the running store). */
function outcomesOf(c: { home: string }): string[] {
  const db = new Database(storePath(c.home), { readonly: true });
  try {
    return (db.prepare("select outcome from intake order by id").all() as { outcome: string }[]).map(
      (r) => r.outcome,
    );
  } finally {
    db.close();
  }
}

async function unfinishedTexts(dir: string): Promise<string[]> {
  const p = await openTestStore(dir);
  try {
    return (await p.intake.unfinished()).map((r) => (r.payload as { text: string }).text);
  } finally {
    await p.close();
  }
}

/**
 * AcpProviders sharing an AgentPool over a real multi-session agent subprocess (test/fakes/acp/
 * multi.mjs, which keeps its transcripts in a directory like a real agent): processes are shared
 * and bounded, a conversation beyond capacity waits visibly and is answered, idle sessions close
 * and resume with their history, a crash touches only its own sessions, a killed idle agent costs
 * no message, failures carry a short redacted reason, and the post-cancel bug is recovered from.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ParleyError } from "../../src/messaging/base/errors.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ProviderEvent } from "../../src/messaging/turn/provider-events.js";
import { AgentPool } from "../../src/providers/agent-pool.js";
import { AcpProvider, type AcpProviderOptions } from "../../src/providers/index.js";
import {
  captureLogs,
  collect,
  collectError,
  expectGone,
  fakeAgent,
  textOf,
  zombieChildren,
} from "./helpers.js";

let store: string;
const pools: AgentPool[] = [];
const providers: AcpProvider[] = [];

beforeEach(() => {
  store = mkdtempSync(join(tmpdir(), "parley-multi-"));
});

afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.close()));
  const pids = pools.flatMap((p) => p.stats().pids);
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const pid of pids) expectGone(pid);
  expect(zombieChildren()).toEqual([]);
  rmSync(store, { recursive: true, force: true });
});

function pool(
  limits: { maxProcesses: number; maxSessionsPerProcess: number },
  argv: string[] = [],
): AgentPool {
  const p = new AgentPool({
    agent: {
      command: process.execPath,
      args: [fakeAgent("multi"), ...argv],
      env: { FAKE_STORE: store },
      cwd: process.cwd(),
    },
    ...limits,
    logger: captureLogs().logger,
    killGraceMs: 300,
    startTimeoutMs: 5_000,
  });
  pools.push(p);
  return p;
}

function session(on: AgentPool, extra: Partial<AcpProviderOptions> = {}): AcpProvider {
  const p = new AcpProvider({
    command: "unused-with-a-pool",
    pool: on,
    logger: captureLogs().logger,
    cancelGraceMs: 1_000,
    ...extra,
  });
  providers.push(p);
  return p;
}

const answerOf = (events: ProviderEvent[]) => textOf(events);
const resumes = (events: ProviderEvent[]) => events.filter((e) => e.type === "session_resume");

describe("sessions share a bounded pool of agent processes", () => {
  it("spreads sessions over maxProcesses, then packs them up to maxSessionsPerProcess", async () => {
    const shared = pool({ maxProcesses: 2, maxSessionsPerProcess: 3 });
    const all = Array.from({ length: 6 }, () => session(shared));
    const answers = await Promise.all(all.map(async (p, i) => answerOf(await collect(p.prompt(`hi ${i}`)))));
    expect(answers).toEqual(all.map((_, i) => `answer 1: hi ${i} | history: `));
    expect(shared.stats()).toMatchObject({ processes: 2, sessions: 6, waiting: 0 });
    expect(new Set(all.map((p) => p.pid)).size).toBe(2);
  });

  it("prewarm starts agents before any session; an unused warm agent exits", async () => {
    const shared = pool({ maxProcesses: 2, maxSessionsPerProcess: 2 });
    await shared.prewarm(5, 400); // never past maxProcesses
    expect(shared.stats()).toMatchObject({ processes: 2, sessions: 0 });
    const p = session(shared);
    await collect(p.prompt("warm"));
    // The one that got a session stays; the unused one exits after 400 ms.
    await vi.waitFor(() => expect(shared.stats()).toMatchObject({ processes: 1, sessions: 1 }), {
      timeout: 3_000,
    });
  });

  it("a conversation beyond capacity waits visibly (agent_wait) and is answered when a slot frees", async () => {
    const shared = pool({ maxProcesses: 1, maxSessionsPerProcess: 1 });
    const first = session(shared);
    let stopFirst: Promise<boolean> | undefined;
    // The first turn is stopped only once the second conversation shows its wait: on a loaded
    // machine a bare timer could free the slot before the second one asked for it.
    let showWait: () => void = () => {};
    const waitShown = new Promise<void>((resolve) => {
      showWait = resolve;
    });
    const busy = collect(first.prompt("slow"), (e, seen) => {
      if (e.type === "text" && seen.length === 3)
        stopFirst = waitShown.then(() => new Promise((r) => setTimeout(() => r(first.cancel()), 300)));
    });
    await vi.waitFor(() => expect(first.hasActiveTurn()).toBe(true));
    const second = session(shared);
    await second.start(); // returns without a slot: the wait belongs to the turn, where it is visible
    expect(second.isAttached).toBe(false);
    const events = await collect(second.prompt("me too"), (e) => {
      if (e.type === "agent_wait") showWait();
    });
    expect(events[0]).toEqual({ type: "agent_wait", position: 1 });
    expect(answerOf(events)).toBe("answer 1: me too | history: ");
    expect((await busy).at(-1)).toEqual({ type: "complete", stopReason: "cancelled" });
    expect(await stopFirst).toBe(true);
    expect(shared.stats().processes).toBe(1);
  });

  it("a full pool closes the least recently active idle session; it resumes with its history", async () => {
    const shared = pool({ maxProcesses: 1, maxSessionsPerProcess: 2 });
    const [a, b, c] = [session(shared), session(shared), session(shared)];
    await collect(a.prompt("a1"));
    await collect(b.prompt("b1"));
    const c1 = await collect(c.prompt("c1")); // no wait: a (idle longest) gave up its slot
    expect(c1.some((e) => e.type === "agent_wait")).toBe(false);
    expect(a.isAttached).toBe(false);
    const a2 = await collect(a.prompt("a2"));
    expect(resumes(a2)).toEqual([
      {
        type: "session_resume",
        outcome: "restored",
        cause: "capacity",
        reason: "the earlier conversation was restored",
      },
    ]);
    expect(answerOf(a2)).toBe("answer 2: a2 | history: a1");
    // The replayed history (a1 and its answer) was state, never output of this turn.
    expect(textOf(a2)).not.toContain("answer 1");
  });
});

describe("idle sessions close; the next message resumes them", () => {
  it("after idleTimeoutMs the session closes and the empty process exits; the next turn is restored", async () => {
    const shared = pool({ maxProcesses: 2, maxSessionsPerProcess: 4 });
    const p = session(shared, { idleTimeoutMs: 300 });
    await collect(p.prompt("one"));
    const pid = p.pid;
    await vi.waitFor(() => expect(shared.stats().processes).toBe(0), { timeout: 3_000 });
    await vi.waitFor(() => expectGone(pid), { timeout: 3_000 });
    const next = await collect(p.prompt("two"));
    expect(resumes(next)).toMatchObject([{ outcome: "restored", cause: "idle" }]);
    expect(answerOf(next)).toBe("answer 2: two | history: one");
    expect(p.pid).not.toBe(pid);
  });

  it("an agent without session/load starts fresh and says so", async () => {
    const shared = pool({ maxProcesses: 1, maxSessionsPerProcess: 1 }, ["no-load"]);
    const p = session(shared, { idleTimeoutMs: 200 });
    await collect(p.prompt("one"));
    await vi.waitFor(() => expect(p.isAttached).toBe(false), { timeout: 3_000 });
    const next = await collect(p.prompt("two"));
    expect(resumes(next)).toEqual([
      {
        type: "session_resume",
        outcome: "fresh",
        cause: "idle",
        reason: "this agent cannot restore an earlier session",
      },
    ]);
    expect(answerOf(next)).toBe("answer 1: two | history: ");
  });

  it("resumes an agent session id handed in (a restart), and reports the ids it opens", async () => {
    const shared = pool({ maxProcesses: 1, maxSessionsPerProcess: 2 });
    const ids: string[] = [];
    const before = session(shared, { onSessionId: (id) => ids.push(id) });
    await collect(before.prompt("remember me"));
    expect(ids).toEqual([before.agentSessionId]);
    const after = session(shared, { resumeSessionId: ids[0] as string });
    const events = await collect(after.prompt("still there?"));
    expect(resumes(events)).toMatchObject([{ outcome: "restored", cause: "replaced" }]);
    expect(answerOf(events)).toBe("answer 2: still there? | history: remember me");
  });

  it("SessionManager seeds a replacement (after a hard stop) with its predecessor's agent session", async () => {
    const shared = pool({ maxProcesses: 1, maxSessionsPerProcess: 4 });
    const persisted: [string, string][] = [];
    const sessions = new SessionManager<AcpProvider>({
      createProvider: (_key, seed) =>
        session(shared, {
          ...(seed.resumeSessionId ? { resumeSessionId: seed.resumeSessionId } : {}),
          onSessionId: seed.onAgentSessionId,
        }),
      onAgentSessionId: (key, id) => persisted.push([key, id]),
    });
    const first = await sessions.provider("k");
    await collect(first.prompt("one"));
    expect(sessions.agentSessionId("k")).toBe(first.agentSessionId);
    expect(persisted).toEqual([["k", first.agentSessionId]]);
    await sessions.hardStop("k");
    const second = await sessions.provider("k");
    expect(second).not.toBe(first);
    expect(answerOf(await collect(second.prompt("two")))).toBe("answer 2: two | history: one");
    await sessions.evict("k"); // /new: the next conversation starts fresh
    expect(sessions.agentSessionId("k")).toBeUndefined();
  });
});

describe("agent sessions outlive the gateway", () => {
  it("a new SessionManager (a restarted gateway) recalls a session's agent session; /new forgets it", async () => {
    const shared = pool({ maxProcesses: 1, maxSessionsPerProcess: 4 });
    const kept = new Map<string, string>();
    const manager = () =>
      new SessionManager<AcpProvider>({
        createProvider: (_key, seed) =>
          session(shared, {
            ...(seed.resumeSessionId ? { resumeSessionId: seed.resumeSessionId } : {}),
            onSessionId: seed.onAgentSessionId,
          }),
        onAgentSessionId: (key, id) => kept.set(key, id),
        memory: {
          recall: async (key) => kept.get(key),
          forget: (key) => kept.delete(key),
        },
      });
    const before = manager();
    await collect((await before.provider("k")).prompt("one"));
    await before.closeAll();
    const after = manager();
    const events = await collect((await after.provider("k")).prompt("two"));
    expect(resumes(events)).toMatchObject([{ outcome: "restored" }]);
    expect(answerOf(events)).toBe("answer 2: two | history: one");
    await after.evict("k");
    expect(kept.has("k")).toBe(false);
    const fresh = manager();
    expect(answerOf(await collect((await fresh.provider("k")).prompt("three")))).toBe(
      "answer 1: three | history: ",
    );
  });
});

describe("a dead agent is noticed and replaced", () => {
  it("kill -9 of an idle agent: the next message is answered, with the earlier turns", async () => {
    const shared = pool({ maxProcesses: 1, maxSessionsPerProcess: 2 });
    const p = session(shared);
    await collect(p.prompt("before"));
    const pid = p.pid as number;
    process.kill(pid, "SIGKILL");
    await vi.waitFor(() => expect(shared.stats().processes).toBe(0), { timeout: 3_000 });
    const next = await collect(p.prompt("after"));
    expect(resumes(next)).toMatchObject([{ outcome: "restored", cause: "agent_exited" }]);
    expect(answerOf(next)).toBe("answer 2: after | history: before");
    expect(p.pid).not.toBe(pid);
  });

  it("a crash takes only the sessions on that process with it", async () => {
    const shared = pool({ maxProcesses: 2, maxSessionsPerProcess: 2 });
    const [a, b] = [session(shared), session(shared)];
    await Promise.all([collect(a.prompt("a1")), collect(b.prompt("b1"))]);
    expect(a.pid).not.toBe(b.pid);
    const { error } = await collectError(a.prompt("crash"));
    expect(error).toMatchObject({
      code: "PROVIDER_EXITED",
      message: expect.stringMatching(/exited \(code 3\)/),
    });
    // b's process was untouched: same pid, no resume, history intact.
    const bPid = b.pid;
    const b2 = await collect(b.prompt("b2"));
    expect(b.pid).toBe(bPid);
    expect(resumes(b2)).toEqual([]);
    expect(answerOf(b2)).toBe("answer 2: b2 | history: b1");
    // a's next message is answered on a replacement process, its history restored.
    expect(answerOf(await collect(a.prompt("a2")))).toBe("answer 2: a2 | history: a1");
  });
});

describe("every failure is visible", () => {
  it("a failed turn ends with the agent's reason, short and redacted", async () => {
    const p = session(pool({ maxProcesses: 1, maxSessionsPerProcess: 1 }));
    const { error } = await collectError(p.prompt("fail"));
    expect(error).toBeInstanceOf(ParleyError);
    const message = (error as Error).message;
    expect(message).toMatch(
      /^agent failed the turn: API Error: Unable to connect to API \(ECONNREFUSED\) key=/,
    );
    expect(message).not.toContain("sk-ant-api03");
    expect(message).not.toContain("-32603");
  });

  it("an agent that cannot start reports its error and first stderr lines, redacted", async () => {
    const p = session(pool({ maxProcesses: 1, maxSessionsPerProcess: 1 }, ["stderr"]));
    const { error } = await collectError(p.prompt("hi"));
    const message = (error as Error).message;
    expect(message).toMatch(
      /exited \(code 1\); agent stderr: fatal: config invalid, token=.* \| second line$/,
    );
    expect(message).not.toContain("sk-ant-api03");
  });

  it("no output for silenceNoticeMs: a silence event, then the answer", async () => {
    const p = session(pool({ maxProcesses: 1, maxSessionsPerProcess: 1 }), { silenceNoticeMs: 300 });
    const events = await collect(p.prompt("quiet"));
    const silences = events.filter((e) => e.type === "silence");
    expect(silences.length).toBeGreaterThanOrEqual(1);
    expect(silences[0]).toEqual({ type: "silence", seconds: 0 });
    expect(answerOf(events)).toBe("answer 1: quiet | history: ");
  });

  it("a tool the agent retitles arrives as a tool_call_update with the new title", async () => {
    const p = session(pool({ maxProcesses: 1, maxSessionsPerProcess: 1 }));
    const events = await collect(p.prompt("tool"));
    expect(events.filter((e) => e.type === "tool_call" || e.type === "tool_call_update")).toEqual([
      { type: "tool_call", toolCallId: "t1", title: "Terminal", kind: "execute" },
      { type: "tool_call_update", toolCallId: "t1", title: "ls -la", status: "in_progress" },
      { type: "tool_call_update", toolCallId: "t1", status: "completed" },
    ]);
  });
});

describe("the post-cancel bug (claude-agent-acp#551)", () => {
  it("the scripted agent reproduces it: to a bare client, the answers shift by one message", async () => {
    const child = spawn(process.execPath, [fakeAgent("multi"), "bug551"], {
      env: { ...process.env, FAKE_STORE: store },
      stdio: ["pipe", "pipe", "inherit"],
    });
    const texts: string[] = [];
    const conn = client({ name: "bare" })
      .onNotification(methods.client.session.update, ({ params }) => {
        const u = params.update;
        if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
          texts.push(u.content.text);
      })
      .connect(
        ndJsonStream(
          Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
          Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
        ),
      );
    try {
      await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await conn.agent.request(methods.agent.session.new, {
        cwd: store,
        mcpServers: [],
      });
      const ask = async (text: string) => {
        texts.length = 0;
        const res = await conn.agent.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text }],
        });
        await new Promise((r) => setImmediate(r));
        return { stopReason: res.stopReason, text: texts.join("") };
      };
      const slow = ask("slow");
      await new Promise((r) => setTimeout(r, 100));
      await conn.agent.notify(methods.agent.session.cancel, { sessionId });
      expect((await slow).stopReason).toBe("cancelled");
      expect(await ask("first")).toEqual({ stopReason: "end_turn", text: "" });
      expect((await ask("second")).text).toBe(
        "answer 1: first | history: \nanswer 2: second | history: first",
      );
    } finally {
      conn.close();
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    }
  });

  it("after /stop, the next two messages each get their own answer", async () => {
    const p = session(pool({ maxProcesses: 1, maxSessionsPerProcess: 1 }, ["bug551"]));
    await collect(p.prompt("hello"));
    const stopped = await collect(p.prompt("slow"), (e, seen) => {
      if (e.type === "text" && seen.length === 3) void p.cancel();
    });
    expect(stopped.at(-1)).toEqual({ type: "complete", stopReason: "cancelled" });
    const first = await collect(p.prompt("first"));
    // Its own answer (the bug would have ended it at once, empty, and handed it to "second").
    expect(answerOf(first)).toBe("answer 2: first | history: hello");
    expect(first.at(-1)).toEqual({ type: "complete", stopReason: "end_turn" });
    const second = await collect(p.prompt("second"));
    expect(answerOf(second)).toBe("answer 3: second | history: hello, first");
  });
});

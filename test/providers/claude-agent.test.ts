/**
 * The real `@zed-industries/claude-agent-acp` (Claude Code inside) driven through AcpProvider and
 * an AgentPool against a local fake of the Anthropic Messages API (test/fakes/anthropic): answers,
 * a tool call the agent retitles, a failing API's reason, idle close and resume with the earlier
 * turns restored (the fake sees them), kill -9 of an idle agent, and the post-cancel bug.
 */
import { rmSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ProviderEvent } from "../../src/messaging/turn/provider-events.js";
import { AgentPool } from "../../src/providers/agent-pool.js";
import { AcpProvider, type AcpProviderOptions, probeAgent } from "../../src/providers/index.js";
import { FakeAnthropic } from "../fakes/anthropic/server.js";
import { captureLogs, collect, collectError, textOf, zombieChildren } from "./helpers.js";
import { claudeAgentEntry, claudeEnv, processGroup, scratchHome } from "./real-agent-helpers.js";

let fake: FakeAnthropic;
let home: string;
const pools: AgentPool[] = [];
const providers: AcpProvider[] = [];

beforeAll(async () => {
  fake = await new FakeAnthropic({ lifetimeMs: 170_000 }).start();
  home = scratchHome("claude");
});

afterAll(async () => {
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.close()));
  const pids = pools.flatMap((p) => p.stats().pids);
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const pid of pids) expect(processGroup(pid)).toEqual([]);
  expect(zombieChildren()).toEqual([]);
});

function claudePool(baseUrl = fake.baseUrl): AgentPool {
  const pool = new AgentPool({
    agent: {
      command: process.execPath,
      args: [claudeAgentEntry()],
      baseEnv: claudeEnv(home, baseUrl),
      cwd: home,
    },
    maxProcesses: 2,
    maxSessionsPerProcess: 4,
    logger: captureLogs().logger,
    startTimeoutMs: 30_000,
    killGraceMs: 2_000,
  });
  pools.push(pool);
  return pool;
}

function claude(pool: AgentPool, extra: Partial<AcpProviderOptions> = {}): AcpProvider {
  const p = new AcpProvider({
    command: "claude-agent-acp",
    cwd: home,
    pool,
    logger: captureLogs().logger,
    ...extra,
  });
  providers.push(p);
  return p;
}

/** The user texts of the (last) model request that answered `prompt`: what the model saw. */
const userTexts = (prompt: string): string[] =>
  (fake.messageRequests.filter((r) => r.lastUserText === prompt).at(-1)?.messages ?? []).flatMap((m) =>
    m.role !== "user" || !Array.isArray(m.content)
      ? []
      : (m.content as { type: string; text?: string }[]).flatMap((b) =>
          b.type === "text" && b.text ? [b.text] : [],
        ),
  );

describe("claude-agent-acp against a fake Messages API", () => {
  it("doctor's handshake reports it: name, version, loadSession, models, commands", async () => {
    const result = await probeAgent(
      {
        command: process.execPath,
        args: [claudeAgentEntry()],
        baseEnv: claudeEnv(home, fake.baseUrl),
        cwd: home,
      },
      { timeoutMs: 30_000 },
    );
    expect(result).toMatchObject({
      ok: true,
      agent: { name: "@zed-industries/claude-agent-acp", version: "0.23.1" },
      capabilities: { loadSession: true, resumeSession: true, closeSession: true, image: true },
    });
    if (!result.ok) return;
    expect(result.commands).toContain("compact");
    expect(result.models.length).toBeGreaterThan(1);
  });

  it("answers, and a tool call arrives retitled with its command; the tool result reaches the model", async () => {
    const p = claude(claudePool());
    expect(textOf(await collect(p.prompt("hello there")))).toBe("ECHO: hello there");
    const events = await collect(p.prompt("TOOL ls -la"));
    const tool = events.find((e) => e.type === "tool_call");
    expect(tool).toMatchObject({ title: "Terminal", kind: "execute" });
    const retitled = events.find(
      (e): e is Extract<ProviderEvent, { type: "tool_call_update" }> =>
        e.type === "tool_call_update" && e.title !== undefined,
    );
    expect(retitled).toMatchObject({
      toolCallId: (tool as { toolCallId: string }).toolCallId,
      title: "ls -la",
    });
    expect(events.some((e) => e.type === "tool_call_update" && e.status === "completed")).toBe(true);
    expect(textOf(events)).toMatch(/^Running it\.TOOL DONE: total \d+/);
    expect(fake.messageRequests.at(-1)?.toolResults[0]?.text).toMatch(/^total \d+/);
  });

  it("a failing API ends the turn with the agent's reason", async () => {
    const down = new FakeAnthropic();
    await down.start();
    const url = down.baseUrl;
    await down.close(); // nothing listens there now: ECONNREFUSED
    const p = claude(claudePool(url));
    const { error } = await collectError(p.prompt("anyone there?"));
    expect((error as Error).message).toMatch(
      /^agent failed the turn: .*API Error.*(ECONNREFUSED|Unable to connect)/,
    );
  });

  it("idle 5 s: within 15 s no agent process remains; the next message is answered with the earlier turns", async () => {
    const pool = claudePool();
    const p = claude(pool, { idleTimeoutMs: 5_000 });
    expect(textOf(await collect(p.prompt("my name is Ada")))).toBe("ECHO: my name is Ada");
    const pid = p.pid as number;
    expect(processGroup(pid).length).toBeGreaterThan(1); // the adapter and its Claude Code
    await vi.waitFor(
      () => {
        expect(pool.stats().processes).toBe(0);
        expect(processGroup(pid)).toEqual([]);
      },
      { timeout: 15_000, interval: 250 },
    );
    const next = await collect(p.prompt("what is my name?"));
    expect(next.find((e) => e.type === "session_resume")).toMatchObject({
      outcome: "restored",
      cause: "idle",
    });
    expect(textOf(next)).toBe("ECHO: what is my name?");
    expect(userTexts("what is my name?")).toEqual(
      expect.arrayContaining(["my name is Ada", "what is my name?"]),
    );
    expect(p.pid).not.toBe(pid);
  }, 45_000);

  it("kill -9 of an idle agent: the next message is answered, the earlier turns restored", async () => {
    const pool = claudePool();
    const p = claude(pool);
    await collect(p.prompt("remember 42"));
    const pid = p.pid as number;
    // Idle, as a user would leave it: Claude Code writes its transcript just after the answer.
    await new Promise((r) => setTimeout(r, 1_000));
    process.kill(-pid, "SIGKILL");
    await vi.waitFor(() => expect(pool.stats().processes).toBe(0), { timeout: 5_000 });
    const next = await collect(p.prompt("what did I ask you to remember?"));
    expect(textOf(next)).toBe("ECHO: what did I ask you to remember?");
    expect(userTexts("what did I ask you to remember?")).toEqual(expect.arrayContaining(["remember 42"]));
  }, 45_000);

  it("after /stop, the next two messages each get their own answer (claude-agent-acp#551)", async () => {
    const p = claude(claudePool(), { cancelGraceMs: 10_000 });
    await collect(p.prompt("hello"));
    const stopped = await collect(p.prompt("TOOL sleep 5"), (e) => {
      if (e.type === "tool_call") void p.cancel();
    });
    expect(stopped.at(-1)).toEqual({ type: "complete", stopReason: "cancelled" });
    const first = await collect(p.prompt("first"));
    expect(textOf(first)).toBe("ECHO: first");
    const second = await collect(p.prompt("second"));
    expect(textOf(second)).toBe("ECHO: second");
  }, 60_000);
});

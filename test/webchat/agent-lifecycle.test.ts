/**
 * Issue 15's acceptance at the chat, through the whole gateway and the web chat's real WebSocket,
 * with real ACP agents as subprocesses: the real claude-agent-acp against a local fake of the
 * Anthropic Messages API (idle close and restored resume, kill -9 of an idle agent, the API down,
 * /stop then two messages), and a scripted ACP agent (one that cannot open a session, one that
 * cannot restore one, a conversation beyond capacity). What is asserted is what the user reads.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/gateway/config.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { webchatChannel } from "../../src/webchat/index.js";
import { FakeAnthropic } from "../fakes/anthropic/server.js";
import { descendants, unreaped } from "../helpers/processes.js";
import { WebChatSocket } from "../helpers/webchat-socket.js";
import { fakeAgent } from "../providers/helpers.js";
import { claudeAgentEntry, claudeEnv, scratchHome } from "../providers/real-agent-helpers.js";

interface Running {
  gateway: Gateway;
  url: string;
  sockets: WebChatSocket[];
}

const running: Running[] = [];

/** The gateway in-process with only the web chat, over the given agent and its environment. */
async function startGateway(agent: Record<string, unknown>, env: Record<string, string>): Promise<Running> {
  const announced: string[] = [];
  const gateway = await Gateway.start({
    config: parseConfig({ webchat: { port: 0 }, agent }, env),
    env,
    home: mkdtempSync(join(tmpdir(), "parley-lifecycle-")),
    logger: new MemoryLogger(),
    announce: (line) => announced.push(line),
    channels: [webchatChannel],
  });
  const r: Running = { gateway, url: (announced[0] ?? "").replace("parley web chat: ", ""), sockets: [] };
  running.push(r);
  return r;
}

async function open(r: Running, conversation: string): Promise<WebChatSocket> {
  const socket = await WebChatSocket.open(r.url, conversation);
  r.sockets.push(socket);
  return socket;
}

/** Say `text` and resolve with the finished answer's bubbles as the user reads them. */
async function ask(socket: WebChatSocket, text: string, timeoutMs = 30_000): Promise<string> {
  const since = socket.count;
  socket.say(text);
  await socket.finished(since + 1, timeoutMs);
  return socket
    .visible()
    .slice(-(socket.count - since - 1))
    .join("\n---\n");
}

async function stopAll(): Promise<void> {
  for (const r of running.splice(0)) {
    for (const s of r.sockets) s.close();
    await r.gateway.shutdown();
  }
}

/** Live processes running `script` that this test process started (through the gateway). */
const agentsRunning = (script: string) => descendants(process.pid).filter((p) => p.cmdline.includes(script));

describe("the web chat with claude-agent-acp against a fake Messages API", () => {
  let fake: FakeAnthropic;
  let home: string;
  let chat: Running;
  const claude = claudeAgentEntry();

  beforeAll(async () => {
    fake = await new FakeAnthropic({ lifetimeMs: 240_000 }).start();
    home = scratchHome("claude-chat");
    chat = await startGateway(
      { command: process.execPath, args: [claude], cwd: home, maxProcesses: 1, idleTimeoutSeconds: 5 },
      claudeEnv(home, fake.baseUrl),
    );
  }, 60_000);

  /** Agent homes, removed once every agent is stopped (Claude Code writes there until it exits). */
  const homes: string[] = [];

  afterAll(async () => {
    await stopAll();
    await fake.close();
    for (const h of [home, ...homes]) rmSync(h, { recursive: true, force: true });
  });

  /** The user texts of the model request that answered `prompt`: what the model was shown. */
  const shownToModel = (prompt: string): string[] =>
    (fake.messageRequests.filter((m) => m.lastUserText === prompt).at(-1)?.messages ?? []).flatMap((m) =>
      m.role !== "user" || !Array.isArray(m.content)
        ? []
        : (m.content as { type: string; text?: string }[]).flatMap((b) =>
            b.type === "text" && b.text ? [b.text] : [],
          ),
    );

  it("idle 5 s: after 15 s no agent process remains; the next message is answered with the earlier turns", async () => {
    const user = await open(chat, "idle");
    expect(await ask(user, "my name is Ada")).toContain("ECHO: my name is Ada");
    // The adapter and the Claude Code it runs for the session.
    expect(descendants(process.pid).length).toBeGreaterThanOrEqual(2);
    await vi.waitFor(() => expect(descendants(process.pid)).toEqual([]), { timeout: 15_000, interval: 250 });
    const answer = await ask(user, "what is my name?");
    expect(answer).toContain("ECHO: what is my name?");
    // Restored, not restarted: nothing says the context is gone, and the model saw the first turn.
    expect(answer).not.toContain("fresh agent session");
    expect(shownToModel("what is my name?")).toEqual(expect.arrayContaining(["my name is Ada"]));
  }, 90_000);

  it("kill -9 of an idle agent: the next message is answered", async () => {
    const user = await open(chat, "killed");
    expect(await ask(user, "remember 42")).toContain("ECHO: remember 42");
    // Idle, as a user leaves it: Claude Code writes its transcript just after the answer.
    await new Promise((r) => setTimeout(r, 1_000));
    const [adapter] = agentsRunning(claude).filter(
      (p) => !agentsRunning(claude).some((q) => q.pid === p.ppid),
    );
    expect(adapter).toBeDefined();
    const pid = adapter?.pid as number;
    process.kill(-pid, "SIGKILL");
    // Reaped, not merely dead: the gateway has seen the exit (it reaps its own children), as it has
    // long before a user types the next message.
    await vi.waitFor(() => expect(unreaped(pid)).toBe(false), { timeout: 5_000 });
    const answer = await ask(user, "what did I ask you to remember?");
    expect(answer).toContain("ECHO: what did I ask you to remember?");
    expect(answer).not.toMatch(/did not answer|Failed after/);
  }, 90_000);

  it("after /stop, the next two messages each get their own answer", async () => {
    const user = await open(chat, "stopped");
    const since = user.count;
    user.say("TOOL sleep 20");
    // The agent is running its tool (or asking to): stop it there.
    await user.waitFor(
      (b) => user.bubbles().indexOf(b) > since && /🔧|Permission needed/.test(`${b.status ?? ""}${b.text}`),
      30_000,
      "the tool under way",
    );
    user.say("/stop");
    await user.waitFor((b) => /^🛑 Stopped/.test(b.status ?? ""), 30_000, "the stopped turn");
    const first = await ask(user, "first");
    expect(first).toContain("ECHO: first");
    const second = await ask(user, "second");
    expect(second).toContain("ECHO: second");
    expect(second).not.toContain("ECHO: first");
  }, 120_000);

  it("the model API down: the user reads the reason", async () => {
    const down = new FakeAnthropic();
    await down.start();
    const url = down.baseUrl;
    await down.close(); // nothing listens there now: ECONNREFUSED
    const downHome = scratchHome("claude-down");
    homes.push(downHome);
    const broken = await startGateway(
      { command: process.execPath, args: [claude], cwd: downHome, maxProcesses: 1 },
      claudeEnv(downHome, url),
    );
    const user = await open(broken, "down");
    const answer = await ask(user, "anyone there?", 60_000);
    expect(answer).toMatch(/API Error.*(ECONNREFUSED|Unable to connect)/);
    expect(answer).toContain("Try again");
  }, 90_000);
});

describe("the web chat with a scripted ACP agent", () => {
  afterEach(stopAll);
  const multi = fakeAgent("multi");
  const store = () => mkdtempSync(join(tmpdir(), "parley-multi-store-"));

  it("an agent that cannot open a session: the user reads why, though no answer ever started", async () => {
    const r = await startGateway(
      { command: process.execPath, args: [multi, "auth"] },
      { PATH: process.env.PATH ?? "" },
    );
    const user = await open(r, "auth");
    const answer = await ask(user, "hello");
    expect(answer).toContain(
      "The agent could not be started: agent requires authentication: log in with its own CLI",
    );
  });

  it("an agent that dies at start: the user reads its exit and first stderr lines, redacted", async () => {
    const r = await startGateway(
      { command: process.execPath, args: [multi, "stderr"] },
      { PATH: process.env.PATH ?? "" },
    );
    const user = await open(r, "dies");
    const answer = await ask(user, "hello");
    expect(answer).toMatch(
      /The agent could not be started: .*exited \(code 1\); agent stderr: fatal: config invalid, token=\[REDACTED[^\n]*\| second line/,
    );
    expect(answer).not.toContain("sk-ant-api03");
  });

  it("an agent that cannot restore a session: after an idle close it is given the last messages, and the chat says so", async () => {
    const r = await startGateway(
      {
        command: process.execPath,
        args: [multi, "no-load"],
        env: { FAKE_STORE: store() },
        idleTimeoutSeconds: 1,
      },
      { PATH: process.env.PATH ?? "" },
    );
    const user = await open(r, "fresh");
    expect(await ask(user, "one")).toContain("answer 1: one");
    await vi.waitFor(() => expect(agentsRunning(multi)).toEqual([]), { timeout: 10_000, interval: 100 });
    const answer = await ask(user, "two");
    expect(answer).toMatch(
      /I had to start a fresh agent session because it had been idle \(this agent cannot restore an earlier session\): it was given this conversation's last 2 messages; anything earlier is gone\.[\s\S]*answer 1: /,
    );
    // The agent really was given them (the scripted agent echoes what it received).
    expect(answer).toMatch(/User: one[\s\S]*Assistant: answer 1: one[\s\S]*two/);
  }, 30_000);

  it("a conversation beyond capacity waits behind a visible receipt, then is answered", async () => {
    const r = await startGateway(
      {
        command: process.execPath,
        args: [multi],
        env: { FAKE_STORE: store() },
        maxProcesses: 1,
        maxSessionsPerProcess: 1,
      },
      { PATH: process.env.PATH ?? "" },
    );
    const busy = await open(r, "busy");
    const waiting = await open(r, "waiting");
    busy.say("slow");
    await busy.waitFor((b) => b.text.includes("tick"), 10_000, "the slow answer streaming");
    const since = waiting.count;
    waiting.say("hello");
    await waiting.waitFor((b) => (b.status ?? "").includes("Waiting for a free agent… (next in line)"));
    busy.say("/stop");
    await waiting.finished(since + 1);
    expect(waiting.visible().join("\n")).toContain("answer 1: hello");
  }, 30_000);
});

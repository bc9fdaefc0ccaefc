/**
 * A second real ACP agent: Google's Gemini CLI (`gemini --acp`, pure JavaScript, installs from npm
 * with nothing to build or download) driven through AcpProvider and an AgentPool against a local
 * fake of the Gemini API (test/fakes/gemini): answers, a shell tool that asks permission first,
 * and idle close with the resume outcome told truthfully (this CLI version cannot load its sessions).
 */
import { rmSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentPool } from "../../src/providers/agent-pool.js";
import { AcpProvider, type AcpProviderOptions } from "../../src/providers/index.js";
import { FakeGemini } from "../fakes/gemini/server.js";
import { captureLogs, collect, textOf, zombieChildren } from "./helpers.js";
import { geminiCliEntry, geminiEnv, processGroup, scratchHome } from "./real-agent-helpers.js";

let fake: FakeGemini;
let home: string;
const pools: AgentPool[] = [];
const providers: AcpProvider[] = [];

beforeAll(async () => {
  fake = await new FakeGemini({ lifetimeMs: 120_000 }).start();
  home = scratchHome("gemini");
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

function gemini(extra: Partial<AcpProviderOptions> = {}): { pool: AgentPool; p: AcpProvider } {
  const pool = new AgentPool({
    agent: {
      command: process.execPath,
      args: [geminiCliEntry(), "--acp"],
      baseEnv: geminiEnv(home, fake.baseUrl),
      cwd: home,
    },
    maxProcesses: 1,
    maxSessionsPerProcess: 4,
    logger: captureLogs().logger,
    startTimeoutMs: 30_000,
    killGraceMs: 2_000,
  });
  pools.push(pool);
  const p = new AcpProvider({ command: "gemini", cwd: home, pool, logger: captureLogs().logger, ...extra });
  providers.push(p);
  return { pool, p };
}

const userTexts = (): string[] =>
  (fake.modelRequests.filter((r) => r.action === "streamGenerateContent").at(-1)?.contents ?? []).flatMap(
    (c) =>
      c.role === "user"
        ? c.parts.flatMap((part) =>
            typeof part.text === "string"
              ? [part.text.replace(/^<session_context>[\s\S]*?<\/session_context>\s*/, "")]
              : [],
          )
        : [],
  );

describe("Gemini CLI (--acp) against a fake Gemini API", () => {
  it("answers; a shell tool asks permission first and runs once approved", async () => {
    const { p } = gemini();
    expect(textOf(await collect(p.prompt("hello gemini")))).toBe("ECHO: hello gemini");
    const events = await collect(p.prompt("TOOL touch parley-was-here && ls"), (e) => {
      if (e.type === "permission_request") p.answerPermission(e.requestId, "approve");
    });
    const ask = events.find((e) => e.type === "permission_request");
    expect(ask).toMatchObject({ kind: "execute" });
    expect(events.at(-1)).toEqual({ type: "complete", stopReason: "end_turn" });
    expect(textOf(events)).toContain("TOOL DONE:");
    expect(textOf(events)).toContain("parley-was-here");
  }, 60_000);

  it("idle: the session closes and the process exits; the next message is answered, and what parley says about the earlier turns is true", async () => {
    // Gemini CLI 0.61.0 (pinned) advertises loadSession, but its session/load usually does not find
    // a session made over ACP (observed: "Invalid session identifier" on the same process, "No
    // previous sessions found" on a new one, whose startup rewrites the transcript first); on a busy
    // machine it sometimes does. Either way parley must tell the truth: "fresh" only when the model
    // really lost the earlier turn, silence only when it really kept it.
    const { pool, p } = gemini({ idleTimeoutMs: 1_000 });
    await collect(p.prompt("my favourite colour is teal"));
    const pid = p.pid as number;
    await vi.waitFor(() => expect(processGroup(pid)).toEqual([]), { timeout: 10_000, interval: 200 });
    expect(pool.stats().processes).toBe(0);
    const next = await collect(p.prompt("which colour?"));
    expect(textOf(next)).toBe("ECHO: which colour?");
    const resumed = next.find((e) => e.type === "session_resume") as
      | { outcome: string; cause: string; reason?: string }
      | undefined;
    expect(resumed?.cause).toBe("idle");
    if (resumed?.outcome === "fresh") {
      expect(resumed.reason).toMatch(
        /^the agent could not restore the earlier session \(agent could not load the session: /,
      );
      expect(userTexts()).not.toContain("my favourite colour is teal");
    } else {
      expect(resumed?.outcome).toBe("restored");
      expect(userTexts()).toContain("my favourite colour is teal");
    }
  }, 60_000);
});

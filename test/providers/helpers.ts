/** Shared helpers for the provider tests: event collection, log capture, process hygiene checks. */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { ProviderEvent } from "../../src/messaging/turn/provider-events.js";
import type { AcpProviderOptions } from "../../src/providers/acp-types.js";
import type { LogLevel, ProviderLogger } from "../../src/providers/index.js";
import { AcpProvider, demoAgentCommand } from "../../src/providers/index.js";

export function fakeAgent(name: string): string {
  return fileURLToPath(new URL(`../fakes/acp/${name}.mjs`, import.meta.url));
}

export interface LogLine {
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown> | undefined;
}

export function captureLogs(): { logger: ProviderLogger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  return { lines, logger: (level, msg, fields) => lines.push({ level, msg, fields }) };
}

/** Drains a turn; `onEvent` may act on the agent mid-turn (answer, steer, cancel). */
export async function collect(
  events: AsyncIterable<ProviderEvent>,
  onEvent?: (event: ProviderEvent, seen: ProviderEvent[]) => void | Promise<void>,
): Promise<ProviderEvent[]> {
  const seen: ProviderEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    await onEvent?.(event, seen);
  }
  return seen;
}

/** Drains a turn that must throw; returns the events before the error and the error. */
export async function collectError(
  events: AsyncIterable<ProviderEvent>,
): Promise<{ seen: ProviderEvent[]; error: unknown }> {
  const seen: ProviderEvent[] = [];
  try {
    for await (const event of events) seen.push(event);
  } catch (error) {
    return { seen, error };
  }
  throw new Error(`turn ended without an error after ${seen.length} events`);
}

export function textOf(events: ProviderEvent[], type: "text" | "thinking" = "text"): string {
  return events.map((e) => (e.type === type ? e.text : "")).join("");
}

/** The process is gone AND reaped: a zombie still answers signal 0. */
export function expectGone(pid: number | undefined): void {
  expect(pid).toBeTypeOf("number");
  let code: string | undefined;
  try {
    process.kill(pid as number, 0);
  } catch (err) {
    code = (err as NodeJS.ErrnoException).code;
  }
  expect(code).toBe("ESRCH");
}

/** Zombie children of this test process, from /proc (Linux); empty elsewhere. */
export function zombieChildren(): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const zombies: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited while scanning
    }
    // "pid (comm) state ppid ...": comm may contain spaces and parens, so split after the last ")".
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state === "Z" && Number(ppid) === process.pid) zombies.push(Number(entry));
  }
  return zombies;
}

/** A real AcpProvider over one of test/fakes/acp/<name>.mjs, with short grace windows; its logs captured. */
export function fakeAgentProvider(
  name: string,
  extra: Partial<AcpProviderOptions> & { argv?: string[] } = {},
): { provider: AcpProvider; logs: LogLine[] } {
  const { logger, lines } = captureLogs();
  const { argv = [], ...opts } = extra;
  const provider = new AcpProvider({
    command: process.execPath,
    args: [fakeAgent(name), ...argv],
    logger,
    cancelGraceMs: 300,
    killGraceMs: 300,
    startTimeoutMs: 5_000,
    ...opts,
  });
  return { provider, logs: lines };
}

/** A real AcpProvider over the bundled demo agent (instant unless `speed` says otherwise). */
export function demoProvider(speed = "0"): AcpProvider {
  const { logger } = captureLogs();
  return new AcpProvider({
    ...demoAgentCommand(),
    env: { DEMO_AGENT_SPEED: speed },
    cwd: ".",
    logger,
    cancelGraceMs: 2_000,
    killGraceMs: 500,
  });
}

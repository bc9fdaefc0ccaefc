/**
 * doctor's ACP handshake: start the agent, `initialize`, `session/new`, wait briefly for the command
 * list the agent announces, `session/close` (when offered), stop it, all within one deadline. It
 * reports who the agent is and what it offers, or the first line of what went wrong (with its
 * first stderr lines), redacted: an agent that exists but cannot open a session fails here, not
 * at the first message. Layer: providers.
 */
import { resolve as resolvePath } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { realClock, type Timers } from "../messaging/base/clock.js";
import { redactAll } from "../messaging/security/index.js";
import { oneLine } from "../messaging/text/clip.js";
import { AgentConnection, type AgentSpec, type SessionSink } from "./acp-connection.js";
import { agentReason, MAX_REASON_CHARS, newSession } from "./acp-handshake.js";
import { modelMenuOf } from "./acp-mapping.js";
import { withTimeout } from "./acp-types.js";

export interface AgentProbeOk {
  ok: true;
  agent: { name: string | undefined; title: string | undefined; version: string | undefined };
  capabilities: {
    loadSession: boolean;
    resumeSession: boolean;
    closeSession: boolean;
    steering: boolean;
    image: boolean;
    audio: boolean;
    embeddedContext: boolean;
  };
  /** Model names the agent offers (its model selector, or its own model list); empty if none. */
  models: string[];
  /** Slash commands the agent announced for the new session (e.g. "compact"). */
  commands: string[];
  elapsedMs: number;
}

export interface AgentProbeFailed {
  ok: false;
  /** Where it failed: starting the process (incl. initialize), or opening a session. */
  stage: "start" | "session";
  /** The first line of the error, redacted and bounded. */
  error: string;
  /** The agent's first stderr lines, redacted. */
  stderr: string[];
  elapsedMs: number;
}

export type AgentProbeResult = AgentProbeOk | AgentProbeFailed;

export interface ProbeOptions {
  /** The whole handshake must finish within this. Default 30000. */
  timeoutMs?: number;
  /** How long to wait for the command list after session/new. Default 1500. */
  commandsWaitMs?: number;
  timers?: Timers;
}

export async function probeAgent(spec: AgentSpec, opts: ProbeOptions = {}): Promise<AgentProbeResult> {
  const timers = opts.timers ?? realClock;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const started = Date.now();
  const connection = new AgentConnection(
    { ...spec, cwd: resolvePath(spec.cwd) },
    {
      logger: () => {},
      timers,
      startTimeoutMs: timeoutMs,
      killGraceMs: 1_000,
      clientInfo: { name: "parley-doctor", version: "0.1.0" },
    },
  );
  const failed = (stage: AgentProbeFailed["stage"], err: unknown): AgentProbeFailed => ({
    ok: false,
    stage,
    error: firstLine(err),
    stderr: connection.stderrHead(),
    elapsedMs: Date.now() - started,
  });
  try {
    let caps: Awaited<ReturnType<AgentConnection["start"]>>;
    try {
      caps = await connection.start();
    } catch (err) {
      return failed("start", err);
    }
    let commands: string[] | undefined;
    let announced: () => void = () => {};
    const commandsArrived = new Promise<void>((resolve) => {
      announced = resolve;
    });
    const sink: SessionSink = {
      onUpdate: ({ update }) => {
        if (update.sessionUpdate !== "available_commands_update") return;
        commands = update.availableCommands.map((c) => c.name);
        announced();
      },
      onPermission: async () => ({ outcome: { outcome: "cancelled" } }),
      onConnectionLost: () => announced(),
    };
    const left = () => Math.max(1, timeoutMs - (Date.now() - started));
    let session: Awaited<ReturnType<typeof newSession>> | undefined;
    try {
      const opened = newSession(connection.client, spec.cwd);
      opened.catch(() => {});
      session = await withTimeout(opened, left(), timers);
      if (!session) throw new Error(`the agent did not answer session/new within ${timeoutMs} ms`);
    } catch (err) {
      return failed("session", (await connection.lossCause(500)) ?? err);
    }
    connection.attach(session.sessionId, sink);
    await withTimeout(commandsArrived, Math.min(left(), opts.commandsWaitMs ?? 1_500), timers);
    if (caps.closeSession && connection.alive) {
      const closing = connection.client.agent.request(methods.agent.session.close, {
        sessionId: session.sessionId,
      });
      closing.catch(() => {});
      await withTimeout(closing, Math.min(left(), 2_000), timers);
    }
    const menu = modelMenuOf(session.configOptions);
    return {
      ok: true,
      agent: { name: caps.agentName, title: caps.agentTitle, version: caps.agentVersion },
      capabilities: {
        loadSession: caps.loadSession,
        resumeSession: caps.resumeSession,
        closeSession: caps.closeSession,
        steering: caps.steering,
        ...caps.promptCapabilities,
      },
      models: menu ? menu.options.map((o) => o.name) : session.modelNames,
      commands: commands ?? [],
      elapsedMs: Date.now() - started,
    };
  } finally {
    await connection.terminate();
  }
}

/** The first line of an error, as doctor prints it: redacted, bounded. */
function firstLine(err: unknown): string {
  const text = agentReason(err);
  return oneLine(redactAll(text.split("\n")[0] ?? text), MAX_REASON_CHARS);
}

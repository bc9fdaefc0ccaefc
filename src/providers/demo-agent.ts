/**
 * parley's demo agent: a deterministic ACP agent (no network) run as a subprocess, built on the
 * SDK's agent side over stdio. Scenarios are picked by words in the prompt (demo-agent-script.ts).
 * It advertises and implements `_session/steering`, honours session/cancel, and serves any number
 * of sessions on one process (session/close frees one). It offers a model
 * selector (a session config option of category "model", set with session/set_config_option; the
 * `model` scenario names the selected one) and a `/compact` command that lowers the reported usage.
 * Run: `node dist/providers/demo-agent.js` or, in dev, `node --import tsx src/providers/demo-agent.ts`.
 * DEMO_AGENT_SPEED = milliseconds between chunks (default 15; 0 streams instantly, except "slow").
 * Layer: providers (SDK agent side + zod; stdout is the protocol channel, logs go to stderr).
 */
import { realpathSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  type AgentContext,
  agent,
  type ContentBlock,
  methods,
  ndJsonStream,
  type PermissionOption,
  type PromptResponse,
  RequestError,
  type SessionConfigOption,
  type SessionUpdate,
  type Stream,
} from "@agentclientprotocol/sdk";
import { z } from "zod";
import {
  COMPACTED_TOKENS,
  COMPACTION_SUMMARY,
  DEFAULT_DEMO_MODEL,
  DEMO_MODEL_CONFIG_ID,
  DEMO_MODELS,
  demoTitle,
  GREETING,
  isCompactCommand,
  longAnswer,
  modelAnswer,
  OPTIONS_ANSWER,
  pickScenario,
  receivedNote,
  type ScenarioName,
  SECRET_ANSWER,
  SLOW_STEP_MS,
  slowLines,
  TABLE_ANSWER,
  THINKING,
  TOOL_CALL,
  toolVerdictText,
} from "./demo-agent-script.js";

const CONTEXT_SIZE = 200_000;
/** Varied chunk sizes so fences, table rows and words get split at awkward places, as real streams do. */
const CHUNK_SIZES = [12, 30, 18, 41, 25, 9];
/** The long answer streams in bigger chunks so the demo does not take a minute to finish. */
const LONG_CHUNK_SCALE = 4;

const SteeringParams = z.object({
  sessionId: z.string(),
  prompt: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  _meta: z
    .looseObject({ steering: z.looseObject({ idleBehavior: z.string().optional() }).optional() })
    .nullish(),
});

class Cancelled extends Error {}

interface RunningTurn {
  readonly abort: AbortController;
  readonly steers: string[];
  /** Set once the last steer was acknowledged: later steers must not be reported as injected. */
  closed: boolean;
}

interface DemoSession {
  readonly id: string;
  turn: RunningTurn | undefined;
  tokens: number;
  /** The selected DEMO_MODELS value. */
  model: string;
  compactions: number;
}

export interface DemoAgentOptions {
  /** Milliseconds between streamed chunks. */
  speedMs?: number;
}

/** Serves the demo agent on `stream` until the client disconnects. */
export function runDemoAgent(stream: Stream, opts: DemoAgentOptions = {}): Promise<void> {
  const speedMs = opts.speedMs ?? 15;
  const sessions = new Map<string, DemoSession>();
  let nextSession = 0;
  /** The client advertised clientCapabilities.session.compaction: it understands compaction updates. */
  let compactionUpdates = false;
  const session = (id: string): DemoSession => {
    const s = sessions.get(id);
    if (!s) throw RequestError.sessionNotFound(id);
    return s;
  };

  const app = agent({ name: "parley-demo-agent" })
    .onRequest(methods.agent.initialize, ({ params }) => {
      compactionUpdates = params.clientCapabilities?.session?.compaction != null;
      return {
        // Only v1 exists here; a client asking for another version gets 1 and decides for itself.
        protocolVersion: 1,
        // session/close, so a pooled process frees an idle conversation's state; no session/load
        // (its sessions live in memory only: after a restart there is nothing to restore).
        agentCapabilities: { loadSession: false, promptCapabilities: {}, sessionCapabilities: { close: {} } },
        agentInfo: { name: "parley-demo-agent", title: "parley demo agent", version: "0.1.0" },
        authMethods: [],
        _meta: { steering: { supported: true } },
      };
    })
    .onRequest(methods.agent.session.new, ({ client }) => {
      const id = `demo-${++nextSession}`;
      const s: DemoSession = {
        id,
        turn: undefined,
        tokens: 12_000,
        model: DEFAULT_DEMO_MODEL,
        compactions: 0,
      };
      sessions.set(id, s);
      // Like real agents, announce commands right after the session exists (after the response).
      setImmediate(() => {
        notify(client, id, {
          sessionUpdate: "available_commands_update",
          availableCommands: [
            { name: "help", description: "List the demo scenarios" },
            { name: "compact", description: "Compact the conversation (lowers the context usage)" },
          ],
        }).catch((err: unknown) => console.error("demo agent: could not announce commands:", err));
      });
      return { sessionId: id, configOptions: configOptions(s) };
    })
    .onRequest(methods.agent.session.setConfigOption, ({ params }) => {
      const s = session(params.sessionId);
      if (params.configId !== DEMO_MODEL_CONFIG_ID) {
        throw RequestError.invalidParams(undefined, `unknown config option: ${params.configId}`);
      }
      const value: unknown = params.value;
      const model = DEMO_MODELS.find((m) => m.value === value);
      if (!model) throw RequestError.invalidParams(undefined, `unknown model: ${String(value).slice(0, 40)}`);
      s.model = model.value;
      return { configOptions: configOptions(s) };
    })
    .onRequest(methods.agent.session.prompt, ({ params, client }) =>
      runTurn(client, session(params.sessionId), params.prompt, speedMs, compactionUpdates),
    )
    .onRequest(methods.agent.session.close, ({ params }) => {
      const s = session(params.sessionId);
      s.turn?.abort.abort();
      sessions.delete(s.id);
      return {};
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.turn?.abort.abort();
    })
    .onRequest("_session/steering", SteeringParams, ({ params }) => {
      const s = session(params.sessionId);
      const text = params.prompt
        .map((b) => b.text ?? "")
        .join("\n")
        .trim();
      const turn = s.turn;
      if (turn && !turn.closed && !turn.abort.signal.aborted) {
        turn.steers.push(text);
        return { outcome: "injected" };
      }
      // The idle guard: never start a detached turn whose output nobody reads.
      if (params._meta?.steering?.idleBehavior === "promptRequired") return { outcome: "promptRequired" };
      return { outcome: "failed" };
    });
  const conn = app.connect(stream);
  return conn.closed;
}

/** The model selector, as session/new, set_config_option and config_option_update report it. */
function configOptions(s: DemoSession): SessionConfigOption[] {
  return [
    {
      type: "select",
      id: DEMO_MODEL_CONFIG_ID,
      name: "Model",
      description: "Which pretend model answers",
      category: "model",
      currentValue: s.model,
      options: DEMO_MODELS.map((m) => ({ value: m.value, name: m.name, description: m.description })),
    },
  ];
}

async function runTurn(
  client: AgentContext,
  s: DemoSession,
  prompt: ContentBlock[],
  speedMs: number,
  compactionUpdates: boolean,
): Promise<PromptResponse> {
  if (s.turn) throw RequestError.invalidRequest(undefined, "a turn is already running in this session");
  const turn: RunningTurn = { abort: new AbortController(), steers: [], closed: false };
  s.turn = turn;
  const out = new Streamer(client, s.id, turn);
  const text = prompt.map((b) => (b.type === "text" ? b.text : "")).join("\n");
  const scenario = pickScenario(text);
  try {
    const title = demoTitle(text);
    if (title !== null) {
      await out.stream("agent_message_chunk", [title], speedMs, CHUNK_SIZES);
      return { stopReason: "end_turn" };
    }
    if (isCompactCommand(text)) {
      await compact(client, out, s, speedMs, compactionUpdates);
      return { stopReason: "end_turn" };
    }
    await out.stream("agent_thought_chunk", [THINKING[scenario]], speedMs, CHUNK_SIZES);
    const note = receivedNote(prompt);
    if (note) await out.stream("agent_message_chunk", [`${note}\n\n`], speedMs, CHUNK_SIZES);
    const answer = await playScenario(scenario, client, out, s, speedMs);
    await out.acknowledgeSteers(true);
    s.tokens += Math.ceil((text.length + answer.length) / 4);
    await notify(client, s.id, { sessionUpdate: "usage_update", used: s.tokens, size: CONTEXT_SIZE });
    return { stopReason: "end_turn" };
  } catch (err) {
    if (err instanceof Cancelled) return { stopReason: "cancelled" };
    throw err;
  } finally {
    turn.closed = true;
    s.turn = undefined;
  }
}

/** Streams the scenario's answer; returns the text it sent (for the usage estimate). */
async function playScenario(
  scenario: ScenarioName,
  client: AgentContext,
  out: Streamer,
  s: DemoSession,
  speedMs: number,
): Promise<string> {
  const say = async (text: string, sizes = CHUNK_SIZES): Promise<string> => {
    await out.stream("agent_message_chunk", blocks(text), speedMs, sizes);
    return text;
  };
  switch (scenario) {
    case "hello":
      return say(GREETING);
    case "table":
      return say(TABLE_ANSWER);
    case "options":
      return say(OPTIONS_ANSWER);
    case "secret":
      return say(SECRET_ANSWER);
    case "model":
      return say(modelAnswer(s.model));
    case "long":
      return say(
        longAnswer(),
        CHUNK_SIZES.map((n) => n * LONG_CHUNK_SCALE),
      );
    case "slow": {
      // Always slow (ignores the speed knob): it exists to be cancelled and steered.
      const lines = slowLines().map((l) => `${l}\n`);
      await out.stream("agent_message_chunk", lines, SLOW_STEP_MS, [Number.MAX_SAFE_INTEGER]);
      return lines.join("");
    }
    case "tool":
      return say(await runTool(client, out, s.id));
  }
}

/**
 * The `/compact` command: the context shrinks to a summary. A client that advertised compaction
 * gets the typed updates (in progress, summary, completed); any other gets a plain sentence. The
 * lowered usage is reported before the completion, so the completed notice carries the new figure.
 */
async function compact(
  client: AgentContext,
  out: Streamer,
  s: DemoSession,
  speedMs: number,
  typedUpdates: boolean,
): Promise<void> {
  const compactionId = `${s.id}-compaction-${++s.compactions}`;
  if (typedUpdates)
    await notify(client, s.id, { sessionUpdate: "compaction_update", compactionId, status: "in_progress" });
  await out.pause(speedMs);
  if (typedUpdates) {
    const cut = COMPACTION_SUMMARY.indexOf(":") + 1;
    for (const text of [COMPACTION_SUMMARY.slice(0, cut), COMPACTION_SUMMARY.slice(cut)]) {
      await notify(client, s.id, {
        sessionUpdate: "compaction_summary_chunk",
        compactionId,
        content: { type: "text", text },
      });
    }
  }
  s.tokens = Math.min(s.tokens, COMPACTED_TOKENS);
  await notify(client, s.id, { sessionUpdate: "usage_update", used: s.tokens, size: CONTEXT_SIZE });
  if (typedUpdates) {
    await notify(client, s.id, { sessionUpdate: "compaction_update", compactionId, status: "completed" });
  } else {
    await notify(client, s.id, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "Context compacted." },
    });
  }
}

async function runTool(client: AgentContext, out: Streamer, sessionId: string): Promise<string> {
  const { toolCallId, title, kind, path, description } = TOOL_CALL;
  await notify(client, sessionId, {
    sessionUpdate: "plan",
    entries: [
      { content: "Summarise the conversation", priority: "medium", status: "completed" },
      { content: "Write the summary to notes.md", priority: "high", status: "in_progress" },
    ],
  });
  await notify(client, sessionId, {
    sessionUpdate: "tool_call",
    toolCallId,
    title,
    kind,
    status: "pending",
    rawInput: { path, description },
  });
  const options: PermissionOption[] = [
    { optionId: "allow", name: "Allow once", kind: "allow_once" },
    { optionId: "always", name: "Always allow", kind: "allow_always" },
    { optionId: "reject", name: "Reject", kind: "reject_once" },
  ];
  const answer = await out.untilCancelled(
    client.request(methods.client.session.requestPermission, {
      sessionId,
      toolCall: { toolCallId, title, kind, status: "pending" },
      options,
    }),
  );
  if (answer.outcome.outcome === "cancelled") throw new Cancelled();
  const chosen = answer.outcome.optionId;
  const optionKind = options.find((o) => o.optionId === chosen)?.kind;
  const approved = optionKind === "allow_once" || optionKind === "allow_always";
  if (approved) {
    await notify(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  }
  await notify(client, sessionId, {
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: approved ? "completed" : "failed",
  });
  return toolVerdictText(optionKind);
}

/** Streams text in small chunks, stopping at a cancel and acknowledging steers between blocks. */
class Streamer {
  constructor(
    private readonly client: AgentContext,
    private readonly sessionId: string,
    private readonly turn: RunningTurn,
  ) {}

  /**
   * Sends each segment in chunks of `sizes` (cycled). Steers are acknowledged only between
   * segments, so an acknowledgement never lands inside a code fence or a table.
   */
  async stream(
    kind: "agent_message_chunk" | "agent_thought_chunk",
    segments: string[],
    delayMs: number,
    sizes: number[],
  ): Promise<void> {
    let n = 0;
    for (const segment of segments) {
      if (kind === "agent_message_chunk") await this.acknowledgeSteers(false);
      const chars = Array.from(segment); // code points, so a chunk never splits a surrogate pair
      for (let at = 0; at < chars.length; ) {
        this.checkCancel();
        const size = sizes[n++ % sizes.length] ?? 16;
        const text = chars.slice(at, at + size).join("");
        at += size;
        await notify(this.client, this.sessionId, { sessionUpdate: kind, content: { type: "text", text } });
        if (delayMs > 0) await this.sleep(delayMs);
      }
    }
  }

  /** Echoes queued steers into the answer; `final` closes the turn to further steers. */
  async acknowledgeSteers(final: boolean): Promise<void> {
    for (let steer = this.turn.steers.shift(); steer !== undefined; steer = this.turn.steers.shift()) {
      const text = `\n\n> **Steer received:** ${steer.replace(/\s+/g, " ")}\n\n`;
      await notify(this.client, this.sessionId, {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text },
      });
    }
    // Synchronous after the loop's last check, so no steer can slip in unacknowledged.
    if (final) this.turn.closed = true;
  }

  /** Races an outbound request against the cancel signal. */
  untilCancelled<T>(work: Promise<T>): Promise<T> {
    const signal = this.turn.abort.signal;
    this.checkCancel();
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(new Cancelled());
      signal.addEventListener("abort", onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  /** Waits `ms` (nothing for 0), ending the turn as cancelled if a cancel arrives meanwhile. */
  async pause(ms: number): Promise<void> {
    this.checkCancel();
    if (ms > 0) await this.sleep(ms);
  }

  private checkCancel(): void {
    if (this.turn.abort.signal.aborted) throw new Cancelled();
  }

  private sleep(ms: number): Promise<void> {
    return this.untilCancelled(new Promise<void>((resolve) => setTimeout(resolve, ms)));
  }
}

function notify(client: AgentContext, sessionId: string, update: SessionUpdate): Promise<void> {
  return client.notify(methods.client.session.update, { sessionId, update });
}

/** Paragraph blocks (a fenced block stays whole, blank lines inside it included). */
function blocks(text: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let inFence = false;
  for (const line of text.split("\n")) {
    if (line.trimStart().startsWith("```")) inFence = !inFence;
    current.push(line);
    if (!inFence && line.trim() === "") {
      out.push(`${current.join("\n")}\n`);
      current = [];
    }
  }
  if (current.length > 0) out.push(current.join("\n"));
  return out;
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const speed = Number(process.env.DEMO_AGENT_SPEED ?? "15");
  const stream = ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  runDemoAgent(stream, { speedMs: Number.isFinite(speed) && speed >= 0 ? speed : 15 }).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error("demo agent failed:", err);
      process.exit(1);
    },
  );
}

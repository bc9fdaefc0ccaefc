/**
 * The ACP handshake, split in its two halves: `initialize` (once per agent process, with version
 * negotiation) and the session requests (new, load, close) that many sessions make on one process.
 * Plus the mapping of agent-side errors to short, redacted ParleyErrors. Layer: providers (SDK
 * client side + messaging security for redaction).
 */
import {
  type ClientConnection,
  type InitializeResponse,
  type McpServer,
  methods,
  RequestError,
  type SessionConfigOption,
} from "@agentclientprotocol/sdk";
import { ParleyError } from "../messaging/base/errors.js";
import { redactAll } from "../messaging/security/index.js";
import { oneLine } from "../messaging/text/clip.js";
import { ACP_PROTOCOL_VERSION } from "./acp-types.js";

/** What an agent process said about itself in `initialize`; the same for every session on it. */
export interface AgentCapabilities {
  agentName: string | undefined;
  agentTitle: string | undefined;
  agentVersion: string | undefined;
  /** `session/load` is offered (agentCapabilities.loadSession). */
  loadSession: boolean;
  /** `session/close` is offered (agentCapabilities.sessionCapabilities.close). */
  closeSession: boolean;
  /** `session/resume` is offered (reported for doctor; parley resumes with session/load). */
  resumeSession: boolean;
  /** InitializeResponse._meta.steering.supported === true. */
  steering: boolean;
  /** initialize's agentCapabilities.promptCapabilities: which non-text blocks a prompt may carry. */
  promptCapabilities: { image: boolean; audio: boolean; embeddedContext: boolean };
}

/** What session/new or session/load answered. */
export interface OpenedSession {
  sessionId: string;
  /** The session's config options (the model selector among them); empty when the agent sent none. */
  configOptions: SessionConfigOption[];
  /** Model names from the agent's own `models` field, for agents that report models that way. */
  modelNames: string[];
}

export type ClientInfo = { name: string; version: string; title?: string };

export async function initializeAgent(
  conn: ClientConnection,
  clientInfo: ClientInfo,
): Promise<AgentCapabilities> {
  let init: InitializeResponse;
  try {
    init = await conn.agent.request(methods.agent.initialize, {
      protocolVersion: ACP_PROTOCOL_VERSION,
      // Advertise only what parley implements: no fs, no terminal; compaction updates are mapped.
      clientCapabilities: {
        fs: { readTextFile: false, writeTextFile: false },
        terminal: false,
        session: { compaction: {} },
      },
      clientInfo,
    });
  } catch (err) {
    if (err instanceof RequestError && err.code === -32022) {
      throw new ParleyError(
        "PROVIDER_PROTOCOL",
        `agent does not support ACP protocol version ${ACP_PROTOCOL_VERSION}, the only one parley speaks`,
        { cause: err },
      );
    }
    throw asParleyError(err, "agent rejected initialize");
  }
  // The agent answers with the version it chose; speaking any other one would be guesswork.
  if (init.protocolVersion !== ACP_PROTOCOL_VERSION) {
    throw new ParleyError(
      "PROVIDER_PROTOCOL",
      `agent speaks ACP protocol version ${JSON.stringify(init.protocolVersion)}; parley speaks only version ${ACP_PROTOCOL_VERSION}`,
    );
  }
  const caps = init.agentCapabilities;
  const sessionCaps = caps?.sessionCapabilities;
  return {
    agentName: init.agentInfo?.name,
    agentTitle: init.agentInfo?.title ?? undefined,
    agentVersion: init.agentInfo?.version,
    loadSession: caps?.loadSession === true,
    // A capability left out (or null) is unsupported; `{}` means offered.
    closeSession: sessionCaps?.close != null,
    resumeSession: sessionCaps?.resume != null,
    steering: steeringSupported(init._meta),
    promptCapabilities: promptCapabilitiesOf(init),
  };
}

export async function newSession(
  conn: ClientConnection,
  cwd: string,
  mcpServers: McpServer[] = [],
): Promise<OpenedSession> {
  try {
    return openedSession(await conn.agent.request(methods.agent.session.new, { cwd, mcpServers }));
  } catch (err) {
    throw sessionError(err, "agent rejected session/new");
  }
}

/** session/load: the agent replays the session's history as session/update before it answers. */
export async function loadSession(
  conn: ClientConnection,
  sessionId: string,
  cwd: string,
  mcpServers: McpServer[] = [],
): Promise<OpenedSession> {
  try {
    const res = await conn.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers });
    return openedSession({ ...res, sessionId });
  } catch (err) {
    throw sessionError(err, "agent could not load the session");
  }
}

function openedSession(res: { sessionId: string; configOptions?: unknown; models?: unknown }): OpenedSession {
  const models = res.models as
    | { availableModels?: { name?: unknown; modelId?: unknown }[] }
    | null
    | undefined;
  return {
    sessionId: res.sessionId,
    configOptions: Array.isArray(res.configOptions) ? (res.configOptions as SessionConfigOption[]) : [],
    modelNames: Array.isArray(models?.availableModels)
      ? models.availableModels.map((m) => String(m.name ?? m.modelId ?? "")).filter((n) => n !== "")
      : [],
  };
}

function sessionError(err: unknown, context: string): ParleyError {
  if (err instanceof RequestError && err.code === -32000) {
    return new ParleyError("PROVIDER_PROTOCOL", "agent requires authentication: log in with its own CLI", {
      cause: err,
    });
  }
  return asParleyError(err, context);
}

/** Only an explicit true counts: an image block sent to an agent that did not declare it is rejected. */
function promptCapabilitiesOf(init: InitializeResponse): AgentCapabilities["promptCapabilities"] {
  const caps = init.agentCapabilities?.promptCapabilities;
  return {
    image: caps?.image === true,
    audio: caps?.audio === true,
    embeddedContext: caps?.embeddedContext === true,
  };
}

function steeringSupported(meta: Record<string, unknown> | null | undefined): boolean {
  const steering = meta?.steering;
  return typeof steering === "object" && steering !== null && "supported" in steering
    ? steering.supported === true
    : false;
}

/** Longest agent-authored reason a ParleyError carries: it may be shown in a chat. */
export const MAX_REASON_CHARS = 200;

export function asParleyError(err: unknown, context: string): ParleyError {
  if (err instanceof ParleyError) return err;
  return new ParleyError("PROVIDER_PROTOCOL", `${context}: ${agentReason(err)}`, { cause: err });
}

/**
 * The agent's own words for a failure, as a user may read them: one line, bounded, redacted (an
 * agent's error can quote a key or a URL with a token). JSON-RPC framing is dropped: "Internal
 * error: API Error: Unable to connect to API (ECONNREFUSED)" reads as the part after the prefix,
 * and the numeric code goes to the log only.
 */
export function agentReason(err: unknown): string {
  let text = err instanceof Error ? err.message : String(err);
  if (err instanceof RequestError) {
    const data = err.data as { details?: unknown } | string | undefined;
    const details = typeof data === "string" ? data : typeof data?.details === "string" ? data.details : "";
    if (details && !text.includes(details)) text = `${text}: ${details}`;
    text = text.replace(/^(Internal error|Invalid params|Invalid request): (?=\S)/, "");
  }
  return oneLine(redactAll(text), MAX_REASON_CHARS);
}

/** For logs: the error with its JSON-RPC code, unredacted text bounded. */
export function errorText(err: unknown): string {
  if (err instanceof RequestError) return `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}

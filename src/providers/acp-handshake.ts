/**
 * The ACP handshake (initialize with version negotiation, then session/new) and the mapping of
 * agent-side errors to ParleyErrors. Layer: providers (SDK client side).
 */
import {
  type ClientConnection,
  type InitializeResponse,
  methods,
  RequestError,
  type SessionConfigOption,
} from "@agentclientprotocol/sdk";
import { ParleyError } from "../messaging/base/errors.js";
import { ACP_PROTOCOL_VERSION } from "./acp-types.js";

export interface HandshakeResult {
  sessionId: string;
  /** InitializeResponse._meta.steering.supported === true. */
  steering: boolean;
  agentName: string | undefined;
  /** initialize's agentCapabilities.promptCapabilities: which non-text blocks a prompt may carry. */
  promptCapabilities: { image: boolean; audio: boolean; embeddedContext: boolean };
  /** session/new's configOptions (the model selector among them); empty when the agent sent none. */
  configOptions: SessionConfigOption[];
}

export async function handshake(
  conn: ClientConnection,
  cwd: string,
  clientInfo: { name: string; version: string; title?: string },
): Promise<HandshakeResult> {
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
  try {
    const session = await conn.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    return {
      sessionId: session.sessionId,
      steering: steeringSupported(init._meta),
      agentName: init.agentInfo?.name,
      promptCapabilities: promptCapabilitiesOf(init),
      configOptions: Array.isArray(session.configOptions) ? session.configOptions : [],
    };
  } catch (err) {
    if (err instanceof RequestError && err.code === -32000) {
      throw new ParleyError("PROVIDER_PROTOCOL", "agent requires authentication: log in with its own CLI", {
        cause: err,
      });
    }
    throw asParleyError(err, "agent rejected session/new");
  }
}

/** Only an explicit true counts: an image block sent to an agent that did not declare it is rejected. */
function promptCapabilitiesOf(init: InitializeResponse): HandshakeResult["promptCapabilities"] {
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

export function asParleyError(err: unknown, context: string): ParleyError {
  if (err instanceof ParleyError) return err;
  // The agent's own text is bounded: the message may be shown in a chat.
  return new ParleyError("PROVIDER_PROTOCOL", `${context}: ${errorText(err).slice(0, 200)}`, { cause: err });
}

export function errorText(err: unknown): string {
  if (err instanceof RequestError) return `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}

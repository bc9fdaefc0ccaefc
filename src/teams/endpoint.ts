/**
 * The messaging endpoint: the one route of parley reachable from the internet (through the
 * operator's HTTPS proxy). POST /api/messages only. The body is read under a byte cap before it is
 * parsed; the bearer token's issuer is read (not trusted: the signature is checked by the SDK) and
 * anything not naming the configured issuer is refused at once, which keeps the SDK on its channel
 * path (no emulator or skill validation, no key fetch from another origin); then the SDK's
 * CloudAdapter validates the token and runs `logic`, which acts only after that. A refusal of the
 * request is 4xx (401 for a token) with a counted drop and nothing started; an activity the gates
 * refuse after the token is 403.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { CloudAdapter, TurnContext } from "botbuilder";
import type { Logger } from "../messaging/base/logger.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";
import type { ActivityAnswer } from "./intake.js";

/** Teams activities are tens of kilobytes at most (a card submit, a file descriptor, a quote). */
export const MAX_ACTIVITY_BYTES = 256 * 1024;
export const MESSAGES_PATH = "/api/messages";

export interface EndpointOptions {
  /** host:port to listen on (port 0 picks one). */
  listen: string;
  adapter: CloudAdapter;
  tokenIssuer: string;
  /** Runs once the SDK accepted the token; a refusal it returns is answered instead of the SDK's 200. */
  logic: (ctx: TurnContext) => Promise<ActivityAnswer>;
  drops: InboundDrops;
  logger: Logger;
  maxBodyBytes?: number;
}

/** The issuer a bearer token names, read without trusting it; "" when there is none to read. */
export function claimedIssuer(authorization: string | undefined): string {
  const m = /^Bearer ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/.exec(authorization ?? "");
  if (!m) return "";
  try {
    const claims = JSON.parse(Buffer.from(m[2] as string, "base64url").toString("utf8")) as { iss?: unknown };
    return typeof claims.iss === "string" ? claims.iss : "";
  } catch {
    return "";
  }
}

class BodyTooLarge extends Error {}

async function readCapped(req: IncomingMessage, cap: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > cap) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > cap) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export class MessagingEndpoint {
  private readonly server = createServer((req, res) => void this.onRequest(req, res));
  private accepting = true;
  private readonly inflight = new Set<Promise<void>>();

  constructor(private readonly o: EndpointOptions) {}

  async start(): Promise<AddressInfo> {
    const at = this.o.listen.lastIndexOf(":");
    const host = this.o.listen.slice(0, at);
    const port = Number(this.o.listen.slice(at + 1));
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    return this.server.address() as AddressInfo;
  }

  get url(): string {
    const a = this.server.address() as AddressInfo;
    return `http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}${MESSAGES_PATH}`;
  }

  /** Refuse new activities (503: the Connector delivers them again later); requests under way finish. */
  async stopAccepting(): Promise<void> {
    this.accepting = false;
    await Promise.allSettled([...this.inflight]);
  }

  async close(): Promise<void> {
    this.accepting = false;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const work = this.handle(req, res).catch((error: unknown) => {
      this.o.logger.error("teams: the messaging endpoint failed", { error: String(error) });
      if (!res.headersSent) res.writeHead(500).end();
    });
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work));
    return work;
  }

  private refuse(res: ServerResponse, status: number, reason: string): void {
    this.o.drops.record({ reason, operation: "teams_inbound", outcome: "denied", fields: { status } });
    res.writeHead(status).end();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "").split("?")[0];
    if (path !== MESSAGES_PATH) return void res.writeHead(404).end();
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    if (!this.accepting) return void res.writeHead(503).end();
    let raw: Buffer;
    try {
      raw = await readCapped(req, this.o.maxBodyBytes ?? MAX_ACTIVITY_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLarge) return this.refuse(res, 413, "body_too_large");
      throw error;
    }
    const authorization = req.headers.authorization;
    if (claimedIssuer(authorization) !== this.o.tokenIssuer)
      return this.refuse(res, 401, authorization ? "invalid_token" : "missing_token");
    let body: unknown;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      return this.refuse(res, 400, "unparseable_body");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body))
      return this.refuse(res, 400, "unparseable_body");
    let status = 200;
    let sent: unknown;
    const reply = {
      socket: null,
      status: (code: number) => {
        status = code;
        return reply;
      },
      header: () => reply,
      send: (data: unknown) => {
        sent = data;
        return reply;
      },
      end: () => reply,
    };
    // The logic runs only once the SDK accepted the token: a failure before it is the token's.
    let validated = false;
    let answer: ActivityAnswer;
    await this.o.adapter.process(
      {
        method: "POST",
        headers: { authorization: authorization ?? "" },
        body: body as Record<string, unknown>,
      },
      reply,
      async (turn) => {
        validated = true;
        answer = await this.o.logic(turn);
      },
    );
    // The SDK refused the token (signature, audience, expiry, endorsement, serviceurl: 401), or
    // could not read it at all (a malformed JWT surfaces as 500): either way nothing acted. A 400
    // is the SDK refusing the activity's shape before it looked at the token.
    if (!validated)
      return status === 400
        ? this.refuse(res, 400, "unparseable_body")
        : this.refuse(res, 401, "invalid_token");
    // Refused by the gates (counted there): a status the sender's channel shows as a failed send.
    if (answer) return void res.writeHead(answer.refuseWith).end();
    if (status >= 500) this.o.logger.error("teams: an activity could not be taken", { status });
    const payload =
      status === 200 || sent === undefined || typeof sent === "string" ? undefined : JSON.stringify(sent);
    res.writeHead(status, payload ? { "content-type": "application/json" } : {}).end(payload);
  }
}

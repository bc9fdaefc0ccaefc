/**
 * Files users share on Webex: the message names content URLs; each is HEADed (name, type, size and
 * the scan state) before the message goes on, and downloaded by the turn that answers it. The token
 * authorizes both, so only URLs on the configured API origin are admitted (a file URL pointing
 * anywhere else would receive the token). Scan states: 423 is still scanning (a bounded retry, then
 * the sender is asked to send it again: Webex announces no scan's end to a bot); 410 (infected) and
 * 428 (unscannable) are refused; `allow=unscannable` is never asked for.
 */
import type { Timers } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import { boundedDownload } from "../messaging/files/bounded-download.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { WebexClient } from "./client.js";
import { retryAfterMs } from "./client.js";
import type { WebexEgress } from "./egress.js";

/** HEADs per file while it is still being scanned, before the sender is asked to send it again. */
const SCAN_RETRIES = 3;
const MAX_FILE_BYTES = 100 * 1024 * 1024;

export type FileCheck =
  | { kind: "ok"; attachments: InboundAttachment[] }
  | { kind: "scanning" }
  | { kind: "refused"; reason: string };

export class FileGate {
  private readonly origin: string;

  constructor(
    private readonly client: Pick<WebexClient, "head" | "authHeader">,
    apiUrl: string,
    private readonly timers: Timers,
    /** The download's route (HTTPS_PROXY honoured); absent, a direct connection. */
    private readonly egress?: Pick<WebexEgress, "dispatcher">,
  ) {
    this.origin = new URL(apiUrl).origin;
  }

  admits(url: string): boolean {
    try {
      const u = new URL(url);
      return u.origin === this.origin && !u.username && !u.password;
    } catch {
      return false;
    }
  }

  async check(refs: readonly InboundAttachment[]): Promise<FileCheck> {
    const out: InboundAttachment[] = [];
    for (const ref of refs) {
      if (!this.admits(ref.ref))
        return { kind: "refused", reason: "A file is not on Webex's file server, so it was not read." };
      let head = await this.client.head(ref.ref);
      for (let i = 0; head.status === 423 && i < SCAN_RETRIES; i++) {
        await sleep(this.timers, retryAfterMs(head.headers?.get("retry-after") ?? null));
        head = await this.client.head(ref.ref);
      }
      if (head.status === 423) return { kind: "scanning" };
      if (head.status === 410)
        return { kind: "refused", reason: "Webex flagged a file as infected; it was not read." };
      if (head.status === 428)
        return { kind: "refused", reason: "Webex could not scan a file, so it was not read." };
      if (head.status !== 200 || !head.headers)
        return { kind: "refused", reason: `A file could not be read (HTTP ${head.status}).` };
      const size = Number(head.headers.get("content-length"));
      const type = head.headers.get("content-type") ?? undefined;
      out.push({
        name: fileName(head.headers.get("content-disposition")) ?? ref.name,
        ref: ref.ref,
        ...(type ? { mimeType: type } : {}),
        ...(Number.isFinite(size) && size >= 0 ? { size } : {}),
      });
    }
    return { kind: "ok", attachments: out };
  }

  /** The ingest's byte source: nothing is fetched until the turn reads it. */
  source(ref: InboundAttachment): Attachment {
    return {
      name: ref.name,
      ...(ref.mimeType ? { mimeType: ref.mimeType } : {}),
      ...(ref.size !== undefined ? { size: ref.size } : {}),
      read: (signal) =>
        boundedDownload(
          () => {
            if (!this.admits(ref.ref)) throw new Error("the file is not on Webex's file server");
            const dispatcher = this.egress?.dispatcher(ref.ref);
            return { url: new URL(ref.ref), ...(dispatcher ? { dispatcher } : {}) };
          },
          signal,
          {
            maxBytes: MAX_FILE_BYTES,
            timers: this.timers,
            headers: this.client.authHeader(),
            serverName: "Webex's file server",
          },
        ),
    };
  }
}

/** `attachment; filename="x.pdf"` -> x.pdf (the path part dropped: a name, never a place). */
export function fileName(disposition: string | null): string | undefined {
  const m = disposition?.match(/filename\*?=(?:UTF-8'')?"?([^";]+)"?/i);
  if (!m?.[1]) return undefined;
  let name = m[1];
  try {
    name = decodeURIComponent(name);
  } catch {
    // Not percent-encoded: kept as sent.
  }
  return name.split(/[\\/]/).pop() || undefined;
}

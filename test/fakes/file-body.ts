/**
 * How the fakes answer a file download, written once: exact bytes, a stall (headers, then
 * nothing), or a long stream served only as fast as the client reads, so `served` counts what it
 * actually pulled and `closedEarly` shows a client that hung up before the end.
 */
import type { ServerResponse } from "node:http";

export interface FileBody {
  contentType?: string;
  /** Served exactly, with a matching Content-Length. */
  bytes?: Uint8Array;
  /** `head` then zeros up to `total` bytes, written under backpressure. */
  stream?: { head: Uint8Array; total: number };
  /** Send headers, then nothing: the client's timeout must end it. */
  stall?: boolean;
}

export interface ServedRecord {
  served: number;
  closedEarly: boolean;
}

/** Answers `res` with `body`, updating `rec`; `changed` is called whenever `rec` changes. */
export async function serveFileBody(
  res: ServerResponse,
  body: FileBody,
  rec: ServedRecord,
  changed: () => void = () => {},
): Promise<void> {
  const type = body.contentType ?? "application/octet-stream";
  if (body.stall) {
    res.writeHead(200, { "content-type": type });
    res.flushHeaders();
    res.on("close", () => {
      rec.closedEarly = true;
      changed();
    });
    return;
  }
  if (body.bytes) {
    res.writeHead(200, { "content-type": type, "content-length": String(body.bytes.length) });
    res.end(body.bytes);
    rec.served = body.bytes.length;
    return;
  }
  const stream = body.stream ?? { head: new Uint8Array(), total: 0 };
  res.writeHead(200, { "content-type": type, "content-length": String(stream.total) });
  let closed = false;
  let wake: (() => void) | undefined;
  res.on("close", () => {
    closed = true;
    if (rec.served < stream.total) rec.closedEarly = true;
    wake?.();
    changed();
  });
  res.on("drain", () => wake?.());
  const zeros = new Uint8Array(64 * 1024);
  let chunk: Uint8Array = body.stream?.head ?? zeros;
  while (!closed && rec.served < stream.total) {
    const piece = chunk.subarray(0, stream.total - rec.served);
    rec.served += piece.length;
    const flowing = res.write(piece);
    chunk = zeros;
    if (!flowing && !closed)
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
  }
  if (!closed) res.end();
}

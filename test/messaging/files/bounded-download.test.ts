/** boundedDownload's headers: none but Accept by default; a channel's own header only when passed. */
import type { IncomingHttpHeaders } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { boundedDownload } from "../../../src/messaging/files/bounded-download.js";

const seen: IncomingHttpHeaders[] = [];
const server = createServer((req, res) => {
  seen.push(req.headers);
  res.end("bytes");
});

afterEach(() => {
  seen.length = 0;
  server.close();
});

async function read(headers?: Record<string, string>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/f`);
  const chunks: Uint8Array[] = [];
  for await (const c of boundedDownload(() => url, new AbortController().signal, {
    maxBytes: 100,
    ...(headers ? { headers } : {}),
  }))
    chunks.push(c);
  return Buffer.concat(chunks).toString();
}

describe("boundedDownload headers", () => {
  it("sends no Authorization unless the channel passes one", async () => {
    expect(await read()).toBe("bytes");
    expect(seen[0]?.authorization).toBeUndefined();
    expect(seen[0]?.accept).toBe("*/*");
  });

  it("sends the channel's header (Webex's bearer token) and keeps Accept", async () => {
    expect(await read({ authorization: "Bearer t", accept: "text/html" })).toBe("bytes");
    expect(seen[0]?.authorization).toBe("Bearer t");
    expect(seen[0]?.accept).toBe("*/*");
  });
});

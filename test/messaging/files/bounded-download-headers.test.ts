import type { IncomingHttpHeaders, Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { boundedDownload } from "../../../src/messaging/files/bounded-download.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A loopback file server recording the headers of every request it gets. */
async function server(answer: (path: string) => { status: number; location?: string; body?: string }) {
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
  const s = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    const a = answer(req.url ?? "");
    res.writeHead(a.status, a.location ? { location: a.location } : {});
    res.end(a.body);
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return { seen, origin: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
}

async function read(url: string, headers?: Record<string, string>): Promise<string> {
  let out = "";
  for await (const chunk of boundedDownload(() => new URL(url), new AbortController().signal, {
    maxBytes: 1024,
    ...(headers ? { headers } : {}),
  }))
    out += Buffer.from(chunk).toString("utf8");
  return out;
}

describe("boundedDownload", () => {
  it("sends a channel's credential header to the admitted URL only, and no credential by default", async () => {
    const files = await server(() => ({ status: 200, body: "bytes" }));
    expect(await read(`${files.origin}/f`, { authorization: "Bearer xoxb-test" })).toBe("bytes");
    expect(await read(`${files.origin}/g`)).toBe("bytes");
    expect(files.seen.map((r) => r.headers.authorization)).toEqual(["Bearer xoxb-test", undefined]);
  });

  it("refuses a redirect without following it, so the credential never reaches the target", async () => {
    const elsewhere = await server(() => ({ status: 200, body: "stolen" }));
    const files = await server(() => ({ status: 302, location: `${elsewhere.origin}/grab` }));
    await expect(read(`${files.origin}/f`, { authorization: "Bearer xoxb-test" })).rejects.toThrow(
      /redirect, which is not followed/,
    );
    expect(elsewhere.seen).toEqual([]);
  });
});

/**
 * boundedDownload's redirect hops: refused unless the channel admits each one, at most `max`, every
 * hop with only the headers admitted for it (a credential for the first host never reaches the
 * next), and a refusal by `admit` ends the download before any request to the new address.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { boundedDownload } from "../../../src/messaging/files/bounded-download.js";

const seen: { path: string; authorization: string | undefined }[] = [];
const server = createServer((req, res) => {
  seen.push({ path: req.url ?? "", authorization: req.headers.authorization });
  const hop = /^\/hop\/(\d+)$/.exec(req.url ?? "");
  if (hop) {
    const n = Number(hop[1]);
    res.writeHead(302, { location: n === 0 ? "/file" : `/hop/${n - 1}` }).end();
    return;
  }
  if (req.url === "/file") return void res.writeHead(200).end("payload");
  res.writeHead(404).end();
});

let base = "";
async function start(): Promise<void> {
  if (base) return;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(() => {
  seen.length = 0;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function read(gen: AsyncGenerator<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const p of gen) parts.push(p);
  return Buffer.concat(parts).toString("utf8");
}

describe("boundedDownload redirects", () => {
  it("a redirect is refused when the channel admits none", async () => {
    await start();
    const gen = boundedDownload(() => new URL(`${base}/hop/0`), new AbortController().signal, {
      maxBytes: 100,
    });
    await expect(read(gen)).rejects.toThrow("answered with a redirect, which is not followed");
    expect(seen.map((s) => s.path)).toEqual(["/hop/0"]);
  });

  it("follows admitted hops with only each hop's own headers, up to max", async () => {
    await start();
    const admitted: string[] = [];
    const gen = boundedDownload(
      () => ({ url: new URL(`${base}/hop/1`), headers: { authorization: "Bearer first-host-only" } }),
      new AbortController().signal,
      {
        maxBytes: 100,
        redirects: {
          max: 2,
          admit: (location, hop) => {
            admitted.push(`${hop}:${location.pathname}`);
            return { url: location };
          },
        },
      },
    );
    expect(await read(gen)).toBe("payload");
    expect(admitted).toEqual(["1:/hop/0", "2:/file"]);
    expect(seen).toEqual([
      { path: "/hop/1", authorization: "Bearer first-host-only" },
      { path: "/hop/0", authorization: undefined },
      { path: "/file", authorization: undefined },
    ]);
  });

  it("more hops than max are refused; a refused hop is never requested", async () => {
    await start();
    const tooMany = boundedDownload(() => new URL(`${base}/hop/3`), new AbortController().signal, {
      maxBytes: 100,
      redirects: { max: 2, admit: (location) => ({ url: location }) },
    });
    await expect(read(tooMany)).rejects.toThrow("redirected more than 2 times");
    expect(seen.map((s) => s.path)).toEqual(["/hop/3", "/hop/2", "/hop/1"]);
    seen.length = 0;
    const refused = boundedDownload(() => new URL(`${base}/hop/0`), new AbortController().signal, {
      maxBytes: 100,
      redirects: {
        max: 3,
        admit: () => {
          throw new Error("that address is private");
        },
      },
    });
    await expect(read(refused)).rejects.toThrow("that address is private");
    expect(seen.map((s) => s.path)).toEqual(["/hop/0"]);
  });
});

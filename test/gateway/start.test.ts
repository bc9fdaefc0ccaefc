import { afterAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { startParley } from "../helpers/spawn-parley.js";

function wsStatus(url: string): Promise<{ opened: boolean; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.on("open", () => {
      ws.close();
      resolve({ opened: true });
    });
    ws.on("unexpected-response", (_req, res) => resolve({ opened: false, status: res.statusCode ?? 0 }));
    ws.on("error", () => resolve({ opened: false }));
  });
}

describe("parley start (subprocess, clean PARLEY_HOME, no config)", () => {
  let parley: RunningParley | undefined;
  afterAll(async () => {
    await parley?.stop();
  });

  it("serves the page with the token, refuses a wrong token with 401 and no WebSocket, and stops on SIGTERM", async () => {
    parley = await startParley();
    const url = new URL(parley.url);
    expect(url.hostname).toBe("127.0.0.1");
    const token = url.searchParams.get("token") ?? "";
    expect(token.length).toBeGreaterThanOrEqual(20);

    const page = await fetch(parley.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>parley</title>");

    const wrong = await fetch(`http://${url.host}/?token=nope`);
    expect(wrong.status).toBe(401);
    expect((await fetch(`http://${url.host}/`)).status).toBe(401);

    expect(await wsStatus(`ws://${url.host}/ws?token=nope&c=abc`)).toEqual({ opened: false, status: 401 });
    expect(await wsStatus(`ws://${url.host}/ws?token=${token}&c=abc`)).toEqual({ opened: true });

    expect(await parley.stop()).toBe(0);
    expect(parley.stderr()).not.toContain(token);
  });
});

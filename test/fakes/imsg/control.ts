/**
 * The test side of the fake imsg (imsg.mjs): a temp folder holding its scenario, its rows and its
 * request log, the `cliPath`/`dbPath` a channel is configured with, and the control socket the
 * running fake listens on. `cliPath` is a wrapper script in the folder that names the folder to the
 * fake (`imsg status --json` takes no --db, and the channel gives its children no test env).
 * Bounded: every wait has a deadline; the folder is the fake's only state.
 */
import { appendFileSync, chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const FAKE_IMSG = fileURLToPath(new URL("./imsg.mjs", import.meta.url));

export interface FakeScenario {
  /** `status --json`'s `version`. */
  version?: string;
  /** `status --json`'s `rpc_methods` (default: imsg's kSupportedRPCMethods). */
  methods?: string[];
  /** `status --json`'s `advanced_features` (and typing_indicators, read_receipts); default true. */
  advancedFeatures?: boolean;
  /** The handle the Mac's own account sends as (a self-chat). */
  selfHandle?: string;
  /** A send to selfHandle comes back unattributed first, attributed `correctAfterMs` later. */
  selfChatRace?: boolean;
  correctAfterMs?: number;
  /** How many sends fail next. */
  failSends?: number;
  sendDelayMs?: number;
  sendIds?: "both" | "id" | "guid" | "none";
  rejectTyping?: boolean;
  rejectRead?: boolean;
  /** The watch's debounce after a database write (imsg: 500 ms; shortened for tests). */
  debounceMs?: number;
  /** The watch's fallback poll (imsg: 5 s), which also paces batches past the first 100. */
  fallbackPollMs?: number;
  firstRowid?: number;
  idleMs?: number;
}

export interface LoggedRequest {
  pid: number;
  id?: number;
  method: string;
  params: Record<string, unknown>;
  at: number;
  answered?: number;
  error?: unknown;
  result?: unknown;
  event?: string;
}

export class FakeImsgFolder {
  readonly dir: string;
  readonly dbPath: string;
  readonly cliPath: string;

  constructor(scenario: FakeScenario = {}) {
    this.dir = mkdtempSync(join(tmpdir(), "parley-imsg-"));
    this.dbPath = join(this.dir, "chat.db");
    this.cliPath = join(this.dir, "imsg");
    // JSON.stringify quotes the paths for sh (no $, backtick or backslash in a temp path or node's).
    writeFileSync(
      this.cliPath,
      `#!/bin/sh\nPARLEY_FAKE_IMSG_DIR=${JSON.stringify(this.dir)} exec ${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE_IMSG)} "$@"\n`,
    );
    chmodSync(this.cliPath, 0o755);
    writeFileSync(this.dbPath, "");
    writeFileSync(join(this.dir, "scenario.json"), JSON.stringify({ idleMs: 30_000, ...scenario }));
  }

  /** One command to the running fake; rejects when none is running. */
  command(c: Record<string, unknown>): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const socket = connect(join(this.dir, "ctl.sock"));
      let buffer = "";
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`fake imsg: no answer to ${String(c.op)}`));
      }, 5_000);
      socket.on("connect", () => socket.write(`${JSON.stringify(c)}\n`));
      socket.on("data", (chunk) => {
        buffer += chunk.toString("utf8");
        const nl = buffer.indexOf("\n");
        if (nl === -1) return;
        clearTimeout(timer);
        socket.end();
        resolve(JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>);
      });
      socket.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  /** A message from `from` (a DM, or a group with `group`). */
  async incoming(
    from: string,
    text: string,
    opts: { group?: boolean; guid?: string } = {},
  ): Promise<{ rowid: number; guid: string }> {
    const r = await this.command({ op: "incoming", from, text, ...opts });
    return { rowid: Number(r.rowid), guid: String(r.guid) };
  }

  /**
   * A row written while no fake runs (a message that arrived while imsg was down): the next fake
   * reads it from the database and a subscription from an older cursor delivers it.
   */
  appendRow(from: string, text: string): { rowid: number; guid: string } {
    const path = join(this.dir, "rows.jsonl");
    const rows = existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
    const last = rows.length ? (JSON.parse(rows[rows.length - 1] as string) as { id: number }).id : 99;
    // The fields imsg.mjs's dbRow writes (its payload() reads them).
    const row = {
      id: last + 1,
      guid: `OFFLINE-${last + 1}`,
      chat_id: 1,
      chat_identifier: from,
      chat_guid: `iMessage;-;${from}`,
      chat_name: "",
      sender: from,
      is_from_me: false,
      text,
      created_at: new Date().toISOString(),
      participants: [from],
      is_group: false,
    };
    appendFileSync(path, `${JSON.stringify(row)}\n`);
    return { rowid: row.id, guid: row.guid };
  }

  /** The newest row in the fake's database (0 when empty). */
  lastRowid(): number {
    const path = join(this.dir, "rows.jsonl");
    const rows = existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
    return rows.length ? (JSON.parse(rows[rows.length - 1] as string) as { id: number }).id : 0;
  }

  scenario(patch: FakeScenario): Promise<Record<string, unknown>> {
    return this.command({ op: "scenario", patch });
  }

  /** Every request and answer the fake saw, across restarts. */
  requests(): LoggedRequest[] {
    const path = join(this.dir, "requests.jsonl");
    if (!existsSync(path)) return [];
    return readFileSync(path, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LoggedRequest);
  }

  /** The texts of the sends that succeeded, to each handle, in order. */
  sent(to?: string): string[] {
    const log = this.requests();
    const key = (pid: number, id: unknown) => `${pid}:${String(id)}`;
    const ok = new Set(
      log
        .filter((e) => e.answered !== undefined && e.method === "send" && !e.error)
        .map((e) => key(e.pid, e.answered)),
    );
    return log
      .filter((e) => e.method === "send" && e.answered === undefined && ok.has(key(e.pid, e.id)))
      .filter((e) => to === undefined || e.params.to === to)
      .map((e) => String(e.params.text));
  }

  /** How many fake processes have started. */
  starts(): number {
    const path = join(this.dir, "starts.jsonl");
    return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).length : 0;
  }

  /** Whether a fake is listening now. */
  running(): boolean {
    return existsSync(join(this.dir, "ctl.sock"));
  }
}

/** Poll `check` until true, or fail naming `what`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 8_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

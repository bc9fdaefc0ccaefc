/**
 * WAL checkpoints on a worker thread. A checkpoint copies the WAL back into the database file and
 * fsyncs both: ~3 ms on this class of disk. Left to SQLite's automatic checkpoint it runs inside
 * whichever commit crosses the threshold, so every ~175th accepted message paid it and the event
 * loop (every channel's socket) stalled with it. Here a second connection on its own thread runs a
 * PASSIVE checkpoint every `intervalMs` (PASSIVE never blocks the writer), and the writer's own
 * automatic checkpoint stays on at a higher threshold as a backstop if this thread falls behind or
 * dies. Checkpoints are crash-safe at any instant, so a SIGKILL mid-checkpoint loses nothing.
 * Layer: store.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

// Plain CommonJS evaluated in the worker, so it runs the same under tsx and from the compiled build.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
const timer = setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
}, workerData.intervalMs);
parentPort.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface CheckpointerOptions {
  path: string;
  intervalMs: number;
  busyTimeoutMs: number;
  /** A failed checkpoint; the writer's backstop checkpoint still bounds the WAL. */
  onError: (message: string) => void;
}

export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(options: CheckpointerOptions) {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver,
        path: options.path,
        intervalMs: options.intervalMs,
        busyTimeoutMs: options.busyTimeoutMs,
      },
    });
    this.worker.on("message", (m: { error?: string }) => {
      if (m.error) options.onError(m.error);
    });
    this.worker.on("error", (error) => options.onError(String(error)));
    this.exited = new Promise((resolve) => this.worker.once("exit", () => resolve()));
    // The gateway's lifetime is decided by its channels, never by this housekeeping thread.
    this.worker.unref();
  }

  /** Stop the thread and close its connection; resolves once it has exited. */
  async stop(): Promise<void> {
    // Referenced again while stopping: an unreferenced worker's exit would not hold the caller's await.
    this.worker.ref();
    this.worker.postMessage("stop");
    await this.exited;
  }
}

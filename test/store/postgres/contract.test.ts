/**
 * The store's contract tests, run again against PostgreSQL: the same files as the SQLite run, each
 * data home a fresh database on a throwaway server (test/helpers/postgres.ts). Tests that read the
 * SQLite file itself (itOnSqliteFile) are not registered here.
 */
import { usePostgresStores } from "../helpers.js";

usePostgresStores();
await import("../intake.test.js");
await import("../session-store.test.js");
await import("../small-stores.test.js");
await import("../ledger-transcripts.test.js");
await import("../resume-records.test.js");
await import("../jobs-inbox.test.js");

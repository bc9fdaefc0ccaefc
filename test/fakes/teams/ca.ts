/**
 * A certificate authority made for this test run, and the server certificate it signs for
 * 127.0.0.1. MSAL, the SDK's OpenID metadata fetch and the Connector client all want https, and
 * parley's origin settings accept nothing else, so the fake serves TLS and only this process trusts
 * its CA: `trustTestCa()` adds it to every secure context created without an explicit `ca`
 * (node:https, node-fetch, undici and the global fetch all build theirs through
 * `tls.createSecureContext`). Production code has no such hook. The keys are made with the system
 * `openssl` (EC P-256: a few milliseconds), once per test process, in a temp directory.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";

export interface TestCa {
  /** The CA certificate (PEM): the one thing a client must trust. */
  caPem: string;
  /** The server's key and certificate chain for 127.0.0.1 / localhost. */
  key: string;
  cert: string;
}

let made: TestCa | undefined;

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
}

/** The run's CA and server certificate (made on first use). */
export function testCa(): TestCa {
  if (made) return made;
  const dir = mkdtempSync(join(tmpdir(), "parley-teams-ca-"));
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(dir, [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=parley per-run test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign",
  ]);
  openssl(dir, ["req", ...ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=127.0.0.1"]);
  writeFileSync(
    join(dir, "ext.cnf"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
  );
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    "srv.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "srv.pem",
    "-days",
    "2",
    "-extfile",
    "ext.cnf",
  ]);
  made = {
    caPem: readFileSync(join(dir, "ca.pem"), "utf8"),
    key: readFileSync(join(dir, "srv.key"), "utf8"),
    cert: readFileSync(join(dir, "srv.pem"), "utf8"),
  };
  return made;
}

let trusted = false;

/** Trust the run's CA in this process (idempotent): only contexts without their own `ca` gain it. */
export function trustTestCa(): TestCa {
  const ca = testCa();
  if (trusted) return ca;
  trusted = true;
  const original = tls.createSecureContext;
  tls.createSecureContext = (options?: tls.SecureContextOptions) => {
    const context = original(options);
    if (!options?.ca) context.context.addCACert(ca.caPem);
    return context;
  };
  return ca;
}

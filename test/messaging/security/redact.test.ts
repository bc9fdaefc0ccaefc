import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ENCODED_REDACTION_MARKER,
  planCredentials,
  REDACTION_MARKER,
  redactAll,
  redactCredentials,
  redactExfiltrationUrls,
  scanExfiltrationUrls,
} from "../../../src/messaging/security/redact.js";

interface ParityRecord {
  fn: "redact_credentials" | "redact_exfiltration_urls" | "scan_exfiltration_urls";
  args: [string];
  kwargs: Record<string, never>;
  out: [string, string[]] | string[];
}

const RECORDS: ParityRecord[] = JSON.parse(
  readFileSync(new URL("../../../fixtures/parity/redact.json", import.meta.url), "utf8"),
);

/**
 * Records where this port deliberately redacts MORE than the reference. Each one is
 * asserted below to be a superset redaction: every span the reference removed is
 * removed here too, and the reference's warnings are a subsequence of ours.
 */
const DELIBERATE_DIFFERENCES: Record<number, string> = {
  130:
    "`bearer tOM6EKiz.ikY4ibWZfftoODjEZBxUbVm` stands without a parseable `Authorization:` label " +
    "(a bidi control sits inside it), so the reference leaves the bearer token in plaintext; the " +
    "free-standing Bearer rule redacts it.",
  172:
    "`AUT HORIZATION:bearer <JWT>`: both redact the JWT, and the free-standing Bearer rule also takes " +
    "the `bearer` scheme word with it (one marker for the whole credential instead of a dangling scheme).",
  176:
    "`secret=~~MWAm3wea3P+gs~~lEaiPIaUNa9uJ7wPHTIDCBiLdXb`: a value assigned to a key named `secret`; " +
    "the reference has no generic key=value rule and leaves it, the generic secret-value rule redacts it.",
};

function run(r: ParityRecord): { text: string; warnings: string[] } {
  const input = r.args[0];
  if (r.fn === "redact_credentials") return redactCredentials(input);
  if (r.fn === "redact_exfiltration_urls") return redactExfiltrationUrls(input);
  return { text: "", warnings: scanExfiltrationUrls(input) };
}

function expected(r: ParityRecord): { text: string; warnings: string[] } {
  if (r.fn === "scan_exfiltration_urls") return { text: "", warnings: r.out as string[] };
  const [text, warnings] = r.out as [string, string[]];
  return { text, warnings };
}

const MARKER_RE =
  /\[REDACTED: (?:credential|encoded credential|suspicious URL to (?:\[[^\]\s]*\]|[^\]\s])*)\]/g;

/**
 * The input intervals a redactor replaced, recovered by aligning its output with
 * its input: the output is the input with disjoint intervals swapped for markers.
 */
function removedIntervals(input: string, output: string): Array<[number, number]> {
  const literals = output.split(MARKER_RE);
  const out: Array<[number, number]> = [];
  let pos = 0;
  const head = literals[0] ?? "";
  expect(input.startsWith(head)).toBe(true);
  pos = head.length;
  for (let k = 1; k < literals.length; k++) {
    const lit = literals[k] ?? "";
    const at = k === literals.length - 1 ? input.length - lit.length : input.indexOf(lit, pos + 1);
    expect(at).toBeGreaterThanOrEqual(pos);
    out.push([pos, at]);
    pos = at + lit.length;
  }
  return out;
}

function covers(outer: Array<[number, number]>, [a, b]: [number, number]): boolean {
  return outer.some(([s, e]) => s <= a && b <= e);
}

function isSubsequence(needle: string[], hay: string[]): boolean {
  let k = 0;
  for (const h of hay) if (k < needle.length && h === needle[k]) k++;
  return k === needle.length;
}

describe("parity with the reference implementation", () => {
  it("has the recorded fixture", () => {
    expect(RECORDS.length).toBeGreaterThan(300);
  });

  it.each(RECORDS.map((r, i) => [i, r] as const))("record %i matches byte for byte", (i, r) => {
    if (i in DELIBERATE_DIFFERENCES) return; // asserted as a superset below
    const got = run(r);
    const want = expected(r);
    expect(got.text).toBe(want.text);
    expect(got.warnings).toEqual(want.warnings);
  });

  it.each(Object.entries(DELIBERATE_DIFFERENCES).map(([k, why]) => [Number(k), why] as const))(
    "record %i redacts a superset of the reference (%s)",
    (i) => {
      const r = RECORDS[i] as ParityRecord;
      const input = r.args[0];
      const got = run(r);
      const want = expected(r);
      expect(got.text).not.toBe(want.text); // still a real difference, or drop it from the list
      const ours = removedIntervals(input, got.text);
      for (const iv of removedIntervals(input, want.text)) expect(covers(ours, iv)).toBe(true);
      expect(isSubsequence(want.warnings, got.warnings)).toBe(true);
    },
  );
});

describe("credential coverage", () => {
  const x = (n: number, unit = "aB3dE5gH7j") => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const cases: Array<[string, string, string]> = [
    ["AWS access key id", "key AKIAIOSFODNN7EXAMPLE here", "IOSFODNN7EXAMPLE"],
    ["AWS STS key id", "ASIAY9EYE6RG3BRC0FRO", "Y9EYE6RG3BRC0FRO"],
    ["AWS secret (labelled)", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "K7MDENG"],
    ["AWS secret (bare)", "the key is 9xT2vQ8mZ4LpR7wK3nB6yH1cF5dJ0sA2gE8uV4iO done", "9xT2vQ8mZ4Lp"],
    ["GitHub classic", `ghp_${x(36)}`, x(36)],
    ["GitHub oauth", `gho_${x(36)}`, x(36)],
    ["GitHub server", `ghs_${x(36)}`, x(36)],
    ["GitHub user", `ghu_${x(36)}`, x(36)],
    ["GitHub refresh", `ghr_${x(36)}`, x(36)],
    ["GitHub fine-grained", `github_pat_11AB${x(78)}`, x(40)],
    ["GitLab", `token glpat-${x(20)} ok`, x(20)],
    ["Slack bot", `xoxb-1234567890-${x(24)}`, x(24)],
    ["Slack user", `xoxp-1234567890-${x(24)}`, x(24)],
    ["Slack refresh", `xoxr-1234567890-${x(24)}`, x(24)],
    ["Slack app-level", `xapp-1-A0123456789-${x(24)}`, x(24)],
    ["Stripe live", `sk_live_${x(24)}`, x(24)],
    ["Stripe restricted", `rk_live_${x(24)}`, x(24)],
    ["Stripe test", `sk_test_${x(24)}`, x(24)],
    ["OpenAI project", `sk-proj-${x(40)}`, x(40)],
    ["OpenAI legacy", `OPENAI_KEY is sk-${x(48)}`, x(48)],
    ["Anthropic", `sk-ant-api03-${x(40)}`, x(40)],
    ["Google API key", `AIzaSy${x(33)}`, x(33)],
    ["npm", `npm_${x(36)}`, x(36)],
    ["PyPI", `pypi-AgEIcHlwaS5vcmc${x(40)}`, x(40)],
    [
      "Telegram bot",
      "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
      "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    ],
    ["Discord bot", `MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.${x(30)}`, x(30)],
    [
      "JWT",
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
      "SflKxwRJSMeKKF2QT4fw",
    ],
    ["Authorization Bearer", "Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"],
    ["Authorization Basic", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"],
    ["free-standing Bearer", "send Bearer 4K3CsBm3ln_q5vcz5cuuGNq8FKXfDV", "4K3CsBm3ln_q5vcz5cuu"],
    [
      "PEM block",
      "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----",
      "MIIBOgIBAAJBAKj34",
    ],
    ["URL userinfo", "clone https://deploy:hunter2secret@git.example.com/repo.git", "hunter2secret"],
    ["DB URI userinfo", "postgres://app:p4ssw0rd@db.internal:5432/app", "p4ssw0rd"],
    ["other-scheme userinfo", "smtp://mailer:s3cretpw@mail.example.com", "s3cretpw"],
    ["?token=", "https://app.example.com/x?token=opaque123value", "opaque123value"],
    ["&amp;token=", "https://app.example.com/x?a=1&amp;token=opaque123value", "opaque123value"],
    ["&#38;token=", "https://app.example.com/x?a=1&#38;token=opaque123value", "opaque123value"],
    ["?access_token=", "https://api.example.com/v1?access_token=opaque123value", "opaque123value"],
    ["&amp;api_key=", "https://api.example.com/v1?x=1&amp;api_key=opaque123value", "opaque123value"],
    ["?secret=", "https://api.example.com/cb?secret=opaque123value", "opaque123value"],
    ["?password=", "https://api.example.com/login?user=a&password=opaque123value", "opaque123value"],
    ["&sig=", "https://acct.blob.core.windows.net/c/b?sv=2020&sig=opaque123value", "opaque123value"],
    ["password=", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2"],
    ["secret: (YAML)", "client_secret: 8f3kL9qP2x", "8f3kL9qP2x"],
    ["api_key (JSON)", '{"api_key": "abc-def-123"}', "abc-def-123"],
    ["token= (env)", "GITHUB_TOKEN=abcdef0123", "abcdef0123"],
    // The batch pre-check once lacked these two key names, so only a stream redacted them.
    ["secret_key= (env)", "AWS_SECRET_KEY=abc123xyz9", "abc123xyz9"],
    ["secretkey: (YAML)", "secretkey: hunter2abc", "hunter2abc"],
  ];

  it.each(cases)("%s is redacted", (_name, input, secret) => {
    const out = redactAll(input);
    expect(out).toContain("[REDACTED");
    expect(out).not.toContain(secret);
  });

  it("uses the canonical marker", () => {
    expect(redactCredentials("AKIAIOSFODNN7EXAMPLE").text).toBe(REDACTION_MARKER);
  });

  it("redacts a base64-encoded credential with the encoded marker", () => {
    const encoded = Buffer.from("creds: AKIAIOSFODNN7EXAMPLE and more words").toString("base64");
    const { text, warnings } = redactCredentials(`blob ${encoded} end`);
    expect(text).toBe(`blob ${ENCODED_REDACTION_MARKER} end`);
    expect(warnings).toEqual([`Redacted base64-encoded credential (${encoded.length} chars)`]);
  });

  it.each([
    ["prose", "The quick brown fox is the bearer of bad news about the token budget."],
    ["kebab-case identifier", "disk-utilization-monitoring-dashboard-widget"],
    ["git commit id", "commit 0123456789abcdef0123456789abcdef01234567"],
    ["sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["TypeScript annotation", "function login(password: string, token: Token) {}"],
    ["code reference", "const password = password; const apiKey: process.env.API_KEY"],
    ["not a secret key", "max_tokens=100 and passwordless=true"],
    ["JWT-shaped but not JSON", "eyJnotjson.abc.def"],
    ["template placeholders", `use ?token=\${TOKEN} or password=<your-password> or API_KEY=$API_KEY`],
    ["already redacted", `token=${REDACTION_MARKER} and "password": "${REDACTION_MARKER}"`],
    ["plain markdown link", "[docs](https://example.com/guide/getting-started)"],
    ["bare URL with a short query", "see https://example.com/search?page=2 for more"],
  ])("leaves %s alone", (_name, input) => {
    expect(redactAll(input)).toBe(input);
  });

  it("reports lengths in code points, like the reference", () => {
    const { warnings } = redactCredentials("password: 😀😀😀secret1");
    expect(warnings).toEqual(["Redacted secret value (10 chars)"]);
  });

  it("never splits a reference span when a wider rule overlaps it", () => {
    const { text } = redactCredentials("git+https://user:pa55word@host.example.com/r");
    expect(text).toBe(`${REDACTION_MARKER}host.example.com/r`);
  });
});

describe("exfiltration", () => {
  const b64 = "QUtJQUlPU0ZPRE5ON0VYQU1QTEVzZWNyZXRkYXRhMTIzNDU2";
  const blob = "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5"; // base64 of plain words

  it("redacts a markdown image whose URL carries a query to a non-allow-listed host", () => {
    const input = "![chart](https://tracker.example/p.png?d=hunter2) ok";
    const { text, warnings } = redactExfiltrationUrls(input);
    expect(text).toBe("![chart]([REDACTED: suspicious URL to tracker.example]) ok");
    expect(warnings).toEqual(["Suspicious markdown link target with query data: tracker.example"]);
  });

  it("lets a link target keep a query of a few navigation parameters with short plain values", () => {
    for (const input of [
      "[the dashboard](https://grafana.example.com/d/BXxn4C5hZ/api?orgId=1)",
      "[page two](https://docs.example.com/guide?page=2&lang=en)",
      "[last 6h](https://grafana.example.com/d/x?orgId=1&from=now-6h&to=now)",
    ])
      expect(redactExfiltrationUrls(input).text).toBe(input);
  });

  it.each([
    ["an unknown parameter", "[x](https://evil.example/a?d=1)"],
    ["a value that looks like data", "[x](https://evil.example/a?page=Zq9xK2mPw7)"],
    ["an encoded value", "[x](https://evil.example/a?lang=%41%42)"],
    ["a long value", `[x](https://evil.example/a?ref=${"a".repeat(17)})`],
    ["too many parameters", "[x](https://evil.example/a?page=1&tab=a&view=b&sort=c&order=d)"],
    ["a navigation parameter next to another", "[x](https://evil.example/a?page=1&u=hello)"],
  ])("still withholds a link target's query with %s", (_name, input) => {
    expect(redactExfiltrationUrls(input).text).toBe("[x]([REDACTED: suspicious URL to evil.example])");
  });

  it("redacts a markdown link whose path carries a payload", () => {
    const input = `[click](https://collector.example/${b64})`;
    expect(redactExfiltrationUrls(input).text).toBe(
      "[click]([REDACTED: suspicious URL to collector.example])",
    );
  });

  it("lets an allow-listed host keep its query, exactly or by subdomain", () => {
    const input = "![chart](https://img.charts.example/p.png?d=1) [x](https://charts.example/a?b=2)";
    expect(redactExfiltrationUrls(input, { allowedHosts: [".charts.example"] }).text).toBe(input);
    expect(redactExfiltrationUrls(input, { allowedHosts: ["charts.example"] }).text).toContain(
      "[REDACTED: suspicious URL to img.charts.example]",
    );
  });

  it("still redacts a literal credential in an allow-listed host's URL", () => {
    const input = "https://trusted.example/x?k=AKIAIOSFODNN7EXAMPLE";
    expect(redactExfiltrationUrls(input, { allowedHosts: ["trusted.example"] }).text).toBe(
      "[REDACTED: suspicious URL to trusted.example]",
    );
  });

  it.each([
    ["credential in the path", "https://evil.example/path/AKIAIOSFODNN7EXAMPLE", "credential in path/query"],
    ["long query", `https://evil.example/?q=${"a".repeat(200)}`, "long query params"],
    ["base64-like blob", `https://evil.example/?d=${blob}`, "credential-like query data"],
    ["base64-encoded credential", `https://evil.example/?d=${b64}`, "credential in path/query"],
    ["heavy percent encoding", `https://evil.example/?d=${"%41".repeat(21)}`, "credential-like query data"],
    [
      "double-encoded key",
      "https://evil.example/?x=%2541%254B%2549%2541IOSFODNN7EXAMPLE",
      "encoded credential",
    ],
  ])("flags a bare URL with %s", (_name, input, kind) => {
    const { text, warnings } = redactExfiltrationUrls(`see ${input} now`);
    expect(text).toBe("see [REDACTED: suspicious URL to evil.example] now");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(kind);
  });

  it("does not flag a bare URL with an ordinary query or a fragment", () => {
    const input = "https://docs.example.com/page?lang=en#section and https://x.example/a#b";
    expect(redactExfiltrationUrls(input).text).toBe(input);
  });

  it("accepts a well-formed S3 presigned URL and refuses one with an extra parameter", () => {
    const query =
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20240101%2Fus-east-1%2Fs3%2Faws4_request" +
      `&X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=${"ab".repeat(32)}`;
    const url = `https://bucket.s3.amazonaws.com/file.txt?${query}`;
    expect(redactExfiltrationUrls(url).text).toBe(url);
    expect(redactExfiltrationUrls(`${url}&leak=1`).text).toBe(
      "[REDACTED: suspicious URL to bucket.s3.amazonaws.com]",
    );
  });

  it("replaces every flagged URL where it matched (positional, not a global string replace)", () => {
    // Deliberate difference (no parity record exercises it): the reference rewrote every
    // copy of a flagged URL's TEXT with str.replace, so the first URL's replacement also
    // hit the prefix of the longer second match and left its trailing "." behind. Here each
    // match is replaced in place: the same credential is removed, the "." (part of that URL
    // by the URL grammar) goes with it, and every decision stays local, which exact
    // streaming requires.
    const url = "https://evil.example/?k=AKIAIOSFODNN7EXAMPLE";
    const { text, warnings } = redactExfiltrationUrls(`${url} and again ${url}.`);
    expect(text).toBe(
      "[REDACTED: suspicious URL to evil.example] and again [REDACTED: suspicious URL to evil.example]",
    );
    expect(warnings).toHaveLength(2);
    const again = redactExfiltrationUrls(`${url} and again ${url} done`).text;
    expect(again).toBe(
      "[REDACTED: suspicious URL to evil.example] and again [REDACTED: suspicious URL to evil.example] done",
    );
  });

  it("scan reports the same warnings without rewriting", () => {
    const input = `a https://evil.example/?d=${b64} b ![i](https://t.example/x?y=1)`;
    expect(scanExfiltrationUrls(input)).toEqual(redactExfiltrationUrls(input).warnings);
    expect(scanExfiltrationUrls(input)).toHaveLength(2);
  });
});

describe("redactAll", () => {
  it("runs exfiltration first, so a credential-bearing URL becomes one URL marker", () => {
    expect(redactAll("see https://evil.example/?k=AKIAIOSFODNN7EXAMPLE now")).toBe(
      "see [REDACTED: suspicious URL to evil.example] now",
    );
  });

  it("then redacts credentials outside URLs", () => {
    expect(redactAll("key AKIAIOSFODNN7EXAMPLE")).toBe(`key ${REDACTION_MARKER}`);
  });

  it("is a fixed point on its own output for whitespace-separated text", () => {
    const input =
      "AKIAIOSFODNN7EXAMPLE https://evil.example/?d=QUtJQUlPU0ZPRE5ON0VYQU1QTEVzZWNyZXQ= password=hunter22 " +
      "Authorization: Bearer abc.def ?token=xyz123 -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----";
    const once = redactAll(input);
    expect(redactAll(once)).toBe(once);
  });
});

describe("linear time on adversarial input", () => {
  const n = 100_000;
  const rep = (unit: string) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const inputs: Array<[string, string]> = [
    ["a run", rep("a")],
    ["[ run", rep("[")],
    ["( run", rep("(")],
    ["](  run", rep("](")],
    ["sk- + run", `sk-${"a".repeat(n)}`],
    ["= run", rep("=")],
    ["https:// + run", `https://${"a".repeat(n)}`],
    ["https:// + dotted run", `https://${rep("a.")}`],
    ["digit run", rep("1")],
    ["eyJ run", rep("eyJ")],
    ["eyJ segments", rep("eyJa.")],
    ["PEM headers without END", rep("-----BEGIN PRIVATE KEY-----\n")],
    ["END markers", rep("-----END ")],
    ["markdown targets", rep("](https://a.bc/?q")],
    ["Authorization headers", rep("Authorization: Bearer ")],
    ["quoted secrets", rep('password: "')],
    ["entity ladders", rep("&#x26;t&#111;ken")],
    ["percent run", `https://a.bc/?${rep("%41")}`],
    ["userinfo @ run", `http://a:${"@".repeat(n)}`],
    ["flagged URLs", rep("http://a.io/?k=AKIA0123456789ABCDEF ")],
    ["random base64", Array.from({ length: n }, (_, k) => "ABCabc012+/"[(k * 7919) % 11]).join("")],
  ];

  it.each(inputs)("%s finishes quickly", (_name, input) => {
    // Timed by bench/linearity, not here; this runs each input through (the test timeout bounds it).
    expect(typeof redactAll(input)).toBe("string");
  });

  it("plans agree with the batch result", () => {
    const input = rep("AKIAIOSFODNN7EXAMPLE ");
    expect(planCredentials(input).spans.length).toBeGreaterThan(4000);
  });
});

describe("what looks like a secret but is not one passes unchanged (issue 14, finding 9)", () => {
  it.each([
    ["a placeholder value", "API_KEY=YOUR_API_KEY_HERE"],
    ["an angle-bracket placeholder", "export API_TOKEN=<your-token>"],
    ["an x-run placeholder", "SECRET=xxxx"],
    ["an elided example", 'STRIPE_SECRET_KEY="sk_test_..."'],
    ["a your-key example", "OPENAI_API_KEY=sk-...your-key..."],
    ["an env-name placeholder", 'api_key = "REPLACE_ME"'],
    ["a repeated-character token", "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"],
    ["a placeholder in a token's shape", "SLACK_BOT_TOKEN=xoxb-your-bot-token"],
    ["changeme", "DB_PASSWORD=changeme"],
    [
      "an npm integrity hash",
      '"integrity": "sha512-0rhyIatdZy5rV96rkePcV9Es/TwXdI1JByJYkZf/xsNvAVWGpBiHiAkMTvD0qXKH+p/CSIIp4EeoZkfwjx6cTQ=="',
    ],
    [
      "an SRI sha384 hash",
      'integrity="sha384-eii6dJqiSPlVMiymj82u6FEYBgoOwrn7cbJHDSCQQG3tPhp1RbAZ5auqMrZaQSh1"',
    ],
    ["a git SHA", "Commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it"],
    ["a UUID", "request id 0f8fad5b-d9cb-469f-a165-70867728950e failed"],
    ["a sha256 digest", "image@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"],
    [
      "a base64 test fixture",
      `const fixture = "${Buffer.from("hello world, this is a test fixture for the parser").toString("base64")}";`,
    ],
    ["an indexed code reference", 'password = os.environ["DB_PASSWORD"]'],
  ])("%s", (_name, text) => {
    expect(redactAll(text)).toBe(text);
  });

  it("still redacts a real key next to a placeholder, and a digest-shaped run of the wrong length", () => {
    expect(redactAll("API_KEY=YOUR_API_KEY_HERE then API_KEY=Zq9x7Kp2Lm4Nb6Vc8Xz1")).toBe(
      `API_KEY=YOUR_API_KEY_HERE then API_KEY=${REDACTION_MARKER}`,
    );
    // `YOUR` spelled by a key's own random characters is no placeholder (fast-check seed 2 found it).
    expect(redactAll("id AKIAAAAAAAAAAAAYOURA")).toBe(`id ${REDACTION_MARKER}`);
    expect(redactAll("DB_PASSWORD=Yours1ncerely9")).toBe(`DB_PASSWORD=${REDACTION_MARKER}`);
    // Nor is a `My-` that starts a random secret (seed 11 of the disguise property).
    expect(redactAll("client_secret: My-f4uGB3o0f4XK87nOfE5fphKowpmBH")).toBe(
      `client_secret: ${REDACTION_MARKER}`,
    );
    const awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY";
    expect(redactAll(`sha512-${awsSecret}`)).toContain(REDACTION_MARKER);
  });
});

/**
 * Credentials of every kind parley redacts, in every disguise a chat display can undo: the
 * generator behind the display-redaction property tests (one per channel) and the labelled corpus
 * in fixtures/redaction/ (bench/redaction-corpus.ts writes it).
 *
 * Stable API (other tests depend on it; extend, do not rename):
 *
 * - `CREDENTIAL_KINDS`: every kind, each `{ name, make(rng) }` returning a fresh `Credential`.
 * - `DISGUISES`: every disguise, each `{ name, applies(credential), apply(credential, rng) }`
 *   returning the message pieces (one piece, or several for a split across stream chunks).
 * - `APPLICABLE_PAIRS`: every (kind, disguise) pair the disguise can hide, in a fixed order.
 * - `disguisedCredential(kind, disguise, seed)`: one `DisguisedCredential`, deterministic in `seed`.
 * - `credentialDisguiseList(seed?)`: every applicable (kind, disguise) pair once, deterministic.
 * - `credentialDisguiseArbitrary()`: a fast-check arbitrary over kinds x disguises x seeds.
 * - `survivesIn(visible, sample)`: whether the secret can still be read in a text a reader sees.
 *
 * A `DisguisedCredential` carries `chunks` (feed them in order to a stream), `text` (their join),
 * `secret` (the bare credential) and `needle` (the part of it that must never be visible: the
 * random body, without a public prefix such as `ghp_` or a key name).
 *
 * No randomness outside the given seed: the same seed gives the same text on every machine.
 */

import fc from "fast-check";
import type { Rng } from "./seeded-rng.js";
import { seededRng } from "./seeded-rng.js";

/** A bare credential and the part of it that must never be readable. */
export interface Credential {
  /** The credential exactly as an agent would print it, undisguised. */
  readonly secret: string;
  /** The secret's random body: the substring that must not survive in visible text. */
  readonly needle: string;
  /** Offset in `secret` where `needle` starts (disguises are applied inside the needle). */
  readonly needleAt: number;
}

export interface CredentialKind {
  readonly name: string;
  readonly make: (rng: Rng) => Credential;
}

export interface Disguise {
  readonly name: string;
  /** Whether this disguise can hide `c` at all (a backslash escape needs punctuation to escape). */
  readonly applies: (c: Credential) => boolean;
  /** The message pieces, in order, that carry `c` in this disguise inside a line of prose. */
  readonly apply: (c: Credential, rng: Rng) => string[];
}

export interface DisguisedCredential {
  readonly kind: string;
  readonly disguise: string;
  readonly seed: number;
  readonly secret: string;
  readonly needle: string;
  /** The pieces a stream receives, in order; one piece for every disguise but the stream splits. */
  readonly chunks: readonly string[];
  /** `chunks` joined: the whole message. */
  readonly text: string;
}

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;
const URLSAFE = `${ALNUM}_-`;
const B64 = `${ALNUM}+/`;
const HEX = "0123456789abcdef";

function pick(rng: Rng, alphabet: string): string {
  return alphabet[Math.floor(rng() * alphabet.length)] as string;
}

/**
 * `n` random characters of `alphabet`, with at least one uppercase letter, one lowercase letter and
 * one digit where the alphabet has them, and no five lowercase letters in a row: real keys look like
 * that, and it keeps a random body from spelling a word.
 */
function randomBody(rng: Rng, alphabet: string, n: number): string {
  for (;;) {
    let s = "";
    for (let k = 0; k < n; k++) s += pick(rng, alphabet);
    const wantsUpper = /[A-Z]/.test(alphabet);
    const wantsLower = /[a-z]/.test(alphabet);
    if (wantsUpper && !/[A-Z]/.test(s)) continue;
    if (wantsLower && !/[a-z]/.test(s)) continue;
    if (!/[0-9]/.test(s) || /[a-z]{5}/.test(s)) continue;
    return s;
  }
}

/** A credential whose needle is everything after a fixed public prefix. */
function prefixed(prefix: string, body: string, suffix = ""): Credential {
  return { secret: `${prefix}${body}${suffix}`, needle: body, needleAt: prefix.length };
}

/** A labelled credential (`key=value`): the value is the needle. */
function labelled(label: string, value: string, after = ""): Credential {
  return { secret: `${label}${value}${after}`, needle: value, needleAt: label.length };
}

function base64Of(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

/** A 40-character AWS secret access key: base64 alphabet, high entropy, no word inside. */
function awsSecret(rng: Rng): string {
  for (;;) {
    const s = randomBody(rng, B64, 40);
    const letters = s.replace(/[^A-Za-z]/g, "");
    const vowels = letters.replace(/[^aeiouAEIOU]/g, "").length;
    if (vowels / Math.max(1, letters.length) <= 0.25 && (s.match(/\//g)?.length ?? 0) <= 2) return s;
  }
}

export const CREDENTIAL_KINDS: readonly CredentialKind[] = [
  { name: "aws-access-key-id", make: (r) => prefixed("AKIA", randomBody(r, UPPER + DIGITS, 16)) },
  { name: "aws-sts-key-id", make: (r) => prefixed("ASIA", randomBody(r, UPPER + DIGITS, 16)) },
  { name: "aws-context-key-id", make: (r) => prefixed("ACCA", randomBody(r, UPPER + DIGITS, 16)) },
  { name: "aws-secret-access-key", make: (r) => prefixed("", awsSecret(r)) },
  { name: "aws-secret-labelled", make: (r) => labelled("aws_secret_access_key = ", awsSecret(r)) },
  {
    name: "aws-session-token",
    make: (r) => labelled("aws_session_token=", `IQoJb3JpZ2luX2Vj${randomBody(r, B64, 60)}`),
  },
  { name: "github-classic", make: (r) => prefixed("ghp_", randomBody(r, ALNUM, 36)) },
  { name: "github-oauth", make: (r) => prefixed("gho_", randomBody(r, ALNUM, 36)) },
  { name: "github-app", make: (r) => prefixed("ghs_", randomBody(r, ALNUM, 36)) },
  { name: "github-fine-grained", make: (r) => prefixed("github_pat_", randomBody(r, `${ALNUM}_`, 82)) },
  { name: "gitlab-pat", make: (r) => prefixed("glpat-", randomBody(r, URLSAFE, 20)) },
  {
    name: "slack-bot",
    make: (r) => prefixed("xoxb-", `${randomBody(r, DIGITS, 12)}-${randomBody(r, ALNUM, 24)}`),
  },
  {
    name: "slack-user",
    make: (r) => prefixed("xoxp-", `${randomBody(r, DIGITS, 12)}-${randomBody(r, ALNUM, 32)}`),
  },
  {
    name: "slack-app",
    make: (r) => prefixed("xapp-1-", `A${randomBody(r, UPPER + DIGITS, 10)}-${randomBody(r, ALNUM, 30)}`),
  },
  { name: "slack-refresh", make: (r) => prefixed("xoxe-1-", randomBody(r, ALNUM, 40)) },
  { name: "stripe-live", make: (r) => prefixed("sk_live_", randomBody(r, ALNUM, 32)) },
  { name: "stripe-restricted", make: (r) => prefixed("rk_test_", randomBody(r, ALNUM, 32)) },
  { name: "openai-project", make: (r) => prefixed("sk-proj-", randomBody(r, URLSAFE, 48)) },
  { name: "anthropic", make: (r) => prefixed("sk-ant-api03-", randomBody(r, URLSAFE, 60)) },
  { name: "openai-legacy", make: (r) => prefixed("sk-", randomBody(r, ALNUM, 48)) },
  { name: "npm", make: (r) => prefixed("npm_", randomBody(r, ALNUM, 36)) },
  { name: "pypi", make: (r) => prefixed("pypi-AgEIcHlwaS5vcmc", randomBody(r, URLSAFE, 50)) },
  { name: "digitalocean", make: (r) => prefixed("dop_v1_", randomBody(r, HEX, 64).toLowerCase()) },
  { name: "google-api-key", make: (r) => prefixed("AIza", randomBody(r, URLSAFE, 35)) },
  { name: "google-oauth-secret", make: (r) => prefixed("GOCSPX-", randomBody(r, URLSAFE, 28)) },
  {
    name: "sendgrid",
    make: (r) => prefixed("SG.", `${randomBody(r, URLSAFE, 22)}.${randomBody(r, URLSAFE, 43)}`),
  },
  {
    name: "telegram-bot",
    make: (r) => {
      const id = `${1 + Math.floor(r() * 9)}${randomBody(r, DIGITS, 9)}`;
      return prefixed(`${id}:`, `AA${randomBody(r, URLSAFE, 33)}`);
    },
  },
  {
    name: "discord-bot",
    make: (r) =>
      prefixed("", `M${randomBody(r, ALNUM, 25)}.${randomBody(r, URLSAFE, 6)}.${randomBody(r, URLSAFE, 38)}`),
  },
  {
    name: "jwt",
    make: (r) => {
      const header = base64Of('{"alg":"HS256","typ":"JWT"}').replace(/=+$/, "");
      const payload = base64Of(`{"sub":"${randomBody(r, DIGITS, 10)}","role":"admin"}`)
        .replace(/=+$/, "")
        .replace(/\+/g, "-")
        .replace(/\//g, "_");
      const sig = randomBody(r, URLSAFE, 43);
      return {
        secret: `${header}.${payload}.${sig}`,
        needle: sig,
        needleAt: header.length + payload.length + 2,
      };
    },
  },
  {
    name: "pem-private-key",
    make: (r) => {
      const lines = [randomBody(r, B64, 64), randomBody(r, B64, 64), randomBody(r, B64, 40)];
      const head = "-----BEGIN RSA PRIVATE KEY-----\n";
      const secret = `${head}${lines.join("\n")}\n-----END RSA PRIVATE KEY-----`;
      return { secret, needle: lines[1] as string, needleAt: head.length + (lines[0] as string).length + 1 };
    },
  },
  { name: "bearer-header", make: (r) => labelled("Authorization: Bearer ", randomBody(r, URLSAFE, 40)) },
  {
    name: "basic-auth-header",
    make: (r) => labelled("Authorization: Basic ", base64Of(`deploy:${randomBody(r, ALNUM, 20)}`)),
  },
  {
    name: "url-userinfo",
    make: (r) => labelled("postgres://app:", randomBody(r, ALNUM, 20), "@db.internal:5432/prod"),
  },
  { name: "password-assignment", make: (r) => labelled("DB_PASSWORD=", randomBody(r, `${ALNUM}!#%`, 18)) },
  { name: "api-key-json", make: (r) => labelled('"api_key": "', randomBody(r, ALNUM, 32), '"') },
  { name: "client-secret-yaml", make: (r) => labelled("client_secret: ", randomBody(r, URLSAFE, 32)) },
  {
    name: "access-token-param",
    make: (r) => labelled("https://api.example.com/v1/me?access_token=", randomBody(r, URLSAFE, 40)),
  },
  {
    name: "token-param",
    make: (r) => labelled("https://hooks.example.net/run?token=", randomBody(r, ALNUM, 32)),
  },
  {
    name: "base64-encoded-key",
    make: (r) => {
      const inner = `AKIA${randomBody(r, UPPER + DIGITS, 16)}`;
      const encoded = base64Of(`aws_access_key_id=${inner}`);
      return prefixed("", encoded);
    },
  },
];

/** Prose around the credential, so every disguise is tested inside a message, not alone. */
function inProse(rng: Rng, body: string): string {
  const before = ["Here is the value: ", "Found ", "The config has ", "Use ", ""];
  const after = [" in the env file.", " (rotate it).", "", " — done.", "\nNext step: redeploy."];
  return `${before[Math.floor(rng() * before.length)]}${body}${after[Math.floor(rng() * after.length)]}`;
}

/** Replace needle-interior positions chosen by `rng` with `encode(char)`. */
function encodeInside(c: Credential, rng: Rng, count: number, encode: (ch: string) => string | null): string {
  const chars = Array.from(c.secret);
  const candidates: number[] = [];
  for (let k = c.needleAt + 1; k < c.needleAt + c.needle.length - 1; k++) {
    if (encode(chars[k] as string) !== null) candidates.push(k);
  }
  for (let n = 0; n < count && candidates.length > 0; n++) {
    const at = candidates.splice(Math.floor(rng() * candidates.length), 1)[0] as number;
    chars[at] = encode(chars[at] as string) as string;
  }
  return chars.join("");
}

/** Cut the secret at a needle-interior offset: [head, tail]. */
function cutInside(c: Credential, rng: Rng): [string, string] {
  const span = Math.max(1, c.needle.length - 2);
  const at = c.needleAt + 1 + Math.floor(rng() * span);
  return [c.secret.slice(0, at), c.secret.slice(at)];
}

/** Surround a middle section of the needle with a markup delimiter pair. */
function wrapMiddle(c: Credential, rng: Rng, open: string, close = open): string {
  const [head, rest] = cutInside(c, rng);
  const len = Math.max(1, Math.floor(rest.length / 3));
  return `${head}${open}${rest.slice(0, len)}${close}${rest.slice(len)}`;
}

const PUNCT = /[!-/:-@[-`{-~]/;
const NAMED: Record<string, string> = {
  _: "&lowbar;",
  "-": "&#x2D;",
  ".": "&period;",
  ":": "&colon;",
  "/": "&sol;",
  "=": "&equals;",
  "+": "&plus;",
};
const singleLine = (c: Credential) => !c.secret.includes("\n");
const hasPunctInNeedle = (c: Credential) => PUNCT.test(c.needle.slice(1, -1));
const always = () => true;

export const DISGUISES: readonly Disguise[] = [
  { name: "plain", applies: always, apply: (c, r) => [inProse(r, c.secret)] },
  {
    name: "backslash-escapes",
    applies: (c) => PUNCT.test(c.secret),
    apply: (c, r) => [
      inProse(
        r,
        c.secret.replace(/[!-/:-@[-`{-~]/g, (ch) => (ch === "\n" ? ch : `\\${ch}`)),
      ),
    ],
  },
  {
    name: "backslash-escape-in-body",
    applies: hasPunctInNeedle,
    apply: (c, r) => [
      inProse(
        r,
        encodeInside(c, r, 1, (ch) => (PUNCT.test(ch) ? `\\${ch}` : null)),
      ),
    ],
  },
  {
    name: "entity-decimal",
    applies: always,
    apply: (c, r) => [
      inProse(
        r,
        encodeInside(c, r, 2, (ch) => (ch === "\n" ? null : `&#${ch.codePointAt(0)};`)),
      ),
    ],
  },
  {
    name: "entity-hex",
    applies: always,
    apply: (c, r) => [
      inProse(
        r,
        encodeInside(c, r, 2, (ch) =>
          ch === "\n" ? null : `&#x${ch.codePointAt(0)!.toString(16).toUpperCase()};`,
        ),
      ),
    ],
  },
  {
    name: "entity-named",
    applies: (c) => Object.keys(NAMED).some((ch) => c.secret.includes(ch)),
    apply: (c, r) => [
      inProse(
        r,
        c.secret.replace(/[_\-.:/=+]/g, (ch) => NAMED[ch] ?? ch),
      ),
    ],
  },
  {
    name: "zero-width",
    applies: always,
    apply: (c, r) => [
      inProse(
        r,
        encodeInside(c, r, 3, (ch) => (ch === "\n" ? null : `${ch}\u200b`)),
      ),
    ],
  },
  {
    name: "format-chars",
    applies: always,
    apply: (c, r) => [
      inProse(
        r,
        encodeInside(c, r, 3, (ch) =>
          ch === "\n" ? null : `${ch}${pick(r, "\u00ad\u200d\u2060\ufeff\u202a")}`,
        ),
      ),
    ],
  },
  {
    name: "ansi",
    applies: always,
    apply: (c, r) => {
      const [head, tail] = cutInside(c, r);
      return [inProse(r, `${head}\x1b[1;31m${tail}\x1b[0m`)];
    },
  },
  {
    name: "stream-split",
    applies: always,
    apply: (c, r) => {
      const whole = inProse(r, c.secret);
      const at = whole.indexOf(c.secret);
      const [head] = cutInside(c, r);
      const cut1 = at + head.length;
      const cut2 = Math.min(whole.length, cut1 + 1 + Math.floor(r() * 8));
      return [whole.slice(0, cut1), whole.slice(cut1, cut2), whole.slice(cut2)].filter((p) => p !== "");
    },
  },
  {
    name: "link-split",
    applies: singleLine,
    apply: (c, r) => {
      const [head, tail] = cutInside(c, r);
      return [inProse(r, `[${head}](https://example.com/docs)${tail}`)];
    },
  },
  {
    name: "link-split-parens",
    applies: singleLine,
    apply: (c, r) => {
      const [head, tail] = cutInside(c, r);
      return [inProse(r, `[${head}](https://en.example.org/wiki/Key_(crypto) "a title")${tail}`)];
    },
  },
  {
    name: "link-label",
    applies: singleLine,
    apply: (c, r) => [inProse(r, `[${c.secret}](https://example.com/ref)`)],
  },
  { name: "bold-halves", applies: singleLine, apply: (c, r) => [inProse(r, wrapMiddle(c, r, "**"))] },
  { name: "strike-halves", applies: singleLine, apply: (c, r) => [inProse(r, wrapMiddle(c, r, "~~"))] },
  { name: "code-halves", applies: singleLine, apply: (c, r) => [inProse(r, wrapMiddle(c, r, "`"))] },
  { name: "spoiler-halves", applies: singleLine, apply: (c, r) => [inProse(r, wrapMiddle(c, r, "||"))] },
  // `*` is emphasis inside a word in CommonMark; `_` is not (a reader sees the underscores), so no `_` form.
  { name: "italic-halves", applies: singleLine, apply: (c, r) => [inProse(r, wrapMiddle(c, r, "*"))] },
  {
    name: "entity-and-bold",
    applies: singleLine,
    apply: (c, r) => {
      const [head, tail] = cutInside(c, r);
      // The reference before the bold, never cut by it: a split reference is literal text to every renderer.
      const rest = tail.slice(1);
      const half = Math.ceil(rest.length / 2);
      return [inProse(r, `${head}&#${tail.codePointAt(0)};**${rest.slice(0, half)}**${rest.slice(half)}`)];
    },
  },
  {
    name: "in-code-fence",
    applies: always,
    apply: (c, r) => [`Run this:\n\n\`\`\`bash\nexport VALUE='${c.secret}'\n\`\`\`\n${inProse(r, "")}`],
  },
];

/** Whether `disguise` can hide samples of `kind` (judged on a few samples: kinds are uniform in shape). */
export function disguiseApplies(kind: CredentialKind, disguise: Disguise): boolean {
  for (let seed = 1; seed <= 3; seed++) if (!disguise.applies(kind.make(seededRng(seed)))) return false;
  return true;
}

/** Every (kind, disguise) pair whose disguise applies to the kind, in a fixed order. */
export const APPLICABLE_PAIRS: ReadonlyArray<readonly [CredentialKind, Disguise]> = CREDENTIAL_KINDS.flatMap(
  (kind) => DISGUISES.filter((d) => disguiseApplies(kind, d)).map((d) => [kind, d] as const),
);

/**
 * One credential of `kind` in `disguise`, deterministic in `seed`. A sample the disguise cannot hide
 * (a random body that happens to hold no punctuation to escape) is redrawn from the same stream.
 */
export function disguisedCredential(
  kind: CredentialKind,
  disguise: Disguise,
  seed: number,
): DisguisedCredential {
  const rng = seededRng(seed);
  let credential = kind.make(rng);
  for (let k = 0; k < 64 && !disguise.applies(credential); k++) credential = kind.make(rng);
  if (!disguise.applies(credential)) throw new Error(`disguise ${disguise.name} cannot hide a ${kind.name}`);
  const chunks = disguise.apply(credential, rng);
  return {
    kind: kind.name,
    disguise: disguise.name,
    seed,
    secret: credential.secret,
    needle: credential.needle,
    chunks,
    text: chunks.join(""),
  };
}

/** Every applicable (kind, disguise) pair, `rounds` samples each, deterministic in `seed`. */
export function credentialDisguiseList(seed = 14, rounds = 1): DisguisedCredential[] {
  const out: DisguisedCredential[] = [];
  let n = 0;
  for (let round = 0; round < rounds; round++) {
    for (const [kind, disguise] of APPLICABLE_PAIRS)
      out.push(disguisedCredential(kind, disguise, seed * 7919 + n++));
  }
  return out;
}

/** A fast-check arbitrary over every applicable (kind, disguise) pair and any seed. */
export function credentialDisguiseArbitrary(): fc.Arbitrary<DisguisedCredential> {
  return fc
    .tuple(fc.constantFrom(...APPLICABLE_PAIRS), fc.integer({ min: 0, max: 2 ** 31 - 1 }))
    .map(([[kind, disguise], seed]) => disguisedCredential(kind, disguise, seed));
}

/** Invisible to a reader: format characters (zero-width, bidi, BOM, soft hyphen) and ANSI escapes. */
const INVISIBLE = /\p{Cf}|\x1b\[[0-?]*[ -/]*[@-~]/gu;

/**
 * Whether `sample`'s secret can still be read in `visible`, a text a reader is shown (a channel's
 * visible text: markup rendered, escapes and references decoded). Invisible characters are
 * discounted, since a reader does not see them; whitespace is kept, since it does break a key.
 */
export function survivesIn(visible: string, sample: Pick<DisguisedCredential, "needle">): boolean {
  return visible.replace(INVISIBLE, "").includes(sample.needle);
}

/**
 * The longest part of `sample`'s needle a reader can still see in `visible` (invisible characters
 * discounted). A stricter measure than {@link survivesIn}: half a key left beside a marker is a
 * partial leak even though the whole key is gone.
 */
export function longestSurvivingPart(visible: string, sample: Pick<DisguisedCredential, "needle">): number {
  const shown = visible.replace(INVISIBLE, "");
  const needle = sample.needle;
  // Binary search on the length: a visible part of length L contains visible parts of every shorter length.
  let lo = 0;
  let hi = needle.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    let found = false;
    for (let k = 0; k + mid <= needle.length && !found; k++) found = shown.includes(needle.slice(k, k + mid));
    if (found) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

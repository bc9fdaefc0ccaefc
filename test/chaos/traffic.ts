/**
 * The scripted traffic of the chaos runs (one gateway: run.ts; two: cluster-run.ts): bursts of
 * tokens to web chat pages and Telegram users at seeded random, and the wait until every token has
 * an answer (or no progress is made for a while).
 */
import type { FakeTelegram } from "../fakes/telegram/server.js";
import type { PageClient } from "../helpers/page-client.js";

/** The seeded schedule of a chaos run (a failing run is replayed with its seed). */
export { seededRng as rng } from "../helpers/seeded-rng.js";

/** The queue receipt's states (formatReceipt): "⏳ Queued", "▶️ Now answering", "🛑 Cancelled". */
const RECEIPT = /^(⏳|▶️|🛑) /u;

/** How often each token is answered in a set of message texts, and the fragments no answer completes. */
export function tally(texts: readonly string[]): { counts: Map<string, number>; orphans: string[] } {
  const counts = new Map<string, number>();
  const orphans: string[] = [];
  for (const text of texts) {
    const whole = text.match(/answer:m\d+\b/g) ?? [];
    for (const a of whole) {
      const token = a.slice("answer:".length);
      counts.set(token, (counts.get(token) ?? 0) + 1);
    }
    // The agent's first piece alone ("answ…"): a part that landed and was never completed. (A queue
    // receipt quotes the messages it holds: it is not an answer.)
    if (whole.length === 0 && /\bans/.test(text) && !RECEIPT.test(text)) orphans.push(text);
  }
  return { counts, orphans };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ChaosTraffic {
  readonly sentTo = {
    webchat: [] as { page: PageClient; token: string }[],
    telegram: [] as { user: number; token: string }[],
  };
  private next = 1;

  constructor(
    private readonly random: () => number,
    private readonly pages: readonly PageClient[],
    private readonly fake: FakeTelegram,
    private readonly users: readonly number[],
  ) {}

  /** The newest token sent. */
  get last(): string {
    return `m${this.next - 1}`;
  }

  /** One to three messages, each to a random page or Telegram user, a little apart. */
  async burst(): Promise<void> {
    const count = 1 + Math.floor(this.random() * 3);
    for (let i = 0; i < count; i += 1) {
      const token = `m${this.next++}`;
      if (this.random() < 0.5) {
        const page = this.pages[Math.floor(this.random() * this.pages.length)] as PageClient;
        page.say(token);
        this.sentTo.webchat.push({ page, token });
      } else {
        const user = this.users[Math.floor(this.random() * this.users.length)] as number;
        this.fake.pushMessage({ id: user }, token);
        this.sentTo.telegram.push({ user, token });
      }
      await sleep(Math.floor(this.random() * 120));
    }
  }

  /** Tokens sent that no live page or Telegram chat shows an answer to yet. */
  owed(): number {
    const web = this.pages.flatMap(
      (p) => tally([...p.bubbles.values()].filter((b) => b.role === "assistant").map((b) => b.text)).counts,
    );
    const tg = this.users.map((u) => tally(this.fake.sentMessages(u).map((m) => m.visible)).counts);
    const webMissing = this.sentTo.webchat.filter(({ token }) => !web.some((c) => c.has(token)));
    const tgMissing = this.sentTo.telegram.filter(({ token }) => !tg.some((c) => c.has(token)));
    return webMissing.length + tgMissing.length;
  }

  /** Wait while answers keep coming, until nothing is owed or none came for `stallMs`. */
  async settle(stallMs: number): Promise<void> {
    let left = this.owed();
    let progressAt = Date.now();
    while (left > 0 && Date.now() - progressAt < stallMs) {
      await sleep(200);
      const now = this.owed();
      if (now < left) progressAt = Date.now();
      left = now;
    }
    await sleep(500); // anything late (a duplicate in flight) lands before the count
  }
}

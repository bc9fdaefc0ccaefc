/** A FIFO mutex: one holder at a time, waiters served in arrival order. */
export type Release = () => void;

export class Mutex {
  private held = false;
  private readonly waiters: (() => void)[] = [];

  get locked(): boolean {
    return this.held;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  acquire(): Promise<Release> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => this.waiters.push(() => resolve(this.releaser())));
  }

  /** Take the lock only if it is free right now (atomic: no await between check and mark). */
  tryAcquire(): Release | null {
    if (this.held) return null;
    this.held = true;
    return this.releaser();
  }

  async run<T>(fn: () => Promise<T> | T): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private releaser(): Release {
    let released = false;
    return () => {
      // Idempotent: a double release must not hand the lock to two waiters.
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.held = false;
    };
  }
}

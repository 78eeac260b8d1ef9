/**
 * TEST FIXTURE (dev cluster): injectable faults. Request faults act in the
 * API server (transient 429/500/503/504 answers, dropped connections, a
 * crash that cuts every open connection); release faults act in the Flux
 * simulation (a render failure, a release slow to become Ready).
 */

export interface RequestMatch {
  /** HTTP method, e.g. `PATCH`; any when omitted. */
  readonly method?: string;
  /** A substring of the URL path, or a pattern tested against path and query. */
  readonly path?: string | RegExp;
  /** Matching requests to let through before the fault starts (default 0). */
  readonly skip?: number;
  /** How many matching requests the fault hits (default 1; Infinity for all). */
  readonly times?: number;
}

export interface RequestFailure extends RequestMatch {
  readonly status: 429 | 500 | 503 | 504;
  /** Sent as `Retry-After` and in the Status details. */
  readonly retryAfterSeconds?: number;
}

export interface FaultHandle {
  /** Requests (or renders) the fault has hit so far. */
  readonly hits: number;
  clear(): void;
}

export interface RenderFailure {
  /** The error text (default: an injected-failure message). Shown as helm's message. */
  readonly message?: string;
  /** How many renders fail (default Infinity: until cleared). */
  readonly times?: number;
  /**
   * Only renders whose values hold this text fail (a render failure is the
   * config's, as with Helm: the release's earlier config still renders).
   */
  readonly valuesContaining?: string;
}

interface RequestRule {
  readonly match: RequestMatch;
  readonly action: { kind: 'fail'; status: number; retryAfterSeconds?: number } | { kind: 'drop' };
  seen: number;
  hits: number;
}

interface ReleaseRule<T> {
  readonly release: string;
  readonly value: T;
  remaining: number;
  hits: number;
  /** Render rules: only renders whose values hold this text. */
  readonly valuesContaining?: string;
}

/** `ns/name` matches that release; a bare `name` matches it in any namespace. */
const releaseMatches = (rule: string, namespace: string, name: string): boolean => (rule.includes('/') ? rule === `${namespace}/${name}` : rule === name);

export class Faults {
  private readonly requestRules: RequestRule[] = [];
  private readonly renderRules: Array<ReleaseRule<string | undefined>> = [];
  private readonly slowRules: Array<ReleaseRule<number> & { readonly cleared: Promise<void>; readonly end: () => void }> = [];
  private readonly releaseRules: Array<ReleaseRule<string | undefined>> = [];
  /** Milliseconds every release takes from rendered to Ready, unless slowRelease says otherwise. */
  defaultReadyDelayMs = 0;

  constructor(private readonly onCrash: (downForMs: number) => Promise<void>) {}

  /** The next `times` requests matching get `status` (a Status body as the real server sends). */
  failRequests(failure: RequestFailure): FaultHandle {
    return this.addRequestRule(failure, {
      kind: 'fail',
      status: failure.status,
      ...(failure.retryAfterSeconds !== undefined ? { retryAfterSeconds: failure.retryAfterSeconds } : {}),
    });
  }

  /** Matching requests get no answer: the server closes their connection (a server dying mid-request). */
  dropConnections(match: RequestMatch): FaultHandle {
    return this.addRequestRule(match, { kind: 'drop' });
  }

  /**
   * Cuts every open connection (watches, requests in flight) at once; with
   * `downForMs` the server also stops listening for that long. Stored state survives.
   */
  crash(options: { downForMs?: number } = {}): Promise<void> {
    return this.onCrash(options.downForMs ?? 0);
  }

  /** Renders of the release fail with `message` (as helm's error) until cleared or `times` runs out. */
  failRender(release: string, failure: RenderFailure = {}): FaultHandle {
    const rule: ReleaseRule<string | undefined> = {
      release,
      value: failure.message,
      remaining: failure.times ?? Infinity,
      hits: 0,
      ...(failure.valuesContaining !== undefined ? { valuesContaining: failure.valuesContaining } : {}),
    };
    this.renderRules.push(rule);
    return this.handle(rule, this.renderRules);
  }

  /**
   * Helm actions of the release fail after Helm recorded the release (as a
   * failed apply or wait does): a failed revision is stored and counted
   * against the remediation retries. A render failure (failRender) stores nothing.
   */
  failRelease(release: string, failure: RenderFailure = {}): FaultHandle {
    const rule: ReleaseRule<string | undefined> = { release, value: failure.message, remaining: failure.times ?? Infinity, hits: 0 };
    this.releaseRules.push(rule);
    return this.handle(rule, this.releaseRules);
  }

  /**
   * The release takes `delayMs` from rendered to Ready (longer than its
   * timeout: the install times out). Clearing the fault ends a wait under
   * way (within the timeout) at once: a release held until the test lets it go.
   */
  slowRelease(release: string, delayMs: number): FaultHandle {
    let end!: () => void;
    const cleared = new Promise<void>((resolve) => (end = resolve));
    const rule = { release, value: delayMs, remaining: Infinity, hits: 0, cleared, end };
    this.slowRules.push(rule);
    const handle = this.handle(rule, this.slowRules);
    return {
      get hits() {
        return handle.hits;
      },
      clear() {
        handle.clear();
        end();
      },
    };
  }

  /** Removes every fault and resets the default ready delay. */
  clear(): void {
    this.requestRules.length = 0;
    this.renderRules.length = 0;
    for (const rule of this.slowRules.splice(0)) rule.end();
    this.releaseRules.length = 0;
    this.defaultReadyDelayMs = 0;
  }

  /** For the API server: what to do with a request, if a fault matches it. */
  requestFault(method: string, url: string): RequestRule['action'] | undefined {
    const path = url.split('?')[0]!;
    for (const rule of this.requestRules) {
      const { match } = rule;
      if (match.method && match.method.toUpperCase() !== method) continue;
      if (typeof match.path === 'string' && !path.includes(match.path)) continue;
      if (match.path instanceof RegExp && !match.path.test(url)) continue;
      rule.seen++;
      if (rule.seen <= (match.skip ?? 0)) continue;
      if (rule.hits >= (match.times ?? 1)) continue;
      rule.hits++;
      return rule.action;
    }
    return undefined;
  }

  /** For the Flux simulation: the injected render error for a release, if any (consumes one). */
  renderFailure(namespace: string, name: string, values: unknown): string | undefined {
    const text = JSON.stringify(values);
    return this.take(
      this.renderRules,
      namespace,
      name,
      'render failure',
      (rule) => rule.valuesContaining === undefined || text.includes(rule.valuesContaining),
    );
  }

  /** For the Flux simulation: the injected failure of a recorded release action, if any (consumes one). */
  releaseFailure(namespace: string, name: string): string | undefined {
    return this.take(this.releaseRules, namespace, name, 'release failure');
  }

  private take(
    rules: Array<ReleaseRule<string | undefined>>,
    namespace: string,
    name: string,
    what: string,
    applies: (rule: ReleaseRule<string | undefined>) => boolean = () => true,
  ): string | undefined {
    const rule = rules.find((r) => r.remaining > 0 && releaseMatches(r.release, namespace, name) && applies(r));
    if (!rule) return undefined;
    rule.remaining--;
    rule.hits++;
    return rule.value ?? `injected ${what} for release ${namespace}/${name} (dev cluster test fixture)`;
  }

  /** How long the release takes from rendered to Ready, and (when a slowRelease says so) when the test lets it go earlier. */
  readyDelay(namespace: string, name: string): { ms: number; cleared?: Promise<void> } {
    const rule = this.slowRules.find((r) => releaseMatches(r.release, namespace, name));
    if (rule) rule.hits++;
    return rule ? { ms: rule.value, cleared: rule.cleared } : { ms: this.defaultReadyDelayMs };
  }

  private addRequestRule(match: RequestMatch, action: RequestRule['action']): FaultHandle {
    const rule: RequestRule = { match, action, seen: 0, hits: 0 };
    this.requestRules.push(rule);
    return this.handle(rule, this.requestRules);
  }

  private handle<T extends { hits: number }>(rule: T, list: T[]): FaultHandle {
    return {
      get hits() {
        return rule.hits;
      },
      clear() {
        const index = list.indexOf(rule);
        if (index >= 0) list.splice(index, 1);
      },
    };
  }
}

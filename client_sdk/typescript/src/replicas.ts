/**
 * The replicas behind a target, by the client contract (docs/CLIENTS.md):
 * one channel per replica, round robin over those admitted; a replica that
 * misses an attempt deadline or breaks is ejected until a health probe
 * answers SERVING; one that refuses for overload is held back for its hint
 * (longer while it keeps refusing); retries and hedges stay within a
 * budget. Internal to the SDK.
 * @module
 */
import { promises as dns } from "node:dns";
import { isIP } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { UtilitydError } from "./errors.js";

/** What the pool needs of ClientOptions (defaults applied). */
export interface PoolOptions {
  target: string;
  aiTickMs: number;
  batchDeadlineMs: number;
  deadlineMs: number;
  maxAttempts: number;
  retryBudgetRatio: number;
  retryBudgetReserve: number;
  resolveIntervalMs: number;
  credentials: grpc.ChannelCredentials;
  tlsServerName?: string;
  channelOptions: grpc.ChannelOptions;
}

/** One replica as the client sees it. */
export interface ReplicaState {
  address: string;
  /** No new batch goes to it until a health probe answers SERVING. */
  ejected: boolean;
  /** When ejected: the deadline it missed, the error. */
  why: string;
  /** Answers (batches and probes) it gave. */
  answered: number;
}

/** @internal One replica: its address and its own channel. */
export class Replica {
  ejected = false;
  ejectedAt = 0;
  why = "";
  strikes = 0;
  nextProbe = 0;
  probing = false;
  pushedBackUntil = 0;
  refusals = 0;
  answered = 0;

  constructor(
    readonly address: string,
    readonly client: grpc.Client,
  ) {}

  state(): grpc.connectivityState {
    return this.client.getChannel().getConnectivityState(true);
  }
}

/** @internal A pick: the replica, and when the attempt may start (after a pushback). */
export interface Pick {
  replica: Replica;
  notBefore: number;
}

/** @internal Retries and hedges within `ratio` of first attempts, after `reserve`. */
export class RetryBudget {
  private tokens: number;
  constructor(
    private readonly ratio: number,
    private readonly reserve: number,
  ) {
    this.tokens = reserve;
  }
  deposit(): void {
    this.tokens = Math.min(this.reserve + 1000 * this.ratio, this.tokens + this.ratio);
  }
  withdraw(): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

const HEALTH_CHECK = "/grpc.health.v1.Health/Check";
const SERVICE_NAME = "utilityd.v1.DecisionService";
const PROBE_TICK_MS = 20;
const MAX_HOLD_MS = 1000;

/** grpc.health.v1.HealthCheckRequest{service}: field 1, length-delimited. */
function healthRequest(): Buffer {
  const name = Buffer.from(SERVICE_NAME, "utf8");
  return Buffer.concat([Buffer.from([0x0a, name.length]), name]);
}
/** HealthCheckResponse.status (field 1, varint) is SERVING (1). */
function isServing(b: Buffer): boolean {
  return b.length >= 2 && b[0] === 0x08 && b[1] === 0x01;
}

const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ETIMEDOUT: "connect timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};

/**
 * @internal What a grpc-js error says, once: its details without the
 * wrapping grpc-js adds ("No connection established. Last error: Error:
 * connect ECONNREFUSED 10.0.0.5:50051. Resolution note: ") and without the
 * address the caller names anyway ("connection refused").
 */
export function plainWhy(e: { details?: string; message: string }): string {
  let why = e.details || e.message;
  const last = /Last error: (?:Error: )?(.*?)\.?(?: Resolution note:.*)?$/s.exec(why);
  if (last !== null) why = last[1];
  why = why.replace(/connect (E[A-Z]+) \S+/, (all, code: string) => SOCKET_ERRORS[code] ?? all);
  return why.trim().replace(/\.$/, "");
}

/** "host:port" and "[v6]:port" split; throws UtilitydError when malformed. */
function splitHostPort(item: string): [string, string] {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(item) ?? /^([^:[\]]+):(\d+)$/.exec(item);
  if (m === null) {
    throw new UtilitydError(grpc.status.INVALID_ARGUMENT, `target: "${item}" is not host:port`);
  }
  return [m[1], m[2]];
}

/** @internal The replicas of a target. */
export class ReplicaPool {
  readonly budget: RetryBudget;
  private replicas: Replica[] = [];
  private literals: Replica[] = []; // from IP addresses in the target: kept
  private fromNames: Replica[] = []; // from host names: follow each lookup
  private next = 0;
  private names: Array<[string, string]> = []; // host names to resolve again
  private readonly probeTimer: NodeJS.Timeout;
  private resolveTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Settles once the target's names were looked up the first time. */
  readonly resolved: Promise<void>;

  constructor(readonly options: PoolOptions) {
    this.budget = new RetryBudget(options.retryBudgetRatio, options.retryBudgetReserve);
    let target = options.target.trim();
    if (target === "") throw new UtilitydError(grpc.status.INVALID_ARGUMENT, "target: is empty");
    const dnsScheme = /^dns:(\/\/\/)?/.exec(target);
    if (dnsScheme !== null) target = target.slice(dnsScheme[0].length);
    else if (/^[a-z][a-z0-9+.-]*:\//i.test(target) || /^unix(-abstract)?:/.test(target)) {
      // Another scheme: one replica, resolved by grpc-js.
      this.replicas = [this.makeReplica(target, target)];
      this.resolved = Promise.resolve();
      this.probeTimer = this.startProbes();
      return;
    }
    target = target.replace(/^ipv[46]:/, "");
    const literals: string[] = [];
    for (const item of target.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
      const [host, port] = splitHostPort(item);
      if (isIP(host)) literals.push(isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`);
      else this.names.push([host, port]);
    }
    this.literals = literals.map((a) => this.makeReplica(a, a));
    this.replicas = this.literals.slice();
    this.resolved = this.names.length === 0 ? Promise.resolve() : this.resolve();
    if (this.names.length > 0 && options.resolveIntervalMs > 0) {
      this.resolveTimer = setInterval(() => void this.resolve(), options.resolveIntervalMs);
      this.resolveTimer.unref();
    }
    this.probeTimer = this.startProbes();
  }

  /** How long one attempt may go unanswered. */
  get attemptDeadlineMs(): number {
    return this.options.batchDeadlineMs > 0 ? this.options.batchDeadlineMs : this.options.aiTickMs / 2;
  }

  private makeReplica(address: string, grpcTarget: string): Replica {
    const channel: grpc.ChannelOptions = {
      // Deadlines, not grpc-js's retries, decide when to try another replica.
      "grpc.enable_retries": 0,
      "grpc.use_local_subchannel_pool": 1,
      "grpc.initial_reconnect_backoff_ms": 100,
      "grpc.max_reconnect_backoff_ms": 500,
      ...(this.options.tlsServerName !== undefined
        ? { "grpc.ssl_target_name_override": this.options.tlsServerName, "grpc.default_authority": this.options.tlsServerName }
        : {}),
      ...this.options.channelOptions,
    };
    const client = new grpc.Client(grpcTarget, this.options.credentials, channel);
    client.getChannel().getConnectivityState(true);
    return new Replica(address, client);
  }

  /** Looks the names up; new addresses get a channel, gone ones are closed. */
  private async resolve(): Promise<void> {
    const found = new Set<string>();
    for (const [host, port] of this.names) {
      try {
        for (const a of await dns.lookup(host, { all: true })) {
          found.add(a.family === 6 ? `[${a.address}]:${port}` : `${a.address}:${port}`);
        }
      } catch {
        // Not resolvable yet (a service being created): tried again later.
      }
    }
    if (this.closed) return;
    const keep = this.fromNames.filter((r) => found.has(r.address));
    for (const r of this.fromNames) if (!found.has(r.address)) r.client.close();
    const fresh = [...found].filter((a) => !keep.some((r) => r.address === a)).map((a) => this.makeReplica(a, a));
    this.fromNames = [...keep, ...fresh];
    this.replicas = [...this.literals, ...this.fromNames];
  }

  /**
   * The next replica for an attempt, none of `busy`: round robin over the
   * admitted ones not held back and not failing to connect; else the one
   * whose hold ends first; else the one ejected longest ago.
   */
  pick(busy: Replica[] = []): Pick | undefined {
    const now = Date.now();
    const n = this.replicas.length;
    for (let k = 0; k < n; ++k) {
      const r = this.replicas[(this.next + k) % n];
      if (r.ejected || busy.includes(r) || r.pushedBackUntil > now) continue;
      if (r.state() === grpc.connectivityState.TRANSIENT_FAILURE) continue;
      this.next = (this.next + k + 1) % n;
      return { replica: r, notBefore: 0 };
    }
    let best: Replica | undefined;
    for (const r of this.replicas) {
      if (busy.includes(r) || r.ejected || r.pushedBackUntil <= now) continue;
      if (best === undefined || r.pushedBackUntil < best.pushedBackUntil) best = r;
    }
    if (best !== undefined) return { replica: best, notBefore: best.pushedBackUntil };
    for (const r of this.replicas) {
      if (busy.includes(r)) continue;
      if (best === undefined || (!r.ejected && best.ejected) || (r.ejected && best.ejected && r.ejectedAt < best.ejectedAt)) {
        best = r;
      }
    }
    return best === undefined ? undefined : { replica: best, notBefore: 0 };
  }

  /** `r` answered: admitted again, its strikes and refusals forgotten. */
  answeredBy(r: Replica): void {
    ++r.answered;
    r.ejected = false;
    r.strikes = 0;
    r.refusals = 0;
  }

  /** `r` missed a deadline or broke: no new attempt until a probe answers. */
  eject(r: Replica, why: string): void {
    if (r.ejected) return;
    r.ejected = true;
    r.ejectedAt = Date.now();
    r.why = why;
    r.nextProbe = r.ejectedAt + this.attemptDeadlineMs;
  }

  /** `r` refused for overload: held back for the hint, doubling with each refusal in a row, up to a second. */
  pushBack(r: Replica, afterMs: number): void {
    const hold = Math.max(afterMs, Math.min(MAX_HOLD_MS, afterMs * 2 ** Math.min(r.refusals, 10)));
    ++r.refusals;
    r.pushedBackUntil = Math.max(r.pushedBackUntil, Date.now() + hold);
  }

  states(): ReplicaState[] {
    return this.replicas.map((r) => ({ address: r.address, ejected: r.ejected, why: r.ejected ? r.why : "", answered: r.answered }));
  }

  /**
   * One health check of `r`: true when SERVING within `timeoutMs`. It waits
   * for a connection still being made (a replica restarting) for its whole
   * time, as the other SDKs' probes do, rather than failing at once and
   * leaving the replica out until the next probe.
   */
  check(r: Replica, timeoutMs: number): Promise<{ serving: boolean; why: string }> {
    return new Promise((resolve) => {
      r.client.makeUnaryRequest(
        HEALTH_CHECK,
        (b: Buffer) => b,
        (b: Buffer) => b,
        healthRequest(),
        new grpc.Metadata({ waitForReady: true }),
        { deadline: Date.now() + timeoutMs },
        (e, b) => {
          if (e) resolve({ serving: false, why: plainWhy(e) });
          else resolve({ serving: isServing(b!), why: isServing(b!) ? "" : "not serving" });
        },
      );
    });
  }

  private startProbes(): NodeJS.Timeout {
    const t = setInterval(() => {
      const now = Date.now();
      for (const r of this.replicas) {
        if (!r.ejected || r.probing || r.nextProbe > now) continue;
        r.probing = true;
        void this.check(r, this.attemptDeadlineMs).then(({ serving }) => {
          r.probing = false;
          if (serving) {
            r.ejected = false;
            r.strikes = 0;
            return;
          }
          ++r.strikes;
          r.nextProbe = Date.now() + Math.min(MAX_HOLD_MS, this.attemptDeadlineMs * 2 ** Math.min(r.strikes, 6));
        });
      }
    }, PROBE_TICK_MS);
    t.unref();
    return t;
  }

  /**
   * Resolves once some replica answers a health check SERVING; rejects
   * with UNAVAILABLE after `timeoutMs`, saying once what each replica
   * answered.
   */
  async waitForReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await Promise.race([this.resolved, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    const last = new Map<string, string>();
    while (true) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      const per = Math.min(left, Math.max(this.attemptDeadlineMs, 200));
      const answers = await Promise.all(this.replicas.map(async (r) => [r, await this.check(r, per)] as const));
      for (const [r, a] of answers) {
        if (a.serving) {
          this.answeredBy(r);
          return;
        }
        last.set(r.address, a.why);
      }
      await new Promise((r) => setTimeout(r, Math.min(50, Math.max(0, deadline - Date.now()))));
    }
    const why = [...last].map(([a, w]) => `${a}: ${w}`).join("; ");
    throw new UtilitydError(
      grpc.status.UNAVAILABLE,
      `no utilityd replica ready within ${timeoutMs} ms` + (why === "" ? ` (target ${this.options.target} names none yet)` : ` (${why})`),
    );
  }

  close(): void {
    this.closed = true;
    clearInterval(this.probeTimer);
    if (this.resolveTimer !== undefined) clearInterval(this.resolveTimer);
    for (const r of this.replicas) r.client.close();
  }
}

/** What to do after an attempt failed. */
export type Next = "retry" | "final" | "nothing";

/**
 * Classifies a failed attempt on `r` and reports it to the pool: overload
 * with a retry hint holds the replica back and retries elsewhere; a
 * replica down or draining is ejected and the batch retried; a refusal of
 * the request itself is final. `retryAfterMs` < 0: no hint.
 */
export function onFailure(pool: ReplicaPool, r: Replica, code: number, why: string, retryAfterMs: number): Next {
  switch (code) {
    case grpc.status.RESOURCE_EXHAUSTED:
      if (retryAfterMs < 0) return "final";
      pool.pushBack(r, retryAfterMs);
      return "retry";
    case grpc.status.UNAVAILABLE:
      pool.eject(r, why);
      return "retry";
    case grpc.status.CANCELLED:
    case grpc.status.DEADLINE_EXCEEDED:
      return "nothing";
    default:
      return "final";
  }
}

/** The failure of a batch no attempt answered, each replica named once (its last word). */
export function exhausted(method: string, code: number, failures: Array<[string, string]>, deadlineMs: number, timedOut: boolean): UtilitydError {
  const last = new Map<string, string>();
  for (const [address, why] of failures) last.set(address, why);
  let what = timedOut ? `${method}: no answer within ${deadlineMs} ms` : `${method}: no replica answered`;
  if (last.size > 0) what += ` (${[...last].map(([a, w]) => `${a}: ${w}`).join("; ")})`;
  return new UtilitydError(code, what);
}

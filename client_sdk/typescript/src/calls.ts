/**
 * How a batch is sent, by the client contract (docs/CLIENTS.md): a unary
 * call raced across replicas (callHedged) and the stream over every
 * replica (DecisionStream). Internal, but for DecisionStream and CallInfo.
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import { type Answer, type DecideInput, decodeResponse } from "./block.js";
import { UtilitydError } from "./errors.js";
import { ErrorCode, ErrorReason } from "./gen/utilityd/v1/decision_service.js";
import { exhausted, onFailure, plainWhy, type Replica, type ReplicaPool } from "./replicas.js";

/** How one batch went: its attempts and the replica that answered. */
export interface CallInfo {
  attempts: number;
  /** "host:port" of the replica that answered; empty when none did. */
  replica: string;
}

/** @internal */
export function toBuffer(b: Uint8Array): Buffer {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function pushbackOf(e: grpc.ServiceError): number {
  const v = e.metadata?.get("grpc-retry-pushback-ms")?.[0];
  const n = v === undefined ? NaN : Number(v);
  return Number.isFinite(n) ? n : -1;
}

/**
 * @internal One unary call by the contract: the first attempt on the next
 * replica; unanswered within the attempt deadline, its replica is ejected
 * and the call raced on another (the first answer wins, the rest are
 * cancelled); refusals for overload or unavailability are retried on
 * another replica after the pushback; attempts stay within maxAttempts
 * and the retry budget, the whole within `deadlineMs`.
 */
export async function callHedged<T>(
  pool: ReplicaPool,
  method: string,
  request: Uint8Array,
  decode: (b: Buffer) => T,
  deadlineMs: number,
): Promise<{ value: T; info: CallInfo }> {
  await pool.resolved;
  const name = method.slice(method.lastIndexOf("/") + 1);
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + deadlineMs;
    type Attempt = { replica: Replica; call: grpc.ClientUnaryCall; done: boolean };
    const attempts: Attempt[] = [];
    const failures: Array<[string, string]> = [];
    let lastCode: number = grpc.status.UNAVAILABLE;
    let settled = false;
    let queued: NodeJS.Timeout | undefined;
    let hedge: NodeJS.Timeout | undefined;
    const outstanding = () => attempts.filter((a) => !a.done);

    const finish = (error: UtilitydError | undefined, value?: T, winner?: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadlineTimer);
      clearTimeout(hedge);
      clearTimeout(queued);
      for (const a of attempts) if (!a.done && a !== winner) a.call.cancel();
      if (error !== undefined) {
        error.info = { attempts: attempts.length, replica: "" };
        reject(error);
      } else resolve({ value: value as T, info: { attempts: attempts.length, replica: winner!.replica.address } });
    };
    const giveUpIfIdle = () => {
      if (!settled && queued === undefined && outstanding().length === 0) {
        finish(exhausted(name, lastCode, failures, deadlineMs, false));
      }
    };
    const launch = (replica: Replica) => {
      const a: Attempt = { replica, call: undefined!, done: false };
      attempts.push(a);
      a.call = replica.client.makeUnaryRequest(method, toBuffer, decode, request, new grpc.Metadata(), { deadline }, (e, r) => {
        a.done = true;
        if (!e) {
          pool.answeredBy(replica); // a late answer still proves it alive
          finish(undefined, r, a);
          return;
        }
        if (settled) return;
        if (e.code !== grpc.status.CANCELLED && e.code !== grpc.status.DEADLINE_EXCEEDED) {
          lastCode = e.code;
          const why = plainWhy(e);
          failures.push([replica.address, why]);
          const next = onFailure(pool, replica, e.code, why, pushbackOf(e));
          if (next === "final") return finish(new UtilitydError(e.code, why));
          if (next === "retry") another();
        }
        giveUpIfIdle();
      });
      clearTimeout(hedge);
      hedge = setTimeout(() => {
        hedge = undefined;
        if (a.done || settled) return;
        pool.eject(replica, `missed the attempt deadline of ${pool.attemptDeadlineMs} ms`);
        failures.push([replica.address, `no answer within ${pool.attemptDeadlineMs} ms`]);
        lastCode = grpc.status.DEADLINE_EXCEEDED;
        another();
      }, pool.attemptDeadlineMs);
    };
    const startAt = (pick: { replica: Replica; notBefore: number }) => {
      const wait = pick.notBefore - Date.now();
      if (wait <= 0) return launch(pick.replica);
      queued = setTimeout(() => {
        queued = undefined;
        if (!settled) launch(pick.replica);
      }, wait);
    };
    const another = () => {
      if (queued !== undefined || attempts.length >= pool.options.maxAttempts || !pool.budget.withdraw()) return;
      const pick = pool.pick(outstanding().map((a) => a.replica));
      if (pick !== undefined) startAt(pick);
    };
    const deadlineTimer = setTimeout(
      () => finish(exhausted(name, grpc.status.DEADLINE_EXCEEDED, failures, deadlineMs, true)),
      Math.max(0, deadline - Date.now()),
    );
    pool.budget.deposit();
    const first = pool.pick();
    if (first === undefined) {
      return finish(new UtilitydError(grpc.status.UNAVAILABLE, `${name}: no replica for target ${pool.options.target}`));
    }
    startAt(first);
  });
}

/** How a stream behaves. */
export interface StreamOptions {
  /** submit() waits while this many batches are unanswered (never on a slow replica). Default 8. */
  maxInFlight?: number;
}

/** @internal What the stream needs of the client. */
export interface StreamHost {
  pool: ReplicaPool;
  deadlineMs: number;
  /** Packs a request; returns its bytes and a repair step run on its answer. */
  prepare(input: DecideInput): Promise<{ bytes: Uint8Array; repair: (a: Answer) => Promise<void> }>;
}

type Sub = { replica: Replica; call: grpc.ClientDuplexStream<Uint8Array, Answer> };

interface Batch {
  id: bigint;
  bytes: Uint8Array;
  repair: (a: Answer) => Promise<void>;
  resolve: (a: Answer) => void;
  reject: (e: UtilitydError) => void;
  attempts: Array<{ sub: Sub | undefined; replica: Replica }>;
  failures: Array<[string, string]>;
  lastCode: number;
  /** When the batch fails unanswered (ms since the epoch). */
  deadlineAt: number;
  deadline?: NodeJS.Timeout;
  hedge?: NodeJS.Timeout;
  sendAt?: NodeJS.Timeout;
}

/**
 * A long-lived stream of batches over every healthy replica: one
 * DecideStream per replica, opened when first used, batches round robin.
 * A batch unanswered within the attempt deadline, or whose replica's
 * stream breaks, is sent again on another replica's stream; every
 * submitted batch settles exactly once, with the first answer.
 */
export class DecisionStream {
  private readonly maxInFlight: number;
  private readonly pending = new Map<bigint, Batch>();
  private readonly subs = new Map<Replica, Sub>();
  private readonly waiting: Array<() => void> = [];
  private drained: Array<() => void> = [];
  private nextId = 1n;
  private reserved = 0;
  private closing = false;
  private stopped = false;
  private broken = 0;

  /** @internal use UtilitydClient.openStream */
  constructor(
    private readonly host: StreamHost,
    options: StreamOptions,
  ) {
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 8);
  }

  /** Replica streams that broke while open. */
  get reconnects(): number {
    return this.broken;
  }

  /** Batches submitted and not yet answered. */
  get inFlight(): number {
    return this.pending.size + this.reserved;
  }

  /**
   * Sends a batch; resolves with its answer (its `info` says how it
   * went), or rejects with {@link UtilitydError} (the service refused the
   * batch, no replica answered within the deadline, the stream was closed
   * first). Assigns `requestId` when it is 0 or unset (ids must be unique
   * per stream).
   */
  async submit(input: DecideInput): Promise<Answer> {
    while (!this.closing && this.inFlight >= this.maxInFlight) {
      await new Promise<void>((wake) => this.waiting.push(wake));
    }
    if (this.closing) throw new UtilitydError(grpc.status.FAILED_PRECONDITION, "stream is closed");
    let id = BigInt(input.requestId ?? 0);
    if (id === 0n) id = this.nextId;
    if (id >= this.nextId) this.nextId = id + 1n;
    ++this.reserved; // room is taken before packing (which may fetch a schema)
    let prepared;
    try {
      prepared = await this.host.prepare({ ...input, requestId: id });
    } finally {
      --this.reserved;
    }
    await this.host.pool.resolved;
    return new Promise<Answer>((resolve, reject) => {
      const b: Batch = {
        id, bytes: prepared.bytes, repair: prepared.repair, resolve, reject,
        attempts: [], failures: [], lastCode: grpc.status.UNAVAILABLE,
        deadlineAt: Date.now() + this.host.deadlineMs,
      };
      this.pending.set(id, b);
      b.deadline = setTimeout(
        () => this.settle(b, exhausted("Decide", grpc.status.DEADLINE_EXCEEDED, b.failures, this.host.deadlineMs, true)),
        this.host.deadlineMs,
      );
      this.host.pool.budget.deposit();
      if (!this.dispatch(b)) {
        this.settle(b, new UtilitydError(grpc.status.UNAVAILABLE, `Decide: no replica for target ${this.host.pool.options.target}`));
      }
    });
  }

  /**
   * Waits up to `timeoutMs` for every submitted batch's answer, then ends
   * the stream; batches still unanswered reject with UNAVAILABLE.
   * Idempotent.
   */
  async close(timeoutMs = 10000): Promise<void> {
    this.closing = true;
    for (const wake of this.waiting.splice(0)) wake();
    if (this.pending.size > 0) {
      await new Promise<void>((done) => {
        const t = setTimeout(done, timeoutMs);
        this.drained.push(() => {
          clearTimeout(t);
          done();
        });
      });
    }
    this.stopped = true;
    for (const b of [...this.pending.values()]) {
      this.settle(b, new UtilitydError(grpc.status.UNAVAILABLE, "stream closed before the batch was answered"));
    }
    for (const sub of this.subs.values()) {
      sub.call.end();
      sub.call.cancel();
    }
    this.subs.clear();
  }

  private busy(b: Batch): Replica[] {
    return b.attempts.filter((a) => a.sub !== undefined).map((a) => a.replica);
  }

  /** Sends `b` to the next replica (now, or after its pushback); false when none can take it. */
  private dispatch(b: Batch): boolean {
    const pool = this.host.pool;
    const pick = pool.pick(this.busy(b));
    if (pick === undefined) return false;
    const wait = pick.notBefore - Date.now();
    if (wait > 0) {
      this.sendLater(b, wait);
      return true;
    }
    const sub = this.subs.get(pick.replica) ?? this.open(pick.replica);
    sub.call.write(b.bytes);
    b.attempts.push({ sub, replica: pick.replica });
    clearTimeout(b.hedge);
    b.hedge = setTimeout(() => this.hedge(b), pool.attemptDeadlineMs);
    return true;
  }

  /** Dispatches `b` again after `ms`. */
  private sendLater(b: Batch, ms: number): void {
    clearTimeout(b.sendAt);
    b.sendAt = setTimeout(() => {
      b.sendAt = undefined;
      if (this.pending.get(b.id) === b && !this.dispatch(b)) this.retry(b);
    }, ms);
  }

  /** Another attempt of `b` if maxAttempts and the budget allow; else it fails once none is out. */
  private retry(b: Batch): void {
    const pool = this.host.pool;
    if (b.sendAt !== undefined) return; // an attempt is already on its way
    const out = b.attempts.some((a) => a.sub !== undefined);
    if (b.attempts.length < pool.options.maxAttempts && pool.budget.withdraw() && this.dispatch(b)) return;
    if (!out) this.settle(b, exhausted("Decide", b.lastCode, b.failures, this.host.deadlineMs, false));
  }

  private hedge(b: Batch): void {
    b.hedge = undefined;
    if (this.pending.get(b.id) !== b) return;
    const latest = [...b.attempts].reverse().find((a) => a.sub !== undefined);
    if (latest === undefined) return;
    const ms = this.host.pool.attemptDeadlineMs;
    this.host.pool.eject(latest.replica, `missed the attempt deadline of ${ms} ms`);
    b.failures.push([latest.replica.address, `no answer within ${ms} ms`]);
    b.lastCode = grpc.status.DEADLINE_EXCEEDED;
    this.retry(b);
  }

  private open(replica: Replica): Sub {
    const call = replica.client.makeBidiStreamRequest<Uint8Array, Answer>(
      "/utilityd.v1.DecisionService/DecideStream",
      toBuffer,
      decodeResponse,
      // A replica still connecting is waited for; the attempt deadline
      // moves the batch elsewhere meanwhile.
      new grpc.Metadata({ waitForReady: true }),
    );
    const sub: Sub = { replica, call };
    this.subs.set(replica, sub);
    call.on("data", (a: Answer) => this.answer(sub, a));
    call.on("error", () => {}); // the status below says it ended
    call.on("status", (s: grpc.StatusObject) => this.ended(sub, s));
    return sub;
  }

  private answer(sub: Sub, a: Answer): void {
    const pool = this.host.pool;
    // A refusal for overload, or a replica not serving, proves it alive but
    // not available.
    const overloaded = a.error?.reason === ErrorReason.ERROR_REASON_OVERLOADED;
    const unavailable = a.error?.code === ErrorCode.ERROR_CODE_UNAVAILABLE;
    if (!overloaded && !unavailable) pool.answeredBy(sub.replica);
    const b = this.pending.get(a.requestId);
    if (b === undefined) return; // answered already (a hedge's twin)
    for (const at of b.attempts) if (at.replica === sub.replica) at.sub = undefined;
    if (a.error !== undefined) {
      if (overloaded) {
        b.lastCode = a.error.code;
        b.failures.push([sub.replica.address, a.error.message]);
        if (onFailure(pool, sub.replica, a.error.code, a.error.message, Number(a.error.retryAfterMs)) === "retry") {
          return this.retry(b);
        }
      }
      if (unavailable && Date.now() + pool.attemptDeadlineMs < b.deadlineAt) {
        // A replica not serving yet (loading its sets) or any more: the
        // batch was not decided. It goes again after an attempt deadline,
        // to another replica if one serves, uncharged.
        b.lastCode = a.error.code;
        b.failures.push([sub.replica.address, a.error.message]);
        pool.eject(sub.replica, a.error.message);
        clearTimeout(b.hedge);
        b.hedge = undefined;
        return this.sendLater(b, pool.attemptDeadlineMs);
      }
      return this.settle(b, UtilitydError.fromMessage(a.error));
    }
    a.info = { attempts: b.attempts.length, replica: sub.replica.address };
    this.settle(b, undefined);
    b.repair(a).then(
      () => b.resolve(a),
      () => b.resolve(a),
    );
  }

  private ended(sub: Sub, s: grpc.StatusObject): void {
    if (this.subs.get(sub.replica) === sub) this.subs.delete(sub.replica);
    if (this.stopped) return;
    ++this.broken;
    const why = s.code === grpc.status.OK ? "the stream ended" : plainWhy({ details: s.details, message: s.details });
    this.host.pool.eject(sub.replica, why);
    for (const b of [...this.pending.values()]) {
      const here = b.attempts.filter((a) => a.sub === sub);
      if (here.length === 0) continue;
      for (const a of here) a.sub = undefined;
      b.lastCode = s.code === grpc.status.OK ? grpc.status.UNAVAILABLE : s.code;
      b.failures.push([sub.replica.address, why]);
      // Sent again at once, outside the budget: it may never have reached
      // the replica.
      if (b.attempts.some((a) => a.sub !== undefined) || b.sendAt !== undefined) continue;
      if (b.attempts.length >= this.host.pool.options.maxAttempts || !this.dispatch(b)) this.retry(b);
    }
  }

  /** Frees `b`'s slot; rejects it with `error` (an answer resolves after its repair). */
  private settle(b: Batch, error: UtilitydError | undefined): void {
    if (this.pending.get(b.id) !== b) return;
    this.pending.delete(b.id);
    clearTimeout(b.deadline);
    clearTimeout(b.hedge);
    clearTimeout(b.sendAt);
    if (error !== undefined) {
      error.info = { attempts: b.attempts.length, replica: "" };
      b.reject(error);
    }
    this.waiting.shift()?.();
    if (this.pending.size === 0) for (const done of this.drained.splice(0)) done();
  }
}

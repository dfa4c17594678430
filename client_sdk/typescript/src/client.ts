/**
 * The client: one channel to one or more utilityd replicas (balanced round
 * robin), unary `decide` with a deadline, and {@link DecisionStream}, the
 * main path, which re-sends unanswered batches after a reconnect so that
 * every batch gets exactly one result.
 *
 * ```ts
 * const client = UtilitydClient.connect({ target: "10.0.0.5:50051,10.0.0.6:50051" });
 * await client.waitForReady(5000);
 * const answer = await client.decide({
 *   agents: [{ agentId: "mage-1", behaviourSet: "arena_mage",
 *              namedFactors: { health: 80, mana: 30, ... } }],
 * });
 * console.log(answer.decisions[0].action);
 * ```
 * @module
 */
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import {
  AgentSnapshot,
  Decision,
  GetBehaviourSetRequest,
  GetBehaviourSetResponse,
  ListBehaviourSetsRequest,
  ListBehaviourSetsResponse,
} from "./gen/utilityd/v1/decision_service.js";
import { type Answer, type DecideInput, decodeResponse, encodeRequest } from "./block.js";
import { isStaleRevision, UtilitydError } from "./errors.js";
import { PackError, SetSchema } from "./schema.js";

/** How to reach the service. */
export interface ClientOptions {
  /**
   * "host:port"; a comma-separated list of IP "addr:port" (balanced); or
   * any gRPC target, e.g. "dns:///utilityd:50051" (every address the name
   * resolves to is balanced).
   */
  target: string;
  /** gRPC load-balancing policy across the target's addresses. Default round_robin. */
  loadBalancingPolicy?: string;
  /** Deadline of unary calls (decide, listBehaviourSets, getBehaviourSet), ms. Default 2000. */
  deadlineMs?: number;
  /**
   * Attempts in all of a unary decide refused because a replica is
   * overloaded (RESOURCE_EXHAUSTED, reason OVERLOADED) or unavailable
   * (draining, down), within the deadline: after the replica's retry hint
   * (its grpc-retry-pushback-ms trailer) or a jittered backoff from 50 ms,
   * each attempt a new pick of the round robin (another replica). Retries
   * stop while more than half of the calls fail. 1 disables. Default 4.
   */
  maxAttempts?: number;
  /** Keepalive pings on idle connections, ms; 0 disables. Default 20000 (keep at or above the server's minimum). */
  keepaliveTimeMs?: number;
  /** Default 10000. */
  keepaliveTimeoutMs?: number;
  /** TLS: PEM files. `tlsCaFile` verifies the server (switches TLS on); cert and key present a client certificate (mutual TLS). */
  tlsCaFile?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** Overrides the name checked against the server's certificate. */
  tlsServerName?: string;
  /** Channel credentials, overriding the TLS files. */
  credentials?: grpc.ChannelCredentials;
  /** Pack named factors into the set's order on the client (fetching each set's schema once). Default true. */
  packNamedFactors?: boolean;
  /** Further channel options, passed to grpc-js as they are. */
  channelOptions?: grpc.ChannelOptions;
}

/**
 * The channel's service config: the balancing policy and, with more than
 * one attempt, gRPC's retry of Decide on RESOURCE_EXHAUSTED (a replica
 * shedding load) and UNAVAILABLE (docs/RELIABILITY.md, "Overload"), as the
 * C++ SDK's.
 */
export function serviceConfig(policy: string, maxAttempts: number): object {
  const config: Record<string, unknown> = { loadBalancingConfig: [{ [policy]: {} }] };
  if (maxAttempts > 1) {
    config.methodConfig = [{
      name: [{ service: "utilityd.v1.DecisionService", method: "Decide" }],
      retryPolicy: {
        maxAttempts: Math.min(maxAttempts, 5),
        initialBackoff: "0.05s",
        maxBackoff: "1s",
        backoffMultiplier: 2,
        retryableStatusCodes: ["RESOURCE_EXHAUSTED", "UNAVAILABLE"],
      },
    }];
    config.retryThrottling = { maxTokens: 100, tokenRatio: 1 };
  }
  return config;
}

/** Per call. */
export interface CallOptions {
  /** Overrides ClientOptions.deadlineMs. */
  deadlineMs?: number;
  /** Wait for a ready connection instead of failing fast while none is (within the deadline). */
  waitForReady?: boolean;
}

/** How a stream behaves. */
export interface StreamOptions {
  /** submit() waits while this many batches are unanswered. Default 2. */
  maxInFlight?: number;
  /** Reconnect backoff after a stream breaks: doubles from initial to max, ms. Defaults 50 and 2000. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

const SERVICE = "/utilityd.v1.DecisionService/";

function toBuffer(b: Uint8Array): Buffer {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * The gRPC target for a `ClientOptions.target`: a list of "ip:port"
 * becomes "ipv4:..." (or "ipv6:..."); anything else is used as given.
 * Throws {@link UtilitydError} (INVALID_ARGUMENT) for a list with a host name.
 */
export function resolveTarget(target: string): string {
  const invalid = (m: string) => new UtilitydError(grpc.status.INVALID_ARGUMENT, m);
  if (target === "") throw invalid("target: is empty");
  if (target.includes(":///") || /^(ipv4|ipv6|unix):/.test(target)) return target;
  if (!target.includes(",")) return target;
  const parts = target.split(",").map((p) => p.trim());
  for (const p of parts) {
    if (!/^[0-9[]/.test(p)) {
      throw invalid(`target: "${p}" in a list must be an IP address and port; for host names use one dns:///name:port target`);
    }
  }
  return (parts.some((p) => p.startsWith("[")) ? "ipv6:" : "ipv4:") + parts.join(",");
}

/** The credentials `options` ask for: given ones, TLS from PEM files, or plaintext. */
export function channelCredentials(options: ClientOptions): grpc.ChannelCredentials {
  if (options.credentials !== undefined) return options.credentials;
  if (options.tlsCaFile === undefined) {
    if (options.tlsCertFile !== undefined || options.tlsKeyFile !== undefined) {
      throw new UtilitydError(grpc.status.INVALID_ARGUMENT, "tlsCertFile and tlsKeyFile need tlsCaFile (the CA that signed the server)");
    }
    return grpc.credentials.createInsecure();
  }
  if ((options.tlsCertFile === undefined) !== (options.tlsKeyFile === undefined)) {
    throw new UtilitydError(grpc.status.INVALID_ARGUMENT, "tlsCertFile and tlsKeyFile go together (mutual TLS)");
  }
  const read = (what: string, path: string) => {
    try {
      return readFileSync(path);
    } catch (e) {
      throw new UtilitydError(grpc.status.NOT_FOUND, `${what}: cannot read ${path}: ${(e as Error).message}`);
    }
  };
  return grpc.credentials.createSsl(
    read("tlsCaFile", options.tlsCaFile),
    options.tlsKeyFile === undefined ? null : read("tlsKeyFile", options.tlsKeyFile),
    options.tlsCertFile === undefined ? null : read("tlsCertFile", options.tlsCertFile),
  );
}

function callError(e: grpc.ServiceError): UtilitydError {
  return new UtilitydError(e.code ?? grpc.status.UNKNOWN, e.details || e.message);
}

/** A request ready to send: its agents as full messages, which the SDK packed. */
interface Prepared {
  input: DecideInput;
  /** agents[i] was packed by the SDK (so a stale revision can be repaired). */
  packed: boolean[];
  /** The agents as given, for re-packing. */
  original: AgentSnapshot[];
}

/** A connection to utilityd (one channel; replicas balanced). */
export class UtilitydClient {
  /** The grpc-js client underneath (for its channel's state). */
  readonly grpc: grpc.Client;
  private readonly options: Required<Pick<ClientOptions, "deadlineMs" | "packNamedFactors">> & ClientOptions;
  private readonly schemas = new Map<string, Promise<SetSchema>>();

  private constructor(options: ClientOptions) {
    this.options = { deadlineMs: 2000, packNamedFactors: true, ...options };
    const policy = options.loadBalancingPolicy ?? "round_robin";
    const channel: grpc.ChannelOptions = {
      "grpc.service_config": JSON.stringify(serviceConfig(policy, options.maxAttempts ?? 4)),
      "grpc.keepalive_time_ms": options.keepaliveTimeMs ?? 20000,
      "grpc.keepalive_timeout_ms": options.keepaliveTimeoutMs ?? 10000,
      "grpc.max_receive_message_length": 64 << 20,
      ...(options.tlsServerName !== undefined ? { "grpc.ssl_target_name_override": options.tlsServerName } : {}),
      ...options.channelOptions,
    };
    if ((options.keepaliveTimeMs ?? 20000) === 0) delete channel["grpc.keepalive_time_ms"];
    this.grpc = new grpc.Client(resolveTarget(options.target), channelCredentials(options), channel);
  }

  /**
   * Creates the channel. Does not wait for a connection (see
   * {@link waitForReady}); throws {@link UtilitydError} for a malformed
   * target or unreadable TLS files.
   */
  static connect(options: ClientOptions): UtilitydClient {
    return new UtilitydClient(options);
  }

  /** Resolves once a replica is connected; rejects (DEADLINE_EXCEEDED) after `timeoutMs`. */
  waitForReady(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) =>
      this.grpc.waitForReady(Date.now() + timeoutMs, (e) =>
        e ? reject(new UtilitydError(grpc.status.DEADLINE_EXCEEDED, `no replica ready within ${timeoutMs} ms: ${e.message}`)) : resolve(),
      ),
    );
  }

  /** Closes the channel; calls in flight fail with CANCELLED. */
  close(): void {
    this.grpc.close();
  }

  /**
   * Decides one batch with the unary deadline. Named factors are packed in
   * each set's order first; agents refused for a stale revision that the
   * SDK packed are re-packed with the set's new schema and asked again.
   * Rejects with {@link UtilitydError} when the call fails as a whole; one
   * agent's error is in its decision.
   */
  async decide(input: DecideInput, options: CallOptions = {}): Promise<Answer> {
    const prepared = await this.prepare(input);
    const answer = await this.unary(SERVICE + "Decide", encodeRequest(prepared.input), decodeResponse, options);
    if (answer.error !== undefined) throw UtilitydError.fromMessage(answer.error);
    await this.repairStale(prepared, answer);
    return answer;
  }

  /** The loaded sets, with revisions and factor order. */
  listBehaviourSets(options: CallOptions = {}): Promise<ListBehaviourSetsResponse> {
    return this.unary(
      SERVICE + "ListBehaviourSets",
      ListBehaviourSetsRequest.encode({}).finish(),
      (b) => ListBehaviourSetsResponse.decode(b),
      options,
    );
  }

  /** One set's summary and full definition; NOT_FOUND when no set has that name. */
  getBehaviourSet(name: string, options: CallOptions = {}): Promise<GetBehaviourSetResponse> {
    return this.unary(
      SERVICE + "GetBehaviourSet",
      GetBehaviourSetRequest.encode({ name }).finish(),
      (b) => GetBehaviourSetResponse.decode(b),
      options,
    );
  }

  /** The cached schema of a set, fetched on first use (callers at once share one fetch). */
  schema(set: string): Promise<SetSchema> {
    let s = this.schemas.get(set);
    if (s === undefined) {
      s = this.getBehaviourSet(set).then((r) => new SetSchema(r.summary!));
      s.catch(() => this.schemas.delete(set));
      this.schemas.set(set, s);
    }
    return s;
  }

  /** Drops the cached schema of a set; the next use fetches it. */
  invalidateSchema(set: string): void {
    this.schemas.delete(set);
  }

  /** Opens a stream; the connection is made lazily, on the first batch. */
  openStream(options: StreamOptions = {}): DecisionStream {
    return new DecisionStream(this, options);
  }

  /** @internal Sends an encoded request as a unary call. */
  unary<T>(method: string, request: Uint8Array, decode: (b: Buffer) => T, options: CallOptions): Promise<T> {
    const metadata = new grpc.Metadata(options.waitForReady ? { waitForReady: true } : undefined);
    const deadline = Date.now() + (options.deadlineMs ?? this.options.deadlineMs);
    return new Promise((resolve, reject) => {
      this.grpc.makeUnaryRequest(method, toBuffer, decode, request, metadata, { deadline }, (e, r) =>
        e ? reject(callError(e)) : resolve(r!),
      );
    });
  }

  /**
   * @internal The request with its agents as full messages, those with
   * named factors packed (when their set is known); an agent that does not
   * pack is sent as it is, for the service to refuse with its reason.
   */
  async prepare(input: DecideInput): Promise<Prepared> {
    const original = (input.agents ?? []).map((a) => AgentSnapshot.fromPartial(a ?? {}));
    // Agents sent as they are share their message with `original`; only
    // those packed get a copy of their own.
    const agents = original.slice();
    const packed = agents.map(() => false);
    if (this.options.packNamedFactors) {
      await Promise.all(
        original.map(async (a, i) => {
          if (Object.keys(a.namedFactors).length === 0 && !a.targets.some((t) => Object.keys(t.namedFactors).length > 0)) return;
          if (a.expectedRevision !== "" || a.behaviourSet === "") return;
          let schema: SetSchema;
          try {
            schema = await this.schema(a.behaviourSet);
          } catch {
            return; // an unknown set: the service says so
          }
          const copy = AgentSnapshot.fromPartial(a);
          try {
            packed[i] = schema.pack(copy);
          } catch (e) {
            if (!(e instanceof PackError)) throw e;
          }
          if (packed[i]) agents[i] = copy;
        }),
      );
    }
    return { input: { ...input, agents }, packed, original };
  }

  /**
   * @internal Re-packs and re-decides the agents the service refused for a
   * stale revision that the SDK had packed, merging their answers in.
   */
  async repairStale(prepared: Prepared, answer: Answer): Promise<void> {
    const stale: number[] = [];
    const slots: Array<(d: Decision) => void> = [];
    answer.decisions.forEach((d, i) => {
      if (prepared.packed[i] && isStaleRevision(d)) {
        stale.push(i);
        slots.push((x) => (answer.decisions[i] = x));
      }
    });
    for (const x of answer.compact?.full ?? []) {
      if (prepared.packed[x.agent] && x.decision !== undefined && isStaleRevision(x.decision)) {
        stale.push(x.agent);
        slots.push((d) => (x.decision = d));
      }
    }
    if (stale.length === 0) return;
    for (const i of stale) this.invalidateSchema(prepared.original[i].behaviourSet);
    const retry = await this.prepare({
      requestId: prepared.input.requestId,
      explain: prepared.input.explain,
      agents: stale.map((i) => prepared.original[i]),
    });
    let again: Answer;
    try {
      again = await this.unary(SERVICE + "Decide", encodeRequest(retry.input), decodeResponse, {});
    } catch {
      return; // keep the refusals
    }
    if (again.decisions.length !== stale.length) return;
    again.decisions.forEach((d, k) => slots[k](d));
  }
}

interface Pending {
  bytes: Uint8Array;
  prepared: Prepared;
  written: boolean;
  resolve: (a: Answer) => void;
  reject: (e: UtilitydError) => void;
}

/**
 * A long-lived DecideStream. submit() sends a batch and resolves with its
 * answer; at most `maxInFlight` batches are unanswered (submit waits for
 * room). When the stream breaks (a replica killed, a network cut), the
 * batches without an answer are sent again on a new stream, to whichever
 * replica answers, so every submitted batch settles exactly once.
 */
export class DecisionStream {
  private readonly maxInFlight: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private backoffMs: number;
  private readonly pending = new Map<bigint, Pending>();
  private readonly waiting: Array<() => void> = [];
  private nextId = 1n;
  private call: grpc.ClientDuplexStream<Uint8Array, Answer> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closing = false;
  private stopped = false;
  private reconnectCount = 0;
  private drained: Array<() => void> = [];

  /** @internal use UtilitydClient.openStream */
  constructor(
    private readonly client: UtilitydClient,
    options: StreamOptions,
  ) {
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 2);
    this.initialBackoffMs = options.initialBackoffMs ?? 50;
    this.maxBackoffMs = options.maxBackoffMs ?? 2000;
    this.backoffMs = this.initialBackoffMs;
  }

  /** Times the stream was re-established after breaking. */
  get reconnects(): number {
    return this.reconnectCount;
  }

  /** Batches submitted and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends a batch; resolves with its answer, or rejects with
   * {@link UtilitydError} (the service refused the batch, or the stream was
   * closed before it was answered). Assigns `requestId` when it is 0 or
   * unset (ids must be unique per stream).
   */
  async submit(input: DecideInput): Promise<Answer> {
    while (!this.closing && this.pending.size >= this.maxInFlight) {
      await new Promise<void>((wake) => this.waiting.push(wake));
    }
    if (this.closing) throw new UtilitydError(grpc.status.FAILED_PRECONDITION, "stream is closed");
    // Room is taken before packing (which may wait for a schema).
    let id = BigInt(input.requestId ?? 0);
    if (id === 0n) id = this.nextId;
    if (id >= this.nextId) this.nextId = id + 1n;
    const slot: Pending = { bytes: new Uint8Array(), prepared: undefined!, written: false, resolve: () => {}, reject: () => {} };
    this.pending.set(id, slot);
    const answer = new Promise<Answer>((resolve, reject) => {
      slot.resolve = resolve;
      slot.reject = reject;
    });
    try {
      slot.prepared = await this.client.prepare({ ...input, requestId: id });
      slot.bytes = encodeRequest(slot.prepared.input);
    } catch (e) {
      this.settle(id);
      throw e;
    }
    if (this.pending.get(id) === slot) {
      this.open();
      this.writeUnsent();
    }
    return answer;
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
    if (this.timer !== undefined) clearTimeout(this.timer);
    const call = this.call;
    this.call = undefined;
    call?.end();
    call?.cancel();
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(new UtilitydError(grpc.status.UNAVAILABLE, "stream closed before the batch was answered"));
    }
  }

  private open(): void {
    if (this.call !== undefined || this.timer !== undefined || this.stopped) return;
    for (const p of this.pending.values()) p.written = false; // resend on this stream
    const call = this.client.grpc.makeBidiStreamRequest<Uint8Array, Answer>(
      SERVICE + "DecideStream",
      toBuffer,
      decodeResponse,
      new grpc.Metadata({ waitForReady: true }),
    );
    this.call = call;
    call.on("data", (a: Answer) => this.deliver(a));
    call.on("error", () => {}); // the status below says it ended
    call.on("status", () => this.broken(call));
  }

  private writeUnsent(): void {
    const call = this.call;
    if (call === undefined) return;
    const ids = [...this.pending.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const id of ids) {
      const p = this.pending.get(id)!;
      if (p.written || p.bytes.length === 0) continue;
      p.written = true;
      call.write(p.bytes);
    }
  }

  private deliver(answer: Answer): void {
    const p = this.pending.get(answer.requestId);
    if (p === undefined) return; // an answer already delivered
    this.backoffMs = this.initialBackoffMs;
    this.settle(answer.requestId);
    if (answer.error !== undefined) {
      p.reject(UtilitydError.fromMessage(answer.error));
      return;
    }
    this.client.repairStale(p.prepared, answer).then(
      () => p.resolve(answer),
      () => p.resolve(answer),
    );
  }

  /** Frees batch `id`'s slot: wakes a waiting submit, and close() when none is left. */
  private settle(id: bigint): void {
    this.pending.delete(id);
    this.waiting.shift()?.();
    if (this.pending.size === 0) for (const done of this.drained.splice(0)) done();
  }

  private broken(call: grpc.ClientDuplexStream<Uint8Array, Answer>): void {
    if (call !== this.call) return;
    this.call = undefined;
    if (this.stopped || (this.closing && this.pending.size === 0)) return;
    ++this.reconnectCount;
    if (this.pending.size === 0) return; // reopened by the next submit
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.open();
      this.writeUnsent();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.maxBackoffMs);
  }
}

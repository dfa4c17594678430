/**
 * The client: the replicas behind a target (one channel each), unary
 * `decide` and {@link DecisionStream}, both by the client contract
 * (docs/CLIENTS.md): an attempt deadline per batch (half the AI tick by
 * default) after which the batch is raced on another replica, replicas
 * that miss it ejected until a health probe answers, retries that honour
 * the server's pushback within a retry budget.
 *
 * ```ts
 * const client = UtilitydClient.connect({ target: "10.0.0.5:50051,10.0.0.6:50051", aiTickMs: 100 });
 * const answer = await client.decide({
 *   agents: [{ agentId: "forager-1", behaviourSet: "eat_hide_wander",
 *              namedFactors: { hunger: 0.8, danger: 0.1, food_distance: 4, idle_time: 2 } }],
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
import { callHedged, DecisionStream, type StreamOptions } from "./calls.js";
import { checkFields } from "./check.js";
import { isStaleRevision, UtilitydError } from "./errors.js";
import { ReplicaPool, type ReplicaState } from "./replicas.js";
import { PackError, SetSchema } from "./schema.js";

/** How to reach the service. */
export interface ClientOptions {
  /**
   * Where the replicas are: "host:port"; a comma-separated list of
   * "host:port" (IP addresses or names); or "dns:///name:port". Names are
   * looked up by the SDK, every address is a replica, and they are looked
   * up again every `resolveIntervalMs` (a Kubernetes headless Service).
   * Other gRPC schemes (unix:...) are one replica.
   */
  target: string;
  /** The game's AI tick, ms: the attempt deadline is half of it unless `batchDeadlineMs` is set. Default 100. */
  aiTickMs?: number;
  /**
   * How long one attempt of a batch may go unanswered before the batch is
   * sent again to another replica (the first answer wins) and the replica
   * that missed it is ejected until a health probe answers, ms. Default
   * `aiTickMs / 2`.
   */
  batchDeadlineMs?: number;
  /** How long a batch may take in all, attempts included (unary calls and streamed batches), ms. Default 2000. */
  deadlineMs?: number;
  /**
   * Attempts of one batch in all: hedges after a missed attempt deadline,
   * retries after a refusal for overload (with a retry hint) or from a
   * replica down or draining, each on another replica when there is one.
   * 1 disables. Default 3.
   */
  maxAttempts?: number;
  /**
   * Retries and hedges together stay within this share of first attempts
   * (after `retryBudgetReserve` for bursts): when the whole fleet is slow
   * or shedding, the SDK stops retrying instead of multiplying its load.
   * Defaults 0.2 and 10.
   */
  retryBudgetRatio?: number;
  retryBudgetReserve?: number;
  /** How often host names in the target are looked up again, ms. Default 5000. */
  resolveIntervalMs?: number;
  /**
   * Keepalive pings on idle connections, ms; 0 disables. Default 20000:
   * keep it at or above the server's --min_client_ping_interval (10 s).
   * Keepalive finds dead connections; frozen replicas are found by the
   * attempt deadline.
   */
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
  /** Further channel options for every replica's channel, passed to grpc-js as they are. */
  channelOptions?: grpc.ChannelOptions;
}

/** Per call. */
export interface CallOptions {
  /** Overrides ClientOptions.deadlineMs. */
  deadlineMs?: number;
}

const SERVICE = "/utilityd.v1.DecisionService/";

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

/** A request ready to send: its agents as full messages, which the SDK packed. */
interface Prepared {
  input: DecideInput;
  /** agents[i] was packed by the SDK (so a stale revision can be repaired). */
  packed: boolean[];
  /** The agents as given, for re-packing. */
  original: AgentSnapshot[];
}

/** A connection to utilityd: the replicas of its target. */
export class UtilitydClient {
  private readonly options: ClientOptions & { deadlineMs: number; packNamedFactors: boolean };
  private readonly pool: ReplicaPool;
  private readonly schemas = new Map<string, Promise<SetSchema>>();

  private constructor(options: ClientOptions) {
    this.options = { deadlineMs: 2000, packNamedFactors: true, ...options };
    const keepalive = options.keepaliveTimeMs ?? 20000;
    this.pool = new ReplicaPool({
      target: options.target,
      aiTickMs: options.aiTickMs ?? 100,
      batchDeadlineMs: options.batchDeadlineMs ?? 0,
      deadlineMs: this.options.deadlineMs,
      maxAttempts: Math.max(1, options.maxAttempts ?? 3),
      retryBudgetRatio: options.retryBudgetRatio ?? 0.2,
      retryBudgetReserve: options.retryBudgetReserve ?? 10,
      resolveIntervalMs: options.resolveIntervalMs ?? 5000,
      credentials: channelCredentials(options),
      tlsServerName: options.tlsServerName,
      channelOptions: {
        ...(keepalive > 0 ? { "grpc.keepalive_time_ms": keepalive } : {}),
        "grpc.keepalive_timeout_ms": options.keepaliveTimeoutMs ?? 10000,
        "grpc.max_receive_message_length": 64 << 20,
        ...options.channelOptions,
      },
    });
  }

  /**
   * Makes a channel per replica of the target. Does not wait for a
   * connection (see {@link waitForReady}); throws {@link UtilitydError}
   * (INVALID_ARGUMENT) for a malformed target, NOT_FOUND for unreadable
   * TLS files.
   */
  static connect(options: ClientOptions): UtilitydClient {
    return new UtilitydClient(options);
  }

  /**
   * Resolves once some replica answers a health check SERVING; rejects
   * with {@link UtilitydError} (UNAVAILABLE, saying what each replica
   * answered) after `timeoutMs`. Keep it within a game framework's own
   * join or create timeout (a second, say): calls made before a replica
   * is ready wait for one within their deadline anyway.
   */
  waitForReady(timeoutMs: number): Promise<void> {
    return this.pool.waitForReady(timeoutMs);
  }

  /** The replicas now, with their state. */
  replicas(): ReplicaState[] {
    return this.pool.states();
  }

  /** Closes every channel; calls in flight fail with CANCELLED. */
  close(): void {
    this.pool.close();
  }

  /**
   * Decides one batch by the contract (attempt deadline, hedge, retries).
   * Named factors are packed in each set's order first; agents refused for
   * a stale revision that the SDK packed are re-packed with the set's new
   * schema and asked again. Rejects with {@link UtilitydError} when the
   * call fails as a whole or `input` has a field its message lacks; one
   * agent's error is in its decision. `answer.info` says how it went.
   */
  async decide(input: DecideInput, options: CallOptions = {}): Promise<Answer> {
    const prepared = await this.prepare(input);
    const { value: answer, info } = await this.call("Decide", encodeRequest(prepared.input), decodeResponse, options);
    if (answer.error !== undefined) throw UtilitydError.fromMessage(answer.error);
    await this.repairStale(prepared, answer);
    answer.info = info;
    return answer;
  }

  /** The loaded sets, with revisions and factor order. */
  async listBehaviourSets(options: CallOptions = {}): Promise<ListBehaviourSetsResponse> {
    const r = await this.call("ListBehaviourSets", ListBehaviourSetsRequest.encode({}).finish(), (b) => ListBehaviourSetsResponse.decode(b), options);
    return r.value;
  }

  /** One set's summary and full definition; NOT_FOUND when no set has that name. */
  async getBehaviourSet(name: string, options: CallOptions = {}): Promise<GetBehaviourSetResponse> {
    const r = await this.call("GetBehaviourSet", GetBehaviourSetRequest.encode({ name }).finish(), (b) => GetBehaviourSetResponse.decode(b), options);
    return r.value;
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

  /** Opens a stream over the replicas; each replica's stream opens when first used. */
  openStream(options: StreamOptions = {}): DecisionStream {
    return new DecisionStream(
      {
        pool: this.pool,
        deadlineMs: this.options.deadlineMs,
        prepare: async (input) => {
          const prepared = await this.prepare(input);
          return { bytes: encodeRequest(prepared.input), repair: (a) => this.repairStale(prepared, a) };
        },
      },
      options,
    );
  }

  private call<T>(method: string, request: Uint8Array, decode: (b: Buffer) => T, options: CallOptions) {
    return callHedged(this.pool, SERVICE + method, request, decode, options.deadlineMs ?? this.options.deadlineMs);
  }

  /**
   * The request with its agents as full messages, those with named factors
   * packed (when their set is known); an agent that does not pack is sent
   * as it is, for the service to refuse with its reason. Throws
   * {@link UtilitydError} for a field its message lacks.
   */
  private async prepare(input: DecideInput): Promise<Prepared> {
    checkFields(input);
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
   * Re-packs and re-decides the agents the service refused for a stale
   * revision that the SDK had packed, merging their answers in.
   */
  private async repairStale(prepared: Prepared, answer: Answer): Promise<void> {
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
      again = (await this.call("Decide", encodeRequest(retry.input), decodeResponse, {})).value;
    } catch {
      return; // keep the refusals
    }
    if (again.decisions.length !== stale.length) return;
    again.decisions.forEach((d, k) => slots[k](d));
  }
}

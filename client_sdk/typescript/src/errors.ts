/**
 * Errors: a whole call that failed (transport, deadline, a refused batch)
 * is a {@link UtilitydError} with its gRPC status code; one agent's or one
 * row's failure is an `Error` message in its decision, with an
 * {@link ErrorReason} to act on.
 * @module
 */
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { Decision, Error as ErrorMessage } from "./gen/utilityd/v1/decision_service.js";
import { ErrorReason } from "./gen/utilityd/v1/decision_service.js";

export { ErrorReason, GrpcStatus };

/** A call that failed as a whole. */
export class UtilitydError extends Error {
  /** The gRPC status code (`GrpcStatus.UNAVAILABLE`, ...). */
  readonly code: number;
  /** Why, when the service said (a refused batch); otherwise unspecified. */
  readonly reason: ErrorReason;
  /** The field the service named, when it did. */
  readonly field: string;
  /** For a batch (decide, a stream's submit): the attempts it took, and the replica whose answer this is (empty when none answered). */
  info?: { attempts: number; replica: string };

  constructor(code: number, message: string, reason = ErrorReason.ERROR_REASON_UNSPECIFIED, field = "") {
    super(message);
    this.name = "UtilitydError";
    this.code = code;
    this.reason = reason;
    this.field = field;
  }

  /** From an `Error` message of the service (a refused batch or block). */
  static fromMessage(e: ErrorMessage): UtilitydError {
    return new UtilitydError(e.code, e.message, e.reason, e.field);
  }
}

/** The reason `d` failed, or undefined when it did not. */
export function errorReasonOf(d: Decision): ErrorReason | undefined {
  return d.error === undefined ? undefined : d.error.reason;
}

/** True when `d` was refused because its set changed revision. */
export function isStaleRevision(d: Decision): boolean {
  return d.error?.reason === ErrorReason.ERROR_REASON_STALE_REVISION;
}

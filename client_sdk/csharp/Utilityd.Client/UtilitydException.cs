using System;
using Grpc.Core;
using Utilityd.V1;

namespace Utilityd.Client
{
    /// <summary>
    /// A call, a batch or an agent that failed: the gRPC status code, the
    /// service's <see cref="ErrorReason"/> when it gave one (programs match
    /// on it and on <see cref="Field"/>, never on the message), the request
    /// field at fault, and the attempts the batch took.
    /// </summary>
    public sealed class UtilitydException : Exception
    {
        /// <summary>Makes one.</summary>
        public UtilitydException(StatusCode code, string message, ErrorReason reason = ErrorReason.Unspecified,
                                 string field = "", Exception? inner = null)
            : base(message, inner)
        {
            Code = code;
            Reason = reason;
            Field = field;
        }

        /// <summary>The canonical status code.</summary>
        public StatusCode Code { get; }

        /// <summary>Why, for programs (Unspecified when nothing more
        /// specific than the code applies).</summary>
        public ErrorReason Reason { get; }

        /// <summary>The request field at fault, e.g. agents[3].factors ("" when
        /// the error is not about one field).</summary>
        public string Field { get; }

        /// <summary>Attempts the batch made before failing (0 for a local
        /// error).</summary>
        public int Attempts { get; internal set; }

        /// <summary>The replica that gave this answer ("" when none did).</summary>
        public string Replica { get; internal set; } = "";

        /// <summary>The replica (or every replica tried) shed the batch for
        /// overload.</summary>
        public bool IsOverloaded => Reason == ErrorReason.Overloaded;

        /// <summary>The set changed since its factors were packed (the SDK
        /// repairs the agents it packed itself; this reaches the caller for
        /// its own).</summary>
        public bool IsStaleRevision => Reason == ErrorReason.StaleRevision;

        /// <inheritdoc/>
        public override string ToString() => $"{Code}: {Message}";

        /// <summary>The exception for a service Error message.</summary>
        public static UtilitydException FromError(Error e) =>
            new UtilitydException((StatusCode)(int)e.Code, e.Message, e.Reason, e.Field);

        internal static UtilitydException FromRpc(RpcException e) =>
            new UtilitydException(e.StatusCode, e.Status.Detail, ErrorReason.Unspecified, "", e);
    }
}

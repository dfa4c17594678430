package utilityd

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// Error is what the SDK returns when a call, a batch or an agent fails: the
// gRPC code, the service's reason when it gave one, the request field it
// names, and the message. Match it with errors.Is against the sentinels
// below (ErrOverloaded, ErrStaleRevision, ...) or errors.As for the fields.
type Error struct {
	Code    codes.Code
	Reason  pb.ErrorReason
	Field   string // the request field at fault, when the service names one
	Message string
	// Attempts the batch took before failing (0 for a local error).
	Attempts int
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// GRPCStatus lets status.FromError and status.Code see the code.
func (e *Error) GRPCStatus() *status.Status { return status.New(e.Code, e.Message) }

// Is matches a sentinel: by reason when the sentinel has one, else by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Message != "" {
		return false
	}
	if t.Reason != pb.ErrorReason_ERROR_REASON_UNSPECIFIED {
		return e.Reason == t.Reason
	}
	return e.Code == t.Code
}

// Sentinels for errors.Is.
var (
	// The replica (or every replica tried) shed the batch for overload.
	ErrOverloaded = &Error{Reason: pb.ErrorReason_ERROR_REASON_OVERLOADED}
	// The set changed since its factors were packed (the SDK repairs the
	// agents it packed itself; this reaches the caller for its own).
	ErrStaleRevision = &Error{Reason: pb.ErrorReason_ERROR_REASON_STALE_REVISION}
	// No set of that name is served.
	ErrUnknownSet = &Error{Reason: pb.ErrorReason_ERROR_REASON_UNKNOWN_SET}
	// No replica could be reached.
	ErrUnavailable = &Error{Code: codes.Unavailable}
	// The batch's deadline passed first.
	ErrDeadlineExceeded = &Error{Code: codes.DeadlineExceeded}
	// The request itself is wrong (a field the message names).
	ErrInvalidArgument = &Error{Code: codes.InvalidArgument}
)

// errorOf turns a service Error message into an *Error.
func errorOf(e *pb.Error) *Error {
	return &Error{Code: codes.Code(uint32(e.GetCode())), Reason: e.GetReason(),
		Field: e.GetField(), Message: e.GetMessage()}
}

// fromRPC turns a gRPC error into an *Error (nil stays nil).
func fromRPC(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	s, _ := status.FromError(err)
	return &Error{Code: s.Code(), Message: s.Message()}
}

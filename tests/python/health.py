"""grpc.health.v1.Health/Check for the Python tests, called without
generated stubs (a generated grpc.health package would clash with grpcio's
own `grpc` package): an empty request; the response's field 1 (varint) is
the status, SERVING = 1."""
import time

import grpc

SERVING = b"\x08\x01"


def health_check(channel):
    """A callable: check(b"", timeout=...) returns the raw response."""
    return channel.unary_unary("/grpc.health.v1.Health/Check",
                               request_serializer=lambda b: b,
                               response_deserializer=lambda b: b)


def wait_serving(channel, deadline):
    """Polls until SERVING; RuntimeError once time.time() passes deadline."""
    check = health_check(channel)
    while True:
        try:
            if check(b"", timeout=2) == SERVING:
                return check
        except grpc.RpcError:
            pass
        if time.time() > deadline:
            raise RuntimeError("utilityd never became SERVING")
        time.sleep(0.02)
